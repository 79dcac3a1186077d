module github.com/bkcheck/bkcheck

go 1.26.8

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/google/go-cmp v0.7.0
	golang.org/x/sync v0.25.0
)
