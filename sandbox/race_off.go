//go:build !race

package sandbox

// raceShadow is the extra address space per byte of heap a -race build
// needs for the race detector's shadow memory: none here.
const raceShadow = 0
