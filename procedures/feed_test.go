package procedures_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// openStore opens a fresh embedded store.
// bleveWorkers are the analysis workers bleve (the embedded store's search
// index) starts once per process at package init, and the loops of an open
// store's index and its indexer (closed by t.Cleanup, after the deferred
// check): not leaks.
var bleveWorkers = goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker")

var scorchLoops = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/blevesearch/bleve/v2/index/scorch.(*Scorch).introducerLoop"),
	goleak.IgnoreAnyFunction("github.com/blevesearch/bleve/v2/index/scorch.(*Scorch).mergerLoop"),
	goleak.IgnoreAnyFunction("github.com/blevesearch/bleve/v2/index/scorch.(*Scorch).persisterLoop"),
	goleak.IgnoreAnyFunction("github.com/procgraph/procgraph/graph/embedded.(*searchIndex).run"),
	goleak.IgnoreAnyFunction("github.com/procgraph/procgraph/graph/embedded.(*Store).indexDecisions"),
}

func openStore(t testing.TB) *embedded.Store {
	t.Helper()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// mustTake takes what sub holds and checks its kinds (and procedures,
// where want names one).
func mustTake(t *testing.T, sub *changes.Subscription, want ...changes.Change) []changes.Change {
	t.Helper()
	got := sub.Take()
	if len(got) != len(want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || (want[i].Procedure != "" && got[i].Procedure != want[i].Procedure) ||
			(want[i].Decision != "" && got[i].Decision != want[i].Decision) || got[i].At.IsZero() {
			t.Fatalf("change %d is %+v, want %+v", i, got[i], want[i])
		}
		if i > 0 && got[i].Seq <= got[i-1].Seq {
			t.Fatalf("sequence does not increase: %+v", got)
		}
	}
	return got
}

// TestFeedPublishesEachCommittedChange: every write that commits through
// the service publishes exactly one change of its kind, carrying the
// decision that authorised it; a write that fails publishes nothing.
func TestFeedPublishesEachCommittedChange(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	svc := procedures.NewService(store, procedures.Options{})
	sub := svc.Changes().Subscribe(0)
	defer sub.Close()
	none := func() { t.Helper(); mustTake(t, sub) }

	tools := []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}, {Name: "kill_job"}}
	c, err := svc.PutCatalogue(ctx, tools, "tester")
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindCatalogue, Limit: 1})
	if got := mustTake(t, sub, changes.Change{Kind: changes.ChangeCatalogue, Decision: cat[0].ID}); got[0].CodeHash != c.Revision {
		t.Fatalf("catalogue change %+v, revision %s", got[0], c.Revision)
	}
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: ""}}, "tester"); err == nil {
		t.Fatal("an invalid catalogue was accepted")
	}
	none()
	broken := procedures.NewService(failingAudit{store}, procedures.Options{})
	bsub := broken.Changes().Subscribe(0)
	if _, err := broken.PutCatalogue(ctx, tools[:1], "mallory"); err == nil {
		t.Fatal("an unaudited catalogue change was accepted")
	}
	mustTake(t, bsub)
	bsub.Close()

	ro := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	mustTake(t, sub, changes.Change{Kind: changes.ChangeCapture, Procedure: ro.Name})
	kill := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode}).Procedure
	mustTake(t, sub, changes.Change{Kind: changes.ChangeCapture, Procedure: kill.Name})
	if _, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "import os"}); err == nil {
		t.Fatal("invalid code was captured")
	}
	none()
	mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools." + ro.Name + "(task_id=1)", SessionID: "s"})
	mustTake(t, sub, changes.Change{Kind: changes.ChangeCapture, Procedure: ro.Name})
	mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools." + ro.Name + "(task_id=1)", Status: procedures.StatusFailed})
	none() // a failed use writes nothing

	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: kill.Name, Enabled: true, Actor: "alice"}); err == nil {
		t.Fatal("a state-changing grant was accepted")
	}
	none()
	_, d, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeGrant, Procedure: ro.Name, Decision: d.ID})
	_, d, err = svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: false, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeRevoke, Procedure: ro.Name, Decision: d.ID})

	mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode + "\"failed\"\n", Status: procedures.StatusFailed})
	mustTake(t, sub, changes.Change{Kind: changes.ChangeCapture, Procedure: ro.Name})
	versions, err := svc.Versions(ctx, ro.Name)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions %+v %v", versions, err)
	}
	failed := versions[0].CodeHash
	if versions[1].Status == procedures.StatusFailed {
		failed = versions[1].CodeHash
	}
	for _, hash := range []string{failed, "0000000000000000000000000000000000000000000000000000000000000000"} {
		if _, _, err := svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: hash, Actor: "bob"}); err == nil {
			t.Fatalf("promote of %s was accepted", hash)
		}
		none()
	}
	_, d, err = svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: ro.CodeHash, Actor: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangePromote, Procedure: ro.Name, Decision: d.ID})

	if _, _, err := svc.SetRetired(ctx, procedures.RetireRequest{Name: ro.Name, Retired: true, Actor: "bob"}); err == nil {
		t.Fatal("a retirement without a reason was accepted")
	}
	none()
	_, d, err = svc.SetRetired(ctx, procedures.RetireRequest{Name: ro.Name, Retired: true, Reason: "superseded", Actor: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeRetire, Procedure: ro.Name, Decision: d.ID})
	_, d, err = svc.SetRetired(ctx, procedures.RetireRequest{Name: ro.Name, Actor: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeUnretire, Procedure: ro.Name, Decision: d.ID})
}

