// Package cputime reads this process's CPU time, for the benchmarks that
// report CPU per operation beside wall time: a figure that holds under the
// load other work puts on the machine.
package cputime
