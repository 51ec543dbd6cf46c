package sandbox

import "time"

// Limits bound one run. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	MaxSteps  uint64        // Starlark execution steps; default 10,000,000
	Timeout   time.Duration // wall clock, tool calls included; default 30s
	MaxCalls  int           // tool calls; default 100
	MaxOutput int           // bytes of print output kept; default 64 KiB (the rest is dropped, see OutputTruncated)
	MaxResult int           // bytes of the JSON-encoded result; default 1 MiB
	MaxMemory int64         // bytes per worker process; default 256 MiB (enforced by the Pool only)
}

// Default limit values.
const (
	DefaultMaxSteps  = 10_000_000
	DefaultTimeout   = 30 * time.Second
	DefaultMaxCalls  = 100
	DefaultMaxOutput = 64 << 10
	DefaultMaxResult = 1 << 20
	DefaultMaxMemory = 256 << 20
)

// OutputTruncated is appended to Result.Output when print output went over
// Limits.MaxOutput. Truncation is not an error: the run goes on and the
// output keeps its first MaxOutput bytes (cut on a UTF-8 boundary).
const OutputTruncated = "\n[output truncated]\n"

// DefaultLimits returns the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		MaxSteps:  DefaultMaxSteps,
		Timeout:   DefaultTimeout,
		MaxCalls:  DefaultMaxCalls,
		MaxOutput: DefaultMaxOutput,
		MaxResult: DefaultMaxResult,
		MaxMemory: DefaultMaxMemory,
	}
}

// withDefaults returns l with every zero (or negative) field replaced by its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = d.MaxCalls
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.MaxResult <= 0 {
		l.MaxResult = d.MaxResult
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = d.MaxMemory
	}
	return l
}
