//go:build !unix

package mcpserve

import "time"

// processCPU is zero where getrusage is not there.
func processCPU() time.Duration { return 0 }
