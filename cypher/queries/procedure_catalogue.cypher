// One procedure by $name (the procedure fragment; found is empty when none
// has that name) and the catalogue unless the caller holds it
// (fragments/catalogue_since), in one statement: Store.GetWithCatalogue
// (procedures.CatalogueGetter), what a grant, a promote or a retirement
// reads before it writes.
#include catalogue_since
CALL {
  MATCH (p:Procedure {name: $name})
  RETURN collect(
#include procedure
  ) AS found
}
RETURN revision, same, tools, found;
