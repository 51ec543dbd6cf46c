package procedures_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// countingStore counts the catalogue writes that reach the store.
type countingStore struct {
	*embedded.Store
	puts atomic.Int64
}

func (s *countingStore) PutCatalogue(ctx context.Context, c *procedures.Catalogue) error {
	s.puts.Add(1)
	return s.Store.PutCatalogue(ctx, c)
}

// listedTool is a tool of server fs as mcpdispatch.CatalogueOf makes it
// from a listing: its listed hash set.
func listedTool(name string, readOnly bool, schema map[string]any) procedures.Tool {
	t := procedures.Tool{Name: "fs__" + name, Description: name, ReadOnly: readOnly, ExternalAccess: true,
		InputSchema: schema, Server: "fs", UpstreamName: name}
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{}
	}
	t.Listed = procedures.ListedHash(t)
	return t
}

func pathSchema(typ string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": typ}}}
}

func newCountingService(t *testing.T) (*procedures.Service, *countingStore) {
	t.Helper()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cs := &countingStore{Store: store}
	return procedures.NewService(cs, procedures.Options{}), cs
}

// TestRefreshCatalogueFollowsTheServer: what a server lists is merged into
// the catalogue — a new tool added as listed, a changed schema replacing
// the entry (its procedures' versions stale, their grants inactive,
// nothing else touched), an unchanged listing writing nothing, a tool the
// server no longer lists leaving the catalogue (its procedures' tool
// unknown, nothing deleted), and each change audited.
func TestRefreshCatalogueFollowsTheServer(t *testing.T) {
	ctx := context.Background()
	svc, store := newCountingService(t)
	read, list := listedTool("read", true, pathSchema("string")), listedTool("list", true, nil)
	r, err := svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{read, list})
	if err != nil || !slices.Equal(r.Added, []string{"fs__list", "fs__read"}) || store.puts.Load() != 1 {
		t.Fatalf("first refresh %+v, %v, %d writes", r, err, store.puts.Load())
	}
	p := mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.fs__read(path=p)\n"}).Procedure
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}

	// Nothing changed: nothing written, nothing audited.
	before := auditCount(t, svc)
	if r, err := svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{list, read}); err != nil || r.Changes() || store.puts.Load() != 1 {
		t.Fatalf("unchanged refresh %+v, %v, %d writes", r, err, store.puts.Load())
	}
	if auditCount(t, svc) != before {
		t.Fatal("an unchanged refresh was audited")
	}

	// A changed input schema: stale, grant inactive (catalogue_drift).
	changed := listedTool("read", true, pathSchema("integer"))
	r, err = svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{list, changed})
	if err != nil || !slices.Equal(r.Changed, []string{"fs__read"}) || len(r.Added)+len(r.Removed) != 0 {
		t.Fatalf("refresh %+v, %v", r, err)
	}
	got, err := svc.Get(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Stale || len(got.Drift) != 1 || got.Drift[0].Change != "input_schema" {
		t.Fatalf("stale %v drift %+v", got.Stale, got.Drift)
	}
	if got.AutoRun.Active || got.AutoRun.InactiveReason == nil || *got.AutoRun.InactiveReason != binding.InactiveCatalogueDrift {
		t.Fatalf("auto_run %+v", got.AutoRun)
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindCatalogue, Limit: 1})
	if err != nil || len(ds) != 1 || ds[0].Reason != audit.ReasonCatalogueRefreshed || ds[0].Actor != procedures.RefreshActor ||
		ds[0].Note != "server fs: changed 1 (fs__read)" {
		t.Fatalf("audit %+v, %v", ds, err)
	}

	// Removed: the tool leaves the catalogue; the procedure, its version
	// and its grant stay.
	r, err = svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{list})
	if err != nil || !slices.Equal(r.Removed, []string{"fs__read"}) {
		t.Fatalf("refresh %+v, %v", r, err)
	}
	got, err = svc.Get(ctx, p.Name)
	if err != nil || !slices.Equal(got.UnknownTools, []string{"fs__read"}) || !got.AutoRun.Enabled || got.AutoRun.Active {
		t.Fatalf("after removal %+v, %v", got, err)
	}
	// Back as it was reviewed: the grant applies again.
	if _, err := svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{list, read}); err != nil {
		t.Fatal(err)
	}
	if got, err = svc.Get(ctx, p.Name); err != nil || !got.AutoRun.Active || got.Stale {
		t.Fatalf("back %+v, %v", got.AutoRun, err)
	}
}

