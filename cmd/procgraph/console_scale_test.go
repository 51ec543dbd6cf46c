package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/graph/embedded"
)

// auditActors are the actors of mustFillAudit's records.
var auditActors = []string{"operator", "agent", "procgraph", "ci-bot", "on-call"}

// auditFillBatch is how many audit records mustFillAudit writes per
// transaction.
const auditFillBatch = 10_000

// mustFillAudit writes n audit records straight into the embedded store
// file at path, before a server opens it (the API appends records only as
// decisions are taken): kinds and procedures in rotation, actors at random, one in
// seven denied, grants and approvals with a note, a second apart up to now.
// They go in as an import loads a dump's (Store.Load, auditFillBatch a
// transaction; each record written as AppendDecision writes it): one
// AppendDecision, one transaction, each was 100,000 commits.
func mustFillAudit(tb testing.TB, path string, n int) {
	tb.Helper()
	st, err := embedded.Open(path, embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	kinds := []audit.DecisionKind{audit.KindInvoke, audit.KindTurn, audit.KindGrant, audit.KindApproval, audit.KindInvoke}
	reasons := map[audit.DecisionKind]string{audit.KindInvoke: audit.ReasonReadOnly, audit.KindTurn: audit.ReasonSessionPolicy,
		audit.KindGrant: audit.ReasonGranted, audit.KindApproval: audit.ReasonOperatorApproved}
	start := time.Now().Add(-time.Duration(n) * time.Second)
	rng := rand.New(rand.NewPCG(3, 4))
	const dumpID = "console-scale-audit"
	var batch []dump.Record
	load := func(line int) {
		if err := st.Load(context.Background(), dump.LoadMarker{DumpID: dumpID, Line: int64(line)}, batch); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * time.Second)
		d := audit.Decision{ID: audit.NewDecisionID(at), Kind: kinds[i%len(kinds)], Procedure: fmt.Sprintf("proc__tool_%03d__tool_%03d", i%50, 50+i%70),
			CodeHash: fmt.Sprintf("%064x", i%97), Phase: audit.PhaseAutomatic, Outcome: audit.Allowed, Actor: auditActors[rng.IntN(len(auditActors))], At: at}
		d.Reason = reasons[d.Kind]
		if i%7 == 0 {
			d.Outcome, d.Reason, d.Suggestion = audit.Denied, audit.ReasonStateChangingAuto, "ask for a review"
		}
		if d.Kind == audit.KindGrant || d.Kind == audit.KindApproval {
			d.Note = fmt.Sprintf("reviewed the call of task %d with the on-call engineer", i)
		}
		batch = append(batch, dump.Record{Type: dump.TypeDecision, Decision: &d})
		if len(batch) == auditFillBatch || i == n-1 {
			load(i + 1)
		}
	}
	if err := st.FinishLoad(context.Background(), dumpID); err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// mustFillSpread captures n procedures as mustFillProcedures does, their
// tool pairs taken by distance ((0,1), (1,2), …, then (0,2), …) so that the
// most frequent page spreads over every cause and many tools.
func mustFillSpread(tb testing.TB, s *server, n int) {
	tb.Helper()
	mustFillPairs(tb, s, func(send func(a, b int) bool) {
		for d := 1; d < fillTools; d++ {
			for i := 0; i+d < fillTools; i++ {
				if !send(i, i+d) {
					return
				}
			}
		}
	}, n)
}

// firstRender opens a console page in a fresh document and returns when it
// rendered, in ms since the navigation began (the console's
// procgraph:rendered mark), after ready (a JavaScript condition, "" for
// none) holds too; then it screenshots the page as name.
func firstRender(tb testing.TB, tab *browserTab, base, hash, ready, name string) float64 {
	tb.Helper()
	tab.run(tb, chromedp.Navigate("about:blank"))
	tab.run(tb, chromedp.Navigate(base+"/ui/"+hash))
	tab.waitReady(tb)
	if ready != "" {
		tab.waitJS(tb, ready)
	}
	var ms float64
	tab.eval(tb, `performance.getEntriesByName('procgraph:rendered').slice(-1)[0].startTime`, &ms)
	tab.screenshot(tb, name)
	return ms
}

// TestConsoleAtScale: the console on a store of 1,000 procedures (3,000
// edges: two tools and a cause each) and 100,000 audit records, in a real
// Chromium: each page's first render is measured and logged (no timing
// assertion: docs/benchmarks.md keeps the figures) and screenshotted; the
// audit page filters on the server (a page of matches among 100,000, the
// note and reason shown) and downloads the filtered records as JSON
// Lines; the graph explorer says how many procedures the store holds and
// how many it shows, and loads more on demand.
func TestConsoleAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store of 100,000 audit records")
	}
	tab := mustBrowser(t)
	path := filepath.Join(t.TempDir(), "p.db")
	t0 := time.Now()
	mustFillAudit(t, path, 100000)
	s := mustServe(t, serverOpts{Data: path})
	mustFillSpread(t, s, 1000)
	t.Logf("filled 100,000 audit records and 1,000 procedures in %v", time.Since(t0).Round(time.Millisecond))

	renders := map[string]float64{}
	renders["procedures"] = firstRender(t, tab, s.URL, "#/procedures", `document.querySelectorAll('#procedures tbody tr').length > 0`, "scale-procedures")
	renders["graph"] = firstRender(t, tab, s.URL, "#/graph", `window.procgraphExplorer.ready`, "scale-graph")
	var laidOut float64
	tab.eval(t, `window.procgraphExplorer.timing.laidOut`, &laidOut)
	renders["graph laid out"] = laidOut
	renders["audit"] = firstRender(t, tab, s.URL, "#/audit", `document.querySelectorAll('.audit tbody tr').length === 100`, "scale-audit")
	renders["audit filtered"] = firstRender(t, tab, s.URL, "#/audit?outcome=denied&actor=ci-bot&kind=invoke", `document.querySelectorAll('.audit tbody tr').length > 0`, "scale-audit-filtered")
	renders["health"] = firstRender(t, tab, s.URL, "#/health", `!!document.getElementById('health-summary')`, "scale-health")
	renders["drift"] = firstRender(t, tab, s.URL, "#/drift", `!!document.getElementById('drift-total')`, "scale-drift")
	var parts []string
	for _, p := range []string{"procedures", "graph", "graph laid out", "audit", "audit filtered", "health", "drift"} {
		parts = append(parts, fmt.Sprintf("%s %.0f ms", p, renders[p]))
	}
	t.Logf("first render at 1,000 procedures / 3,000 edges / 100,000 audit records: %s", strings.Join(parts, ", "))

	t.Run("audit", func(t *testing.T) {
		tab.open(t, s.URL, "#/audit?outcome=denied&actor=ci-bot&kind=invoke")
		var rows []map[string]string
		tab.eval(t, `[...document.querySelectorAll('.audit tbody tr')].map((tr) => Object.fromEntries([...tr.children].map((td, i) => [document.querySelectorAll('.audit thead th')[i].innerText, td.innerText])))`, &rows)
		if len(rows) != 100 {
			t.Fatalf("%d rows of denied invokes by ci-bot, want a full page of 100", len(rows))
		}
		for _, r := range rows {
			if r["Outcome"] != "denied" || r["Actor"] != "ci-bot" || r["Kind"] != "invoke" || r["Reason"] != audit.ReasonStateChangingAuto {
				t.Fatalf("a row the filters do not select: %v", r)
			}
		}
		if tab.count(t, "#older") != 1 {
			t.Fatal("no older page")
		}
		// The note column, on grants.
		tab.open(t, s.URL, "#/audit?kind=grant")
		if got := tab.text(t, ".audit tbody tr"); !strings.Contains(got, "reviewed the call of task") {
			t.Fatalf("the note is not shown: %q", got)
		}
		// The form keeps the filters and applies new ones on the server.
		tab.run(t, chromedp.SetValue("#f-actor", "on-call", chromedp.ByQuery), chromedp.SetValue("#f-outcome", "denied", chromedp.ByQuery),
			chromedp.Click("#apply", chromedp.ByQuery))
		tab.waitJS(t, `location.hash.includes('actor=on-call') && document.getElementById('view').dataset.ready === 'true' && document.getElementById('view').dataset.rendered === location.hash`)
		if got := tab.text(t, ".audit tbody"); strings.Contains(got, "allowed") || !strings.Contains(got, "on-call") {
			t.Fatalf("the applied filters show %q", got)
		}
		// A time range: the five minutes before the newest record.
		want := s.decisions(t, "limit=1")
		newest, err := time.Parse(time.RFC3339Nano, want[0]["at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		since := newest.Add(-5 * time.Minute).UTC().Truncate(time.Second)
		n := len(s.decisions(t, "limit=1000&kind=grant&since="+since.Format(time.RFC3339)))
		tab.open(t, s.URL, "#/audit?kind=grant&since="+since.Format(time.RFC3339))
		if got := tab.count(t, ".audit tbody tr"); got != min(n, 100) || n == 0 {
			t.Fatalf("%d grants in the last five minutes shown, the API lists %d", got, n)
		}
		// A datetime-local input's value is normalised: whole minutes
		// without their ":00" seconds.
		wantSince := since.Format("2006-01-02T15:04:05")
		if since.Second() == 0 {
			wantSince = since.Format("2006-01-02T15:04")
		}
		if got := tab.value(t, "#f-since"); got != wantSince {
			t.Fatalf("the since input shows %q", got)
		}
		// The download: every filtered record, one JSON object a line.
		tab.open(t, s.URL, "#/audit?actor=procgraph&outcome=denied")
		// The file the page saves, read from its Blob (the console's CSP
		// lets nothing fetch a blob: URL).
		tab.run(t, chromedp.Evaluate(`window.__dl = null; const made = URL.createObjectURL;
			URL.createObjectURL = (b) => { window.__blob = b; return made(b); };
			HTMLAnchorElement.prototype.click = function () { const a = this; window.__blob.text().then((t) => { window.__dl = { name: a.download, text: t }; }); }; true`, nil))
		tab.run(t, chromedp.Click("#download", chromedp.ByQuery))
		tab.waitJS(t, `window.__dl !== null`)
		var dl struct{ Name, Text string }
		tab.eval(t, `window.__dl`, &dl)
		lines := strings.Split(strings.TrimSuffix(dl.Text, "\n"), "\n")
		all := 0
		for before := ""; ; {
			var page struct {
				Decisions []map[string]any `json:"decisions"`
				Next      *string          `json:"next"`
			}
			s.get(t, "/v1/decisions?actor=procgraph&outcome=denied&limit=1000"+before).Into(t, &page)
			all += len(page.Decisions)
			if page.Next == nil {
				break
			}
			before = "&before=" + *page.Next
		}
		if dl.Name != "procgraph-audit.jsonl" || len(lines) != all || all < 2000 {
			t.Fatalf("downloaded %s with %d lines, the API lists %d", dl.Name, len(lines), all)
		}
		for _, l := range lines {
			if !strings.Contains(l, `"actor":"procgraph"`) || !strings.Contains(l, `"outcome":"denied"`) {
				t.Fatalf("a downloaded line the filters do not select: %s", l)
			}
		}
		if got := tab.text(t, "#notice"); !strings.Contains(got, fmt.Sprintf("Downloaded %d records", all)) {
			t.Fatalf("notice %q", got)
		}
		tab.mustClean(t, "audit at scale")
	})

	t.Run("graph", func(t *testing.T) {
		tab.open(t, s.URL, "#/graph")
		tab.waitJS(t, `window.procgraphExplorer.ready`)
		if got := tab.text(t, "#g-total"); got != "1000 procedures and 3000 edges in the store" {
			t.Fatalf("total %q", got)
		}
		shown := tab.text(t, "#g-shown")
		if !strings.Contains(shown, "shown: 100 procedures") {
			t.Fatalf("shown %q", shown)
		}
		if got := tab.text(t, "#g-truncated"); !strings.Contains(got, "more are left out") {
			t.Fatalf("the view does not say procedures are left out: %q", got)
		}
		var px float64
		tab.eval(t, `window.procgraphExplorer.labelPx`, &px)
		if px < 11 {
			t.Fatalf("labels are drawn at %.1f px at the default zoom", px)
		}
		tab.run(t, chromedp.Click("#g-more", chromedp.ByQuery))
		tab.waitJS(t, `window.procgraphExplorer.ready && document.getElementById('g-shown').innerText.includes('shown: 200 procedures')`)
		tab.screenshot(t, "scale-graph-more")
		for i := 0; i < 8; i++ {
			tab.run(t, chromedp.Click("#g-more", chromedp.ByQuery))
			tab.waitJS(t, fmt.Sprintf(`window.procgraphExplorer.ready && document.getElementById('g-shown').innerText.includes('shown: %d procedures')`, 300+100*i))
		}
		if tab.count(t, "#g-more") != 0 || tab.count(t, "#g-truncated") != 0 {
			t.Fatal("with every procedure shown, the view still offers more or says some are left out")
		}
		if got := tab.text(t, "#g-shown"); !strings.Contains(got, "1000 procedures") || !strings.Contains(got, "3000 edges") {
			t.Fatalf("all shown: %q", got)
		}
		tab.run(t, chromedp.SetValue("#g-group", "tool", chromedp.ByQuery))
		tab.run(t, chromedp.Evaluate(`document.getElementById('g-group').dispatchEvent(new Event('change')); true`, nil))
		tab.waitJS(t, `window.procgraphExplorer.ready && window.procgraphExplorer.by === 'tool'`)
		tab.screenshot(t, "scale-graph-all-by-tool")
		tab.mustClean(t, "graph at scale")
	})
}
