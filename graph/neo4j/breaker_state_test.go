package neo4jstore

// isOpen reports whether calls are being refused (for the tests: the
// store itself only asks through allow).
func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}
