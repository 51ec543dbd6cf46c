package neo4j

import "hash/fnv"

// catalogueStripes is the number of CatalogueStripe nodes the catalogue's
// write lock is made of (catalogue_lock.cypher takes them all): a new
// procedure classified from the catalogue the store holds takes one,
// catalogueStripe of its name (capture.cypher), so two such captures wait
// for each other only when their names share a stripe: with 16 clients at
// once, one in 32 pairs (docs/adr/0036).
const catalogueStripes = 32

// catalogueStripe is the stripe of the catalogue lock that a new procedure
// named name takes (capture.cypher's $stripe).
func catalogueStripe(name string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % catalogueStripes)
}
