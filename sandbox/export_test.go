package sandbox

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
