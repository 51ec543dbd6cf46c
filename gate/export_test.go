package gate

import "time"

// What the external tests (package gate_test) reach inside the package.

// MaxRun is maxRun.
func (g *Gate) MaxRun() time.Duration { return g.maxRun() }

// PollOnce is pollOnce.
func (g *Gate) PollOnce() bool { return g.pollOnce() }

// SetPollEvery sets the poller's interval.
func (g *Gate) SetPollEvery(d time.Duration) { g.pollEvery = d }

// KeptBlocks is how many prepared blocks g keeps for its turns.
func (g *Gate) KeptBlocks() int { return g.blocks.Len() }
