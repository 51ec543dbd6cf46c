module github.com/procgraph/procgraph/bench/cachelib

go 1.26.0

require (
	github.com/Yiling-J/theine-go v0.6.3
	github.com/hashicorp/golang-lru/v2 v2.0.7
)

require (
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/sys v0.8.0 // indirect
)
