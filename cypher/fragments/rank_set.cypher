// Sets p.rank, the key Find orders by (fragments/rank_key.cypher: its
// string order is findorder.Compare). Every statement that sets
// frequency or last_used_at includes this after it.
SET p.rank =
#include rank_key