// gatedGrant is a real store whose SetGrant waits inside the write until
// release is closed, to watch the feed while a write is under way.
type gatedGrant struct {
	procedures.Store
	entered chan struct{}
	release chan struct{}
}

func (g gatedGrant) SetGrant(ctx context.Context, name string, gr *procedures.Grant, hash string, cat *procedures.Catalogue, d audit.Decision) (*procedures.Procedure, error) {
	close(g.entered)
	<-g.release
	return g.Store.SetGrant(ctx, name, gr, hash, cat, d)
}

// TestFeedPublishesAfterCommit: nothing is published while the write is
// under way; once published, the change is visible in the store.
func TestFeedPublishesAfterCommit(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	g := gatedGrant{Store: store, entered: make(chan struct{}), release: make(chan struct{})}
	svc := procedures.NewService(g, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}, "t"); err != nil {
		t.Fatal(err)
	}
	ro := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	sub := svc.Changes().Subscribe(0)
	defer sub.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "alice"})
		done <- err
	}()
	<-g.entered
	mustTake(t, sub) // the write has not committed: nothing yet
	close(g.release)
	cs, err := sub.Next(ctx)
	if err != nil || len(cs) != 1 || cs[0].Kind != changes.ChangeGrant {
		t.Fatalf("changes %+v %v", cs, err)
	}
	p, err := procedures.NewService(store, procedures.Options{}).Get(ctx, ro.Name)
	if err != nil || !p.AutoRun.Enabled {
		t.Fatalf("published before the grant was visible: %+v %v", p, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestFeedSlowSubscriberDoesNotBlockWriters: a subscriber that never takes
// holds at most its bound, coalesced into one ChangeLost; writers are not
// held up, a subscriber that keeps up sees every change in order, and the
// slow one receives changes again once it took the ChangeLost.
func TestFeedSlowSubscriberDoesNotBlockWriters(t *testing.T) {
	defer goleak.VerifyNone(t, append([]goleak.Option{bleveWorkers}, scorchLoops...)...)
	f := changes.NewFeed()
	slow := f.Subscribe(4)
	fast := f.Subscribe(0)
	var seen []changes.Change
	drained := make(chan error, 1)
	const writers, each = 8, 50
	go func() {
		// The last change (or the lost marker standing for it) has Seq writers*each.
		for len(seen) == 0 || seen[len(seen)-1].Seq < writers*each {
			cs, err := fast.Next(context.Background())
			if err != nil {
				drained <- err
				return
			}
			seen = append(seen, cs...)
		}
		drained <- nil
	}()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				f.Publish(changes.Change{Kind: changes.ChangeCapture, Procedure: "proc__x"})
			}
		}()
	}
	wg.Wait() // the writers finished although slow never took anything
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	lost, lossless := 0, true
	for i, c := range seen {
		if c.Kind == changes.ChangeLost {
			lost++
		}
		if c.Seq != uint64(i+1) {
			lossless = false
		}
	}
	// The fast subscriber's bound (64) may be reached while it is
	// descheduled; then it must say so, never drop silently.
	if lost == 0 && (!lossless || len(seen) != writers*each) {
		t.Fatalf("fast subscriber: %d lost markers, contiguous sequence %v", lost, lossless)
	}
	got := slow.Take()
	if len(got) != 1 || got[0].Kind != changes.ChangeLost || got[0].Seq != writers*each {
		t.Fatalf("the slow subscriber holds %+v, want one lost change at %d", got, writers*each)
	}
	f.Publish(changes.Change{Kind: changes.ChangeGrant, Procedure: "proc__x"})
	if got := slow.Take(); len(got) != 1 || got[0].Kind != changes.ChangeGrant || got[0].Seq != writers*each+1 {
		t.Fatalf("after the lost change: %+v", got)
	}
	slow.Close()
	fast.Close()
}

