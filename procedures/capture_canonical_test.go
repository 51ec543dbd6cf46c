package procedures_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// captureInputs records the inputs of its store's captures.
type captureInputs struct {
	procedures.Store
	mu  sync.Mutex
	ins []procedures.CaptureInput
}

func (c *captureInputs) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	c.mu.Lock()
	c.ins = append(c.ins, in)
	c.mu.Unlock()
	return c.Store.Capture(ctx, in)
}

// TestCaptureCanonicalHash: the canonical hash a capture stores its version
// under is CanonicalHashOf the code it stores, in its dialect, under the
// catalogue it was prepared under — whether the code was lifted (the
// lifted code's), kept as written ("lift": false, or nothing to lift:
// made from the capture's own analysis) or python-async, and whether its
// reads may be reordered.
func TestCaptureCanonicalHash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     procedures.CaptureRequest
		lifted  bool
		differs bool // the hash under no catalogue differs (reads reordered)
	}{
		{name: "lifted", req: procedures.CaptureRequest{Code: "s = tools.get_task(task_id=42)\nreturn tools.get_jobs(task_id=s)\n"}, lifted: true},
		{name: "lift false", req: procedures.CaptureRequest{Code: "s = tools.get_task(task_id=42)\nreturn tools.get_jobs(task_id=s)\n", NoLift: true}},
		{name: "nothing to lift", req: procedures.CaptureRequest{Code: "s = tools.get_task(task_id=t)\nreturn tools.get_jobs(task_id=s)\n"}},
		{name: "independent reads reordered", req: procedures.CaptureRequest{Code: "a = tools.get_task(task_id=x)\nb = tools.get_jobs(task_id=y)\nreturn [a, b]\n"}, differs: true},
		{name: "lifted, independent reads reordered", req: procedures.CaptureRequest{Code: "a = tools.get_task(task_id=x)\nb = tools.get_jobs(task_id=7)\nreturn [a, b]\n"}, lifted: true, differs: true},
		{name: "python-async", req: procedures.CaptureRequest{Dialect: "python-async", Code: "a = await tools.get_task(task_id=x)\nb = await tools.get_jobs(task_id=y)\nreturn [a, b]\n"}, differs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inner.Close() })
			store := &captureInputs{Store: inner}
			svc := procedures.NewService(store, procedures.Options{})
			if _, err := svc.PutCatalogue(context.Background(), liftTools, "tester"); err != nil {
				t.Fatal(err)
			}
			out := mustCapture(t, svc, tc.req)
			if (len(out.Lifted) > 0) != tc.lifted {
				t.Fatalf("lifted %v, want lifted %v", out.Lifted, tc.lifted)
			}
			if len(store.ins) != 1 {
				t.Fatalf("%d captures written", len(store.ins))
			}
			in := store.ins[0]
			if in.Catalogue == nil {
				t.Fatal("prepared under no catalogue")
			}
			want, err := procedures.CanonicalHashOf(in.Version.Code, in.Version.Dialect, in.Catalogue)
			if err != nil {
				t.Fatal(err)
			}
			if in.Version.CanonicalHash != want {
				t.Fatalf("canonical hash %s, want %s (CanonicalHashOf the stored code)", in.Version.CanonicalHash, want)
			}
			bare, err := procedures.CanonicalHashOf(in.Version.Code, in.Version.Dialect, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (bare != want) != tc.differs {
				t.Fatalf("hash under no catalogue differs %v, want %v", bare != want, tc.differs)
			}
		})
	}
}
