package sandbox

import "time"

// IdlePIDs returns the pids of the pool's idle workers, for tests.
func IdlePIDs(p *Pool) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, w := range p.idle {
		pids = append(pids, w.pid)
	}
	return pids
}

// SetHold sets the average time a slot is held, for tests of the
// expected wait.
func SetHold(a *Admission, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hold = d
}
