// Package storewrap holds what the stores wrap around their backends and
// keep outside them: the read path's decode caches (DecodeCache, for the
// embedded store's bbolt records; JSONCache, for the Neo4j store's JSON
// properties), each entry found by the very bytes it was decoded from so it
// is never stale, bounded in bytes over internal/cache (an LRU) and built
// by each store for itself, and the circuit breaker (Breaker) the Neo4j store puts in
// front of its driver. It knows nothing of procedures or of either backend.
package storewrap
