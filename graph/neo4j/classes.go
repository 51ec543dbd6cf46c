package neo4j

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

// txClasses reads what procedures.Reclassify needs inside a transaction.
type txClasses struct {
	ctx context.Context
	tx  neo4j.ManagedTransaction
}

func (r txClasses) Catalogue() (*procedures.Catalogue, error) { return catalogueIn(r.ctx, r.tx) }

func (r txClasses) Procedures(names []string) (map[string]procedures.Nested, error) {
	recs, err := collect(r.ctx, r.tx, "signatures", map[string]any{"names": stringList(names)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]procedures.Nested, len(recs))
	for _, rec := range recs {
		rw := &row{m: map[string]any{"name": field(rec, "name"), "signature": field(rec, "signature"), "retired": field(rec, "retired")}}
		name, sig, retired := rw.str("name"), rw.strings("signature"), rw.bool("retired")
		if rw.err != nil {
			return nil, rw.err
		}
		out[name] = procedures.Nested{Signature: sig, Retired: retired}
	}
	return out, nil
}

func (r txClasses) Callers(names []string) ([]string, error) {
	recs, err := collect(r.ctx, r.tx, "callers", map[string]any{"names": stringList(names)})
	if err != nil {
		return nil, err
	}
	out := recordNames(recs)
	return out, nil
}

// reclassify keeps on the procedures among names the classification
// procedures.Reclassify computes, and their class counts
// (classify_set.cypher). The caller holds the catalogue lock
// (catalogue_lock.cypher, every stripe): new procedures and catalogue
// changes, the two things a classification depends on, are then applied
// one at a time.
func reclassify(ctx context.Context, tx neo4j.ManagedTransaction, names []string) error {
	return reclassifyWith(ctx, tx, txClasses{ctx, tx}, names)
}

// reclassifyWith is reclassify reading through r.
func reclassifyWith(ctx context.Context, tx neo4j.ManagedTransaction, r procedures.ClassReader, names []string) error {
	return classifyWith(ctx, tx, r, names, "classify_set")
}

// classifyWith is reclassifyWith keeping the classifications with stmt
// (classify_set.cypher, or classify_load.cypher for procedures never
// classified).
func classifyWith(ctx context.Context, tx neo4j.ManagedTransaction, r procedures.ClassReader, names []string, stmt string) error {
	cs, err := procedures.Reclassify(r, names)
	if err != nil || len(cs) == 0 {
		return err
	}
	rows := make([]map[string]any, 0, len(cs))
	for _, name := range slices.Sorted(maps.Keys(cs)) { // one lock order
		c := cs[name]
		rows = append(rows, map[string]any{"name": name, "read_only": c.ReadOnly, "problem": c.Problem})
	}
	return exec(ctx, tx, stmt, map[string]any{"rows": rows})
}

// lockCatalogue takes the catalogue's write lock for the rest of tx.
func lockCatalogue(ctx context.Context, tx neo4j.ManagedTransaction) error {
	return lockCatalogueAt(ctx, tx, dbTime(time.Now()))
}

// lockCatalogueAt takes the catalogue's write lock for the rest of tx
// (catalogue_lock.cypher: the Catalogue node and every stripe), at at.
func lockCatalogueAt(ctx context.Context, tx neo4j.ManagedTransaction, at time.Time) error {
	return exec(ctx, tx, "catalogue_lock", map[string]any{"at": at, "stripes": catalogueStripes})
}

// classifyBatch is the number of procedures backfillClasses classifies per
// transaction.
const classifyBatch = 5_000

// backfillClasses classifies, classifyBatch at a time, the procedures that
// have no kept classification (unclassified.cypher): a database written
// before it was kept. On an up-to-date database it costs one scan.
func (s *Store) backfillClasses(ctx context.Context) error {
	for {
		n, err := writeTx(ctx, s, "classify", func(ctx context.Context, tx neo4j.ManagedTransaction) (int, error) {
			if err := lockCatalogue(ctx, tx); err != nil {
				return 0, err
			}
			recs, err := collect(ctx, tx, "unclassified", map[string]any{"batch": classifyBatch})
			if err != nil {
				return 0, err
			}
			names := recordNames(recs)
			return len(names), reclassify(ctx, tx, names)
		})
		if err != nil {
			return err
		}
		if n < classifyBatch {
			return nil
		}
	}
}

// toolsBatch is the number of procedures backfillTools counts per
// transaction (a variable for tests).
var toolsBatch = 10_000

// backfillTools counts, toolsBatch procedures per transaction
// (tools_backfill.cypher), the tools of the classified procedures that are
// not counted in their class (fragments/class_tools.cypher): a database
// written before the counts were kept. On an up-to-date database it costs
// one scan.
func (s *Store) backfillTools(ctx context.Context) error {
	return s.backfillBatches(ctx, "tools_backfill", toolsBatch)
}

// classCounts returns every class with its number of procedures, by the
// key procedures are counted under (classes.cypher).
func classCounts(ctx context.Context, tx neo4j.ManagedTransaction) (map[string]classCount, error) {
	recs, err := collect(ctx, tx, "classes", nil)
	if err != nil {
		return nil, err
	}
	return decodeClassCounts(recs)
}

// decodeClassCounts decodes the rows of classes.cypher by class key.
func decodeClassCounts(recs []*neo4j.Record) (map[string]classCount, error) {
	out := make(map[string]classCount, len(recs))
	for _, rec := range recs {
		r := &row{m: rec.AsMap()}
		c := classCount{class: r.class(), n: int(r.int("count"))}
		key := r.str("key")
		if r.err != nil {
			return nil, r.err
		}
		out[key] = c
	}
	return out, nil
}

// class decodes the class whose parts are r's columns named by their
// properties (procedures.ClassFields, as classes.cypher returns them).
func (r *row) class() procedures.Class {
	var c procedures.Class
	for _, f := range procedures.ClassFields {
		switch {
		case f.Status != nil:
			*f.Status(&c) = procedures.Status(r.str(f.Property))
		case f.Flag != nil:
			*f.Flag(&c) = r.bool(f.Property)
		default:
			*f.Count(&c) = int(r.int(f.Property))
		}
	}
	return c
}

// classCount is one class and its number of procedures.
type classCount struct {
	class procedures.Class
	n     int
}

// matchingClasses returns the keys of the classes q matches (sorted) and
// the number of procedures in them.
func matchingClasses(q *procedures.Query, counts map[string]classCount) ([]string, int) {
	keys := []string{}
	total := 0
	for key, c := range counts {
		if q.Match(c.class) {
			keys = append(keys, key)
			total += c.n
		}
	}
	slices.Sort(keys)
	return keys, total
}
