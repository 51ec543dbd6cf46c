package neo4j

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/procedures"
)

// TestRemoteChangesReachTheFeed: two instances on one Neo4j (two stores,
// two drivers). A capture, a grant and a catalogue change made on one
// reach the other's change feed as ChangeRemote, through WatchRemote; the
// watcher ends with its context.
func TestRemoteChangesReachTheFeed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	writer := procedures.NewService(freshStore(t), procedures.Options{})
	looks := &atomic.Int64{}
	watcher := procedures.NewService(countedLooks{Store: openStore(t), n: looks}, procedures.Options{})
	if _, err := writer.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}, "t"); err != nil {
		t.Fatal(err)
	}
	sub := watcher.Changes().Subscribe(0)
	defer sub.Close()
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { watcher.WatchRemote(wctx, 20*time.Millisecond); close(watched) }()
	defer func() { stop(); <-watched }()
	// settle waits until the watcher looked at least twice more (a look
	// reads the catalogue once or twice), then drops what it
	// published: the next ChangeRemote is the next write's.
	settle := func() {
		for start := looks.Load(); looks.Load() < start+6; {
			time.Sleep(5 * time.Millisecond)
		}
		sub.Take()
	}
	waitRemote := func(what string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for {
			cs, err := sub.Next(tctx)
			if err != nil {
				t.Fatalf("no remote change after %s: %v", what, err)
			}
			for _, c := range cs {
				if c.Kind == changes.ChangeRemote {
					return
				}
			}
		}
	}
	// The watcher's first look is its baseline: a capture that lands before
	// it moves nothing the watcher compares, and later versions of the
	// same procedure leave what is exposed as it was. Wait for it first.
	settle()
	var out procedures.CaptureOutcome
	for i := 0; ; i++ {
		// Capture until the watcher has seen one: the first capture may
		// land before its baseline.
		var err error
		out, err = writer.Capture(ctx, procedures.CaptureRequest{Code: "a = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=a)\n# " + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		cs, err := sub.Next(tctx)
		cancel()
		if err == nil && len(cs) > 0 && cs[0].Kind == changes.ChangeRemote {
			break
		}
		if i == 5 {
			t.Fatalf("no remote change after %d captures on the other instance", i+1)
		}
	}
	settle()
	if _, _, err := writer.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	waitRemote("a grant")
	settle()
	if _, err := writer.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}}, "t"); err != nil {
		t.Fatal(err)
	}
	waitRemote("a catalogue change")
}

// countedLooks is a real store that counts WatchRemote's looks (each reads
// the catalogue once), so the test can wait for them without timing.
type countedLooks struct {
	procedures.Store
	n *atomic.Int64
}

func (c countedLooks) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	c.n.Add(1)
	return c.Store.Catalogue(ctx)
}
