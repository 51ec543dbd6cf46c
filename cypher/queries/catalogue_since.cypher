// The stored catalogue unless the caller holds it (see
// fragments/catalogue_since.cypher).
#include catalogue_since
RETURN revision, same, tools;
