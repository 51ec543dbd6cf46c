package procedures_test

import (
	"context"
	"sync"
	"testing"

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

// newRecordingLiftService is newLiftService over a store that records its
// captures' inputs.
func newRecordingLiftService(t *testing.T) (*procedures.Service, *captureInputs) {
	t.Helper()
	var rec *captureInputs
	svc := newLiftServiceOver(t, func(s procedures.Store) procedures.Store {
		rec = &captureInputs{Store: s}
		return rec
	})
	return svc, rec
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
			svc, store := newRecordingLiftService(t)
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

// TestCaptureAnalysesKept: a capture of code captured before, in its
// dialect and under the same catalogue, parses nothing (the analysis and
// the canonical hash kept, the lifting kept from the second capture on,
// liftMemos); code that differs by a byte, another dialect, or another
// catalogue (the canonical hash's classification) miss, and every capture
// stores the canonical hash CanonicalHashOf gives its code under its
// catalogue.
func TestCaptureAnalysesKept(t *testing.T) {
	ctx := context.Background()
	svc, store := newRecordingLiftService(t)
	const code = "a = tools.get_task(task_id=x)\nb = tools.get_jobs(task_id=y)\nreturn [a, b]\n"
	// get_jobs no longer read-only: the reads are not reordered.
	changed := append([]procedures.Tool{}, liftTools...)
	changed[1].ReadOnly = false
	for _, step := range []struct {
		name   string
		req    procedures.CaptureRequest
		tools  []procedures.Tool // put before the capture
		parses int64
	}{
		{name: "first", req: procedures.CaptureRequest{Code: code}, parses: 1},
		{name: "second (its lifting not kept yet)", req: procedures.CaptureRequest{Code: code}, parses: 1},
		{name: "third", req: procedures.CaptureRequest{Code: code}, parses: 0},
		{name: "lift false", req: procedures.CaptureRequest{Code: code, NoLift: true}, parses: 0},
		{name: "a byte more", req: procedures.CaptureRequest{Code: code + "\n"}, parses: 1},
		{name: "python-async", req: procedures.CaptureRequest{Code: code, Dialect: "python-async", NoLift: true}, parses: 1},
		{name: "another catalogue", req: procedures.CaptureRequest{Code: code, NoLift: true}, tools: changed, parses: 1},
		{name: "that catalogue again", req: procedures.CaptureRequest{Code: code, NoLift: true}, parses: 0},
	} {
		if step.tools != nil {
			if _, err := svc.PutCatalogue(ctx, step.tools, "tester"); err != nil {
				t.Fatal(err)
			}
		}
		store.ins = nil
		before := procedures.CaptureParses(svc)
		mustCapture(t, svc, step.req)
		if n := procedures.CaptureParses(svc) - before; n != step.parses {
			t.Fatalf("%s: parsed %d times, want %d", step.name, n, step.parses)
		}
		if len(store.ins) == 0 {
			t.Fatalf("%s: no capture written", step.name)
		}
		in := store.ins[len(store.ins)-1] // (another catalogue: prepared again under it)
		want, err := procedures.CanonicalHashOf(in.Version.Code, in.Version.Dialect, in.Catalogue)
		if err != nil {
			t.Fatal(err)
		}
		if in.Version.CanonicalHash != want {
			t.Fatalf("%s: canonical hash %s, want %s", step.name, in.Version.CanonicalHash, want)
		}
	}
}