// TestRefreshCatalogueKeepsTheOperatorsEntry: an entry an operator
// edited (here read_only, through PUT /v1/tools) is kept over a refresh
// that lists the tool otherwise, and over one that no longer lists it;
// given back (the server's entry put again), it follows the server.
func TestRefreshCatalogueKeepsTheOperatorsEntry(t *testing.T) {
	ctx := context.Background()
	svc, _ := newCountingService(t)
	read, write := listedTool("read", true, pathSchema("string")), listedTool("write", false, nil)
	if _, err := svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{read, write}); err != nil {
		t.Fatal(err)
	}
	edited := read
	edited.ReadOnly = false // the operator does not trust this annotation
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{edited, write}, "alice"); err != nil {
		t.Fatal(err)
	}
	newer := listedTool("read", true, pathSchema("integer"))
	r, err := svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{newer, write})
	if err != nil || r.Changes() || !slices.Equal(r.Kept, []string{"fs__read"}) {
		t.Fatalf("refresh %+v, %v", r, err)
	}
	r, err = svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{write})
	if err != nil || r.Changes() || !slices.Equal(r.Kept, []string{"fs__read"}) {
		t.Fatalf("refresh without the tool %+v, %v", r, err)
	}
	cat, err := svc.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cat.Tool("fs__read"); !ok || got.ReadOnly || got.FollowsServer() {
		t.Fatalf("the operator's entry is %+v, %v", got, ok)
	}
	// Given back: the server's entry, as listed, follows the server again.
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{read, write}, "alice"); err != nil {
		t.Fatal(err)
	}
	r, err = svc.RefreshCatalogue(ctx, "fs", []procedures.Tool{newer, write})
	if err != nil || !slices.Equal(r.Changed, []string{"fs__read"}) {
		t.Fatalf("refresh after giving back %+v, %v", r, err)
	}
}

// TestRefreshToolsLeavesOtherServers: a refresh touches only its server's
// entries, never adds a tool under a name another server's entry holds,
// and hands back the stored tools themselves when nothing changed.
func TestRefreshToolsLeavesOtherServers(t *testing.T) {
	other := procedures.Tool{Name: "fs__read", Server: "git", UpstreamName: "read", ReadOnly: true}
	other.Listed = procedures.ListedHash(other)
	hand := procedures.Tool{Name: "gitlog", Server: "git"}
	stored, err := procedures.NewCatalogue([]procedures.Tool{other, hand})
	if err != nil {
		t.Fatal(err)
	}
	tools, r := procedures.RefreshTools(stored, "fs", []procedures.Tool{listedTool("read", true, nil)})
	if r.Changes() || !slices.Equal(r.Taken, []string{"fs__read"}) || len(tools) != 2 || &tools[0] != &stored.Tools[0] {
		t.Fatalf("refresh %+v, tools %+v", r, tools)
	}
	tools, r = procedures.RefreshTools(stored, "git", nil)
	if !slices.Equal(r.Removed, []string{"fs__read"}) || !slices.Equal(r.Kept, []string{"gitlog"}) || len(tools) != 1 || tools[0].Name != "gitlog" {
		t.Fatalf("refresh of git %+v, tools %+v", r, tools)
	}
}

func auditCount(t *testing.T, svc *procedures.Service) int {
	t.Helper()
	ds, err := svc.Decisions(context.Background(), audit.DecisionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}
