package neo4j

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestCaptureClassifiesWithTheStoredCatalogue: a new procedure is kept
// with the classification the STORED catalogue gives, even when the store
// capturing it holds an older catalogue (another instance put a new one
// since), and a new procedure that stored procedures already call has them
// reclassified: the one-statement capture (heldClass) must then not apply
// the classification it computed in advance.
func TestCaptureClassifiesWithTheStoredCatalogue(t *testing.T) {
	ctx := context.Background()
	other := procedures.NewService(freshStore(t), procedures.Options{})
	s := openStore(t)
	at := time.Now()
	capture := func(key string, sig ...string) {
		t.Helper()
		in := procedures.CaptureInput{
			Name: procedures.ProcPrefix + strings.Join(sig, "__"), Signature: sig,
			Version:  procedures.Version{CodeHash: "h", Code: "return 1", Dialect: "starlark", Status: procedures.StatusSucceeded},
			UsageKey: key, At: at,
		}
		if _, err := s.Capture(ctx, in); err != nil {
			t.Fatalf("Capture(%v): %v", sig, err)
		}
	}
	find := func(readOnly bool, want int) {
		t.Helper()
		// A third store: its own class cache, nothing held.
		requireFound(t, openStore(t), readOnly, want)
	}
	put := func(tools ...procedures.Tool) {
		t.Helper()
		if _, err := other.PutCatalogue(ctx, tools, "t"); err != nil {
			t.Fatal(err)
		}
	}

	// s holds the empty catalogue; another instance lists get_jobs as
	// read-only: a new procedure of get_jobs is read-only.
	if _, err := s.Catalogue(ctx); err != nil {
		t.Fatal(err)
	}
	put(procedures.Tool{Name: "get_jobs", ReadOnly: true}, procedures.Tool{Name: "kill_job"})
	capture("k1", "get_jobs")
	find(true, 1)
	find(false, 0)

	// s now holds that catalogue; another instance makes kill_job
	// read-only and get_jobs not.
	if _, err := s.Catalogue(ctx); err != nil {
		t.Fatal(err)
	}
	put(procedures.Tool{Name: "get_jobs"}, procedures.Tool{Name: "kill_job", ReadOnly: true}, procedures.Tool{Name: "get_logs", ReadOnly: true})
	capture("k2", "kill_job")
	find(true, 1)  // kill_job's
	find(false, 1) // get_jobs's, reclassified by the put

	// A procedure calling one that does not exist yet is not read-only;
	// once the callee is captured (read-only), so is the caller.
	if _, err := s.Catalogue(ctx); err != nil {
		t.Fatal(err)
	}
	callee := procedures.ProcPrefix + "get_logs__kill_job"
	capture("k3", "kill_job", callee)
	find(true, 1)
	find(false, 2)
	capture("k4", "get_logs", "kill_job")
	find(true, 3)
	find(false, 1)
}

// TestNewCaptureIsOneStatement: a new procedure whose signature names no
// procedure is captured by capture.cypher alone — when no catalogue was
// ever put (the stored revision reads ""), and after another instance put
// one (the first capture reads it and tries again; the next ones do not).
func TestNewCaptureIsOneStatement(t *testing.T) {
	s := freshStore(t)
	other := openStore(t)
	statements := func(in procedures.CaptureInput) []string {
		t.Helper()
		var names []string
		ctx := WithQueryObserver(context.Background(), func(q string, _, _ time.Duration) { names = append(names, q) })
		res, err := s.Capture(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Created {
			t.Fatalf("%s: not created", in.Name)
		}
		return names
	}
	want := func(step string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: statements %v, want %v", step, got, want)
		}
	}
	if _, err := s.Catalogue(context.Background()); err != nil {
		t.Fatal(err)
	}
	want("no catalogue ever put", statements(storetest.In([]string{"one_a"}, "h", "k", storetest.At(1))), "capture")
	c, err := procedures.NewCatalogue([]procedures.Tool{{Name: "one_b", ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.PutCatalogue(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	in := storetest.In([]string{"one_b"}, "h", "k", storetest.At(2))
	want("after another instance's catalogue", statements(in), "capture", "catalogue_since", "capture")
	requireFound(t, s, true, 1) // one_b, classified with the new catalogue
	want("the next one", statements(storetest.In([]string{"one_c"}, "h", "k", storetest.At(3))), "capture")
}
