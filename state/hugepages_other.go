//go:build !linux

package state

// adviseHuge does nothing where transparent huge pages are not asked for
// by madvise (hugepages_linux.go).
func adviseHuge([]uint64) {}
