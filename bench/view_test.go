package bench

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/procgraph/procgraph/procedures"
)

// BenchmarkListParts splits GET /v1/procedures (25 of 10k, embedded) into
// its parts in one run: store.Find, Service.Find (store + decoration), the
// JSON encoding of the page, the whole request, and /healthz.
func BenchmarkListParts(b *testing.B) {
	ctx := context.Background()
	t, err := embeddedTarget()
	if err != nil {
		b.Fatal(err)
	}
	srv := serve(b, t.store, nil)
	t.grow(b, 10_000)
	q := procedures.Query{Limit: 25}
	page, _, err := srv.svc.Find(ctx, procedures.FindRequest{})
	if err != nil {
		b.Fatal(err)
	}
	_, body := srv.do(b, "GET", "/v1/procedures", nil)
	b.Logf("list body: %d bytes", len(body))
	b.Run("store_find", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func(int) {
			if _, _, err := t.store.Find(ctx, q); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("service_find", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func(int) {
			if _, _, err := srv.svc.Find(ctx, procedures.FindRequest{}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		loop(b, func(int) {
			buf.Reset()
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(map[string]any{"procedures": page, "total": 10000}); err != nil {
				b.Fatal(err)
			}
		})
	})
	for _, p := range []struct{ name, path string }{{"healthz", "/healthz"}, {"list1", "/v1/procedures?limit=1"}, {"list", "/v1/procedures"}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			loop(b, func(int) {
				if st, body := srv.do(b, "GET", p.path, nil); st != 200 {
					b.Fatalf("%d %s", st, body)
				}
			})
		})
	}
}

// BenchmarkPlannerParts splits the planner view (GET
// /v1/procedures/tools?limit=25) into its parts in one run, on each store:
// the catalogue read, store.Find, Service.ExposedMatching (the page, the
// catalogue, decoration) and the whole request.
func BenchmarkPlannerParts(b *testing.B) {
	ctx := context.Background()
	for _, t := range targets(b) {
		t.grow(b, 1000)
		srv := serve(b, t.store, nil)
		exposed := true
		q := procedures.Query{Limit: 25, Exposed: &exposed, AllowMutating: true, SkipTotal: true}
		for range 5 {
			srv.do(b, "GET", "/v1/procedures/tools?limit=25", nil)
		}
		b.Run(t.name+"/catalogue", func(b *testing.B) {
			loop(b, func(int) {
				if _, err := t.store.Catalogue(ctx); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(t.name+"/store_find", func(b *testing.B) {
			loop(b, func(int) {
				if ps, _, err := t.store.Find(ctx, q); err != nil || len(ps) != 25 {
					b.Fatal(err)
				}
			})
		})
		b.Run(t.name+"/service", func(b *testing.B) {
			loop(b, func(int) {
				if ps, err := srv.svc.ExposedMatching(ctx, "", nil, 25); err != nil || len(ps) != 25 {
					b.Fatal(err)
				}
			})
		})
		b.Run(t.name+"/http", func(b *testing.B) {
			loop(b, func(int) {
				if st, body := srv.do(b, "GET", "/v1/procedures/tools?limit=25", nil); st != 200 {
					b.Fatalf("%d %s", st, body)
				}
			})
		})
	}
}

// BenchmarkListPage is GET /v1/procedures over HTTP (pages of 25 and 100,
// the default order) on an embedded store of 1k procedures, and of 100k
// with -bench.big: the procedure list's encoding at both sizes (ADR 0041).
func BenchmarkListPage(b *testing.B) {
	sizes := []int{1000}
	if *big {
		sizes = append(sizes, 100_000)
	}
	t, err := embeddedTarget()
	if err != nil {
		b.Fatal(err)
	}
	srv := serve(b, t.store, nil)
	for _, n := range sizes {
		t.grow(b, n)
		for _, limit := range []string{"25", "100"} {
			path := "/v1/procedures?limit=" + limit
			for range 5 {
				srv.do(b, "GET", path, nil)
			}
			b.Run(fmt.Sprintf("n=%d/limit=%s", n, limit), func(b *testing.B) {
				b.ReportAllocs()
				var size int
				loop(b, func(int) {
					st, body := srv.do(b, "GET", path, nil)
					if st != 200 {
						b.Fatalf("%d %s", st, body)
					}
					size = len(body)
				})
				b.ReportMetric(float64(size), "body-B")
			})
		}
	}
}
