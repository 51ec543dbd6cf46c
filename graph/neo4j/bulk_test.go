package neo4j

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// bulkStore is a Store that storetest.Fill can fill fast: CaptureBatch
// aggregates the captures in Go and loads them with one UNWIND statement
// (testdata/bulk_load.cypher). It handles what Fill captures only: new
// procedures, each with one succeeded version; captures of procedures that
// exist already (a batch may split a procedure's captures) go through Capture.
type bulkStore struct {
	*Store
	tb testing.TB
}

// CaptureBatch implements storetest.BatchCapturer.
func (b bulkStore) CaptureBatch(ctx context.Context, ins []procedures.CaptureInput) error {
	type cause struct {
		desc string
		keys []string
	}
	type agg struct {
		in     procedures.CaptureInput
		keys   []string
		last   procedures.CaptureInput
		causes map[string]*cause
		order  []string
	}
	existing, err := b.GetMany(ctx, uniqueNames(ins))
	if err != nil {
		return err
	}
	byName := map[string]*agg{}
	var names []string
	for _, in := range ins {
		if existing[in.Name] != nil {
			if _, err := b.Capture(ctx, in); err != nil {
				return err
			}
			continue
		}
		if in.Version.Status != procedures.StatusSucceeded {
			return fmt.Errorf("bulk load: %s: only succeeded captures", in.Name)
		}
		a := byName[in.Name]
		if a == nil {
			a = &agg{in: in, causes: map[string]*cause{}}
			byName[in.Name] = a
			names = append(names, in.Name)
		}
		if in.Version.CodeHash != a.in.Version.CodeHash {
			return fmt.Errorf("bulk load: %s: only one version per procedure", in.Name)
		}
		a.last = in
		if !slices.Contains(a.keys, in.UsageKey) {
			a.keys = append(a.keys, in.UsageKey)
		}
		if in.Cause != nil {
			c := a.causes[in.Cause.Name]
			if c == nil {
				c = &cause{desc: in.Cause.Description}
				a.causes[in.Cause.Name] = c
				a.order = append(a.order, in.Cause.Name)
			}
			if !slices.Contains(c.keys, in.UsageKey) {
				c.keys = append(c.keys, in.UsageKey)
			}
		}
	}
	rows := make([]map[string]any, 0, len(names))
	for _, n := range names {
		a := byName[n]
		v := a.in.Version
		capturedAt := v.CapturedAt
		if capturedAt.IsZero() {
			capturedAt = a.in.At
		}
		causes := []map[string]any{}
		for _, cn := range a.order {
			causes = append(causes, map[string]any{"name": cn, "description": a.causes[cn].desc, "keys": a.causes[cn].keys})
		}
		rows = append(rows, map[string]any{
			"name": n, "signature": a.in.Signature, "summary": v.Summary, "keys": a.keys,
			"createdAt": dbTime(a.in.At), "updatedAt": dbTime(a.last.At), "capturedAt": dbTime(capturedAt),
			"hash": v.CodeHash, "versionId": versionID(n, v.CodeHash), "code": v.Code, "dialect": v.Dialect,
			"parameters": stringList(v.Parameters), "opaque": v.Opaque, "causes": causes,
		})
	}
	if len(rows) > 0 {
		run(b.tb, b.Store, testdata(b.tb, "bulk_load"), map[string]any{"rows": rows})
	}
	// Classified as Open classifies a database loaded before classes were kept.
	return b.backfillClasses(ctx)
}

func uniqueNames(ins []procedures.CaptureInput) []string {
	var names []string
	seen := map[string]bool{}
	for _, in := range ins {
		if !seen[in.Name] {
			seen[in.Name] = true
			names = append(names, in.Name)
		}
	}
	return names
}
