package neo4j

import (
	"context"
	"sort"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// Causes returns every cause with its number of procedures and the sum of
// its edge frequencies, by name.
func (s *Store) Causes(ctx context.Context) ([]procedures.Cause, error) {
	return readTx(ctx, s, "causes", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]procedures.Cause, error) {
		recs, err := collect(ctx, tx, "causes", nil)
		if err != nil {
			return nil, err
		}
		out := make([]procedures.Cause, 0, len(recs))
		for _, rec := range recs {
			r := &row{m: rec.AsMap()}
			out = append(out, procedures.Cause{
				Name:        r.str("name"),
				Description: r.str("description"),
				Procedures:  r.int("procedures"),
				Frequency:   r.int("frequency"),
			})
			if r.err != nil {
				return nil, r.err
			}
		}
		return out, nil
	})
}

// Cause returns one cause and its procedures, edge frequency desc then name.
func (s *Store) Cause(ctx context.Context, name string) (*procedures.Cause, []procedures.CauseProcedure, error) {
	type result struct {
		c  *procedures.Cause
		ps []procedures.CauseProcedure
	}
	res, err := readTx(ctx, s, "cause", func(ctx context.Context, tx neo4j.ManagedTransaction) (result, error) {
		recs, err := collect(ctx, tx, "cause", map[string]any{"name": name})
		if err != nil {
			return result{}, err
		}
		if len(recs) == 0 {
			return result{}, fault.Errorf(fault.CodeNotFound, "no cause named %q", name)
		}
		r := &row{m: recs[0].AsMap()}
		c := &procedures.Cause{Name: r.str("name"), Description: r.str("description")}
		var ps []procedures.CauseProcedure
		for _, v := range r.list("procedures") {
			pr := &row{m: asMap(v)}
			ps = append(ps, procedures.CauseProcedure{Name: pr.str("name"), Frequency: pr.int("frequency")})
			c.Procedures++
			c.Frequency += pr.int("frequency")
			if pr.err != nil {
				return result{}, pr.err
			}
		}
		sort.SliceStable(ps, func(i, j int) bool {
			if ps[i].Frequency != ps[j].Frequency {
				return ps[i].Frequency > ps[j].Frequency
			}
			return ps[i].Name < ps[j].Name
		})
		return result{c, ps}, r.err
	})
	return res.c, res.ps, err
}
