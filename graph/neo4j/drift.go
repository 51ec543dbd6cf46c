package neo4j

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// baselineBatch is the number of versions backfillBaselines gives a
// baseline per transaction (a variable for tests).
var baselineBatch = 10_000

// backfillBaselines gives the catalogue's tools their contracts where they
// have none (contracts_backfill.cypher), then every version without a
// baseline the current ones (baselines_backfill.cypher, baselineBatch per
// transaction): a database written before drift was kept, or versions a
// dump carried without one. Idempotent; on an up-to-date database it costs
// one scan of the versions.
func (s *Store) backfillBaselines(ctx context.Context) error {
	_, err := writeTx(ctx, s, "schema", func(ctx context.Context, tx neo4j.ManagedTransaction) (struct{}, error) {
		cat, err := catalogueIn(ctx, tx)
		if err != nil {
			return struct{}{}, err
		}
		tools := make([]map[string]any, len(cat.Tools))
		for i, t := range cat.Tools {
			c := procedures.ContractOf(t)
			cj, err := json.Marshal(c)
			if err != nil {
				return struct{}{}, err
			}
			tools[i] = map[string]any{"name": t.Name, "contract": string(cj), "contract_key": c.Key()}
		}
		return struct{}{}, exec(ctx, tx, "contracts_backfill", map[string]any{"tools": tools})
	})
	if err != nil {
		return err
	}
	return s.backfillBatches(ctx, "baselines_backfill", baselineBatch)
}

// Drifted returns a page of the stale versions (drifted.cypher; see
// procedures.Store).
func (s *Store) Drifted(ctx context.Context, limit, offset int) ([]procedures.StaleVersion, int, error) {
	if limit < 0 || offset < 0 {
		return nil, 0, fault.Errorf(fault.CodeInvalid, "limit and offset must not be negative")
	}
	cat, err := s.Catalogue(ctx)
	if err != nil {
		return nil, 0, err
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	recs, err := query(ctx, s, "drifted", neo4j.AccessModeRead, "drifted",
		map[string]any{"keys": cat.ContractKeys(), "limit": lim, "offset": offset})
	if err != nil {
		return nil, 0, err
	}
	if len(recs) != 1 {
		return nil, 0, s.mapError("drifted", errRows("drifted", len(recs)))
	}
	total, _ := field(recs[0], "total").(int64)
	page, _ := field(recs[0], "page").([]any)
	out := make([]procedures.StaleVersion, 0, len(page))
	for _, v := range page {
		f, err := newFields(v, []string{"procedure", "code_hash", "current", "baseline", "captured_at", "verification"}, "stale version")
		if err != nil {
			return nil, 0, s.mapError("drifted", err)
		}
		sv := procedures.StaleVersion{Procedure: f.str(0), CodeHash: f.str(1), Current: f.bool(2), At: f.time(4)}
		jsonShared(f, 3, s.baselineCache, &sv.Baseline)
		f.json(5, &sv.Verification)
		if f.err != nil {
			return nil, 0, s.mapError("drifted", f.err)
		}
		out = append(out, sv)
	}
	return out, int(total), nil
}

// Rebaseline gives a version the stored catalogue's contracts (see
// procedures.Store), in one write transaction: the version read with its
// procedure locked (version_baseline.cypher), the catalogue, the decision
// and the new baseline (version_rebaseline.cypher).
func (s *Store) Rebaseline(ctx context.Context, in procedures.RebaselineInput) (*procedures.Version, error) {
	if in.Name == "" || in.CodeHash == "" {
		return nil, invalid("code_hash", "a rebaseline names a procedure and a version")
	}
	var dp map[string]any
	if in.Decision != nil {
		var err error
		if dp, err = decisionParams(*in.Decision); err != nil {
			return nil, err
		}
	}
	return writeTx(ctx, s, "rebaseline", func(ctx context.Context, tx neo4j.ManagedTransaction) (*procedures.Version, error) {
		recs, err := collect(ctx, tx, "version_baseline", map[string]any{"name": in.Name, "hash": in.CodeHash})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(in.Name)
		}
		if found, _ := field(recs[0], "found").(bool); !found {
			return nil, fault.Errorf(fault.CodeNotFound, "no version %q of procedure %q", in.CodeHash, in.Name)
		}
		r := &row{m: map[string]any{"signature": field(recs[0], "signature"), "baseline": field(recs[0], "baseline")}}
		signature := r.strings("signature")
		var old *procedures.Baseline
		r.json("baseline", &old)
		if r.err != nil {
			return nil, r.err
		}
		cat, err := catalogueIn(ctx, tx)
		if err != nil {
			return nil, err
		}
		params := map[string]any{"name": in.Name, "hash": in.CodeHash, "baseline": nil, "keys": nil}
		if in.Revision == "" || in.Revision == cat.Revision || slices.Contains(storedRevisions(cat), in.Revision) {
			if in.Decision != nil {
				if len(procedures.DriftOf(old, cat)) == 0 {
					return nil, notStale(in.Name, in.CodeHash)
				}
				if err := appendDecision(ctx, tx, dp); err != nil {
					return nil, err
				}
			}
			b := procedures.BaselineOf(signature, cat)
			raw, err := json.Marshal(b)
			if err != nil {
				return nil, err
			}
			params["baseline"], params["keys"] = string(raw), b.Keys()
			if err := exec(ctx, tx, "auth_bump", nil); err != nil {
				return nil, err
			}
		} else {
			// Another catalogue since the run: the version keeps its baseline.
			raw, err := json.Marshal(old)
			if err != nil {
				return nil, err
			}
			params["baseline"], params["keys"] = nullIfNil(old, string(raw)), old.Keys()
		}
		recs, err = collect(ctx, tx, "version_rebaseline", params)
		if err != nil {
			return nil, err
		}
		if len(recs) != 1 {
			return nil, errRows("version_rebaseline", len(recs))
		}
		current, _ := field(recs[0], "current").(string)
		v, err := decodeVersion(field(recs[0], "version"), current)
		if err != nil {
			return nil, err
		}
		return &v, nil
	})
}

func nullIfNil(b *procedures.Baseline, raw string) any {
	if b == nil {
		return nil
	}
	return raw
}

func notStale(name, hash string) error {
	return fault.Errorf(fault.CodeConflict, "version %s of %s is not stale: its tools are as it last worked with them", hash, name).
		WithDetails("reason", procedures.ReasonNotStale)
}
