// The total of Find before SKIP and LIMIT when it filters on causes or
// tools: the filters of find_page.cypher. (Summary filters alone need no
// count: Find sums the counts of the matching classes.)
MATCH (p:Procedure)
WHERE
#include find_where
RETURN count(p) AS total;