// TestFeedClose: a closed subscription leaves the feed and gets nothing
// more; closing the feed ends every subscription, after what waits was
// taken.
func TestFeedClose(t *testing.T) {
	defer goleak.VerifyNone(t, append([]goleak.Option{bleveWorkers}, scorchLoops...)...)
	ctx := context.Background()
	f := changes.NewFeed()
	a, b := f.Subscribe(0), f.Subscribe(0)
	if f.Subscribers() != 2 {
		t.Fatalf("%d subscribers", f.Subscribers())
	}
	waiting := make(chan error, 1)
	go func() { _, err := a.Next(ctx); waiting <- err }()
	a.Close()
	a.Close() // twice is fine
	if err := <-waiting; !errors.Is(err, changes.ErrFeedClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	if f.Subscribers() != 1 {
		t.Fatalf("%d subscribers after Close", f.Subscribers())
	}
	f.Publish(changes.Change{Kind: changes.ChangeCatalogue})
	if got := a.Take(); len(got) != 0 {
		t.Fatalf("a closed subscription received %+v", got)
	}
	f.Close()
	select {
	case <-b.Done():
	default:
		t.Fatal("closing the feed did not end its subscriptions")
	}
	if cs, err := b.Next(ctx); err != nil || len(cs) != 1 {
		t.Fatalf("what waited is taken first: %+v %v", cs, err)
	}
	if _, err := b.Next(ctx); !errors.Is(err, changes.ErrFeedClosed) {
		t.Fatalf("Next on a closed feed: %v", err)
	}
	late := f.Subscribe(0)
	f.Publish(changes.Change{Kind: changes.ChangeCatalogue})
	if _, err := late.Next(ctx); !errors.Is(err, changes.ErrFeedClosed) || f.Subscribers() != 0 {
		t.Fatalf("a subscription to a closed feed: %v, %d subscribers", err, f.Subscribers())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c := changes.NewFeed().Subscribe(0)
	if _, err := c.Next(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with an ended context: %v", err)
	}
}

// countingCatalogue is a real store that counts the catalogue reads
// WatchRemote makes, so a test can wait for its ticks without timing.
type countingCatalogue struct {
	procedures.Store
	reads *atomic.Int64
}

func (c countingCatalogue) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	c.reads.Add(1)
	return c.Store.Catalogue(ctx)
}

// TestWatchRemote: two services on one store are two instances on one
// database. What the other one changes in the exposed set reaches this
// one's feed as ChangeRemote; ticks with nothing changed publish nothing;
// the watcher ends with its context, leaving no goroutine.
func TestWatchRemote(t *testing.T) {
	defer goleak.VerifyNone(t, append([]goleak.Option{bleveWorkers}, scorchLoops...)...)
	ctx := context.Background()
	store := openStore(t)
	other := procedures.NewService(store, procedures.Options{})
	if _, err := other.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}, "t"); err != nil {
		t.Fatal(err)
	}
	reads := &atomic.Int64{}
	here := procedures.NewService(countingCatalogue{Store: store, reads: reads}, procedures.Options{})
	sub := here.Changes().Subscribe(0)
	defer sub.Close()
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { here.WatchRemote(wctx, time.Millisecond); close(watched) }()
	defer func() { stop(); <-watched }()
	waitReads := func(n int64) {
		t.Helper()
		for start := reads.Load(); reads.Load() < start+n; {
			time.Sleep(time.Millisecond)
		}
	}
	waitReads(6)
	mustTake(t, sub) // nothing changed: nothing published

	ro := mustCapture(t, other, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cs, err := sub.Next(tctx)
	if err != nil || len(cs) != 1 || cs[0].Kind != changes.ChangeRemote {
		t.Fatalf("after another instance's capture: %+v %v", cs, err)
	}
	if _, _, err := other.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := sub.Next(tctx); err != nil || cs[0].Kind != changes.ChangeRemote {
		t.Fatalf("after another instance's grant: %+v %v", cs, err)
	}
	if err := here.RecordRun(ctx, ro.Name, ro.CodeHash, "k", "", nil); err != nil {
		t.Fatal(err)
	}
	waitReads(6)
	mustTake(t, sub) // a replay moves only counters
}

// TestFeedSeq: Seq is the Seq of the last change published, 0 before the
// first; a publish on a closed feed leaves it.
func TestFeedSeq(t *testing.T) {
	f := changes.NewFeed()
	sub := f.Subscribe(0)
	if f.Seq() != 0 {
		t.Fatalf("Seq before a publish: %d", f.Seq())
	}
	f.Publish(changes.Change{Kind: changes.ChangeCatalogue})
	f.Publish(changes.Change{Kind: changes.ChangeCatalogue})
	got := sub.Take()
	if len(got) != 2 || f.Seq() != got[1].Seq {
		t.Fatalf("Seq %d after %+v", f.Seq(), got)
	}
	f.Close()
	f.Publish(changes.Change{Kind: changes.ChangeCatalogue})
	if f.Seq() != got[1].Seq {
		t.Fatalf("Seq %d after a publish on a closed feed, want %d", f.Seq(), got[1].Seq)
	}
}
