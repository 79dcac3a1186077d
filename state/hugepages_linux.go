package state

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on linux/amd64 and
// linux/arm64 with 4 KiB base pages.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned part of a slot
// array with transparent huge pages (madvise(MADV_HUGEPAGE)). A probe of
// a table of gigabytes misses the TLB as well as the caches; with 4 KiB
// pages the page walk costs about a third of the probe on this project's
// machines (docs/performance.md). The Go runtime does not ask for huge
// pages itself, and most distributions enable them only where asked
// ("madvise" in /sys/kernel/mm/transparent_hugepage/enabled). Called on
// a fresh array before it is written; where the kernel refuses, nothing
// changes but the speed.
func adviseHuge(s []uint64) {
	if len(s)*8 < 2*hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(len(s))*8) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
	_ = syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
}
