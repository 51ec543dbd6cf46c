package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// testToolTotals: Find's totals with tool and cause filters (alone, with
// each other and with the summary filters) equal a brute-force count over
// every procedure after each kind of write that moves a procedure between
// classes or adds procedures: captures, catalogue changes that reclassify,
// retire and unretire, promote, audit prune, a dump loaded into an empty
// store and a dump merged into a full one. (Stores keep per-tool class
// counts for these totals; each step checks them.)
func testToolTotals(t *testing.T, newStore NewStore) {
	t.Run("captures, catalogue changes, retire, promote, prune", func(t *testing.T) {
		s := newStore(t)
		svc := procedures.NewService(s, procedures.Options{})
		check := func(step string) { t.Helper(); RequireToolTotals(t, s, step) }
		if _, err := svc.PutCatalogue(ctx, ToolTotalsCatalogue(false), "test"); err != nil {
			t.Fatal(err)
		}
		CaptureToolTotals(t, s, 0)
		check("after the captures")
		if _, err := svc.PutCatalogue(ctx, ToolTotalsCatalogue(true), "test"); err != nil {
			t.Fatal(err)
		}
		check("after tool_w became read-only")
		if _, err := svc.PutCatalogue(ctx, ToolTotalsCatalogue(true)[1:], "test"); err != nil {
			t.Fatal(err)
		}
		check("after tool_a left the catalogue")
		if _, err := svc.PutCatalogue(ctx, ToolTotalsCatalogue(false), "test"); err != nil {
			t.Fatal(err)
		}
		check("after the first catalogue came back")
		inner := NameOf("tool_a", "tool_b")
		d := Decision(audit.KindRetire, inner, "h0", At(200))
		d.Reason = audit.ReasonRetired
		if _, err := s.SetRetired(ctx, inner, &procedures.Retirement{RetiredBy: "admin", RetiredAt: At(200), Reason: "old"}, d); err != nil {
			t.Fatalf("SetRetired: %v", err)
		}
		check("after retiring " + inner + " (its callers reclassified)")
		d = Decision(audit.KindRetire, inner, "h0", At(201))
		d.Reason = audit.ReasonUnretired
		if _, err := s.SetRetired(ctx, inner, nil, d); err != nil {
			t.Fatalf("SetRetired: %v", err)
		}
		check("after bringing " + inner + " back")
		// A failed procedure whose new version succeeds changes status; an
		// opaque one whose transparent version is promoted changes opacity.
		sig := []string{"tool_a", "tool_c", "tool_w"}
		MustCapture(t, s, Failed(In(sig, "h20", "k20", At(210))))
		check("after a new failed procedure")
		MustCapture(t, s, In(sig, "h21", "k21", At(211)))
		check("after a succeeded version of a failed procedure")
		sig = []string{"tool_b", "tool_x"}
		opaque := In(sig, "h22", "k22", At(212))
		opaque.Version.Opaque = true
		MustCapture(t, s, opaque)
		MustCapture(t, s, In(sig, "h23", "k23", At(213)))
		if _, err := s.Promote(ctx, NameOf(sig...), "h23", Decision(audit.KindPromote, NameOf(sig...), "h23", At(214))); err != nil {
			t.Fatalf("Promote: %v", err)
		}
		check("after a promote")
		CaptureToolTotals(t, s, 1000)
		check("after more captures, some of existing procedures")
		if p, ok := s.(procedures.AuditPruner); ok {
			if _, err := p.PruneDecisions(ctx, At(300)); err != nil {
				t.Fatalf("PruneDecisions: %v", err)
			}
			check("after pruning the audit log")
		}
	})
	t.Run("dump loaded into an empty store", func(t *testing.T) {
		from := newStore(t)
		svc := procedures.NewService(from, procedures.Options{})
		if _, err := svc.PutCatalogue(ctx, ToolTotalsCatalogue(false), "test"); err != nil {
			t.Fatal(err)
		}
		CaptureToolTotals(t, from, 0)
		FillScenarios(t, from)
		dump := MustDump(t, from, "tool totals")
		to := newStore(t) // (on a shared database, from is gone now)
		MustImport(t, to, dump, 7)
		RequireToolTotals(t, to, "after the load")
	})
	t.Run("dump merged into a full store", func(t *testing.T) {
		from := newStore(t)
		MergeSource(t, from)
		CaptureToolTotals(t, from, 0)
		dump := MustDump(t, from, "tool totals")
		to := newStore(t)
		MergeTarget(t, to)
		CaptureToolTotals(t, to, 500)
		RequireToolTotals(t, to, "before the merge")
		MustMerge(t, to, dump, 5)
		RequireToolTotals(t, to, "after the merge")
	})
}

// ToolTotalsCatalogue is the catalogue of CaptureToolTotals: tool_a, tool_b, tool_c read-only, tool_w
// state-changing unless wReadOnly; tool_x is in no catalogue.
func ToolTotalsCatalogue(wReadOnly bool) []procedures.Tool {
	return []procedures.Tool{{Name: "tool_a", ReadOnly: true}, {Name: "tool_b", ReadOnly: true},
		{Name: "tool_c", ReadOnly: true}, {Name: "tool_w", ReadOnly: wReadOnly}}
}

// CaptureToolTotals captures procedures over the tools of
// ToolTotalsCatalogue and tool_x: every signature of one to three of them,
// some failed, some opaque, some with a cause, two calling other
// procedures; offset shifts times and keys (a second call with another
// offset captures the same procedures again, and new versions of some).
func CaptureToolTotals(tb testing.TB, s procedures.Store, offset int) {
	tb.Helper()
	tools := []string{"tool_a", "tool_b", "tool_c", "tool_w", "tool_x"}
	var sigs [][]string
	for i := range tools {
		sigs = append(sigs, []string{tools[i]})
		for j := i + 1; j < len(tools); j++ {
			sigs = append(sigs, []string{tools[i], tools[j]})
			for k := j + 1; k < len(tools); k += 2 {
				sigs = append(sigs, []string{tools[i], tools[j], tools[k]})
			}
		}
	}
	for i, sig := range sigs {
		in := Real(sig, fmt.Sprintf("h%d", i%3), fmt.Sprintf("k%d", offset+i), At(offset+i))
		switch i % 7 {
		case 1:
			in = Failed(in)
		case 3:
			in.Version.Opaque = true
			in.Version.Code += "f = getattr(tools, \"" + sig[0] + "\")\n"
			in.Version.CodeHash = signature.CodeHash(in.Version.Code)
		case 4:
			in = WithCause(in, fmt.Sprintf("cause_%d", i%3), "")
		case 5:
			in = WithCause(in, "cause_0", "")
		}
		if offset > 0 && i%4 == 0 {
			in.Version.Code += fmt.Sprintf("# h%d_%d\n", i, offset) // a new version
			in.Version.CodeHash = signature.CodeHash(in.Version.Code)
		}
		MustCapture(tb, s, in)
	}
	// Procedures calling procedures: their class follows the callee's
	// (catalogue changes, retirement).
	for i, sig := range [][]string{{NameOf("tool_a", "tool_b"), "tool_c"}, {NameOf("tool_a", "tool_b")}, {NameOf("tool_b", "tool_w"), "tool_a"}} {
		in := Real(sig, "hn", fmt.Sprintf("kn%d", offset+i), At(offset+100+i))
		in.Name = fmt.Sprintf("%snested_%d", procedures.ProcPrefix, i)
		MustCapture(tb, s, in)
	}
}

// RequireToolTotals fails the test unless Find on s answers, for queries
// with one or two tools, causes and every kind of summary filter, the
// procedures and totals a brute-force count over every procedure gives:
// each procedure's class taken from a Service's Get (the current
// catalogue) and its stored status, opacity, signature and retirement. The
// total is checked from a full page of one (the store counts) and from a
// page past the end (it counts too), and the page of everything against the
// brute-force list.
func RequireToolTotals(t *testing.T, s procedures.Store, step string) {
	t.Helper()
	all, _ := MustFind(t, s, procedures.Query{})
	if len(all) == 0 {
		t.Fatalf("%s: the store holds no procedure: no test", step)
	}
	svc := procedures.NewService(s, procedures.Options{})
	type row struct {
		name   string
		sig    []string
		causes []string
		class  procedures.Class
	}
	rows := make([]row, 0, len(all))
	toolSet, causeSet := map[string]bool{"no_such_tool": true}, map[string]bool{"no_such_cause": true}
	gets := make([]*procedures.Procedure, len(all))
	if err := inParallel(len(all), func(i int) (err error) {
		if gets[i], err = svc.Get(ctx, all[i].Name); err != nil {
			return fmt.Errorf("%s: Get(%s): %w", step, all[i].Name, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, p := range all {
		g := gets[i]
		c := procedures.ClassOf(p.Status, p.Opaque, p.Signature,
			procedures.Classification{ReadOnly: g.ReadOnly, Problem: g.Problem}, p.Retired != nil, p.Demoted)
		r := row{name: p.Name, sig: p.Signature, class: c}
		for _, l := range p.Causes {
			r.causes = append(r.causes, l.Name)
			causeSet[l.Name] = true
		}
		for _, tool := range p.Signature {
			toolSet[tool] = true
		}
		rows = append(rows, r)
	}
	tools, causes := slices.Sorted(maps.Keys(toolSet)), slices.Sorted(maps.Keys(causeSet))
	yes, no := true, false
	summaries := []procedures.Query{
		{}, {ReadOnly: &yes}, {Exposed: &no}, {Exposed: &yes, AllowMutating: true},
		{Status: procedures.StatusFailed}, {MinTools: 3, ReadOnly: &no},
	}
	var queries []procedures.Query
	with := func(base procedures.Query, tools, causes []string) procedures.Query {
		base.Tools, base.Causes = tools, causes
		return base
	}
	for i, sq := range summaries {
		for j, tool := range tools {
			queries = append(queries, with(sq, []string{tool}, nil))
			if i < 2 && j+1 < len(tools) {
				queries = append(queries, with(sq, []string{tool, tools[j+1]}, nil))
			}
		}
		for j, cause := range causes {
			queries = append(queries, with(sq, nil, []string{cause}))
			if i < 2 && j+1 < len(causes) {
				queries = append(queries, with(sq, nil, []string{cause, causes[j+1]}))
			}
		}
	}
	for i, tool := range tools {
		queries = append(queries, with(procedures.Query{}, []string{tool}, []string{causes[i%len(causes)]}))
	}
	// Each query's checks are independent reads: they run toolTotalsReaders
	// at a time (the suite's time was one round trip after another), and
	// their failures are reported in the order of queries.
	failures := make([][]string, len(queries))
	if err := inParallel(len(queries), func(i int) error {
		q := queries[i]
		var want []string
		for _, r := range rows {
			if q.Match(r.class) && containsAll(r.sig, q.Tools) && (len(q.Causes) == 0 || containsAny(r.causes, q.Causes)) {
				want = append(want, r.name)
			}
		}
		slices.Sort(want)
		desc := fmt.Sprintf("%s: Find(tools %v, causes %v, read_only %s, exposed %s (mutating %v), status %q, min_tools %d)",
			step, q.Tools, q.Causes, show(q.ReadOnly), show(q.Exposed), q.AllowMutating, q.Status, q.MinTools)
		find := func(q procedures.Query) ([]*procedures.Procedure, int, error) {
			ps, total, err := s.Find(ctx, q)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: Find(%+v): %w", desc, q, err)
			}
			return ps, total, nil
		}
		if !q.Summarised() || q.ReadOnly != nil { // the page of everything (the others: the totals)
			page, total, err := find(q)
			if err != nil {
				return err
			}
			got := names(page)
			slices.Sort(got)
			if !slices.Equal(got, want) || total != len(want) {
				failures[i] = append(failures[i], fmt.Sprintf("%s = %v (total %d), want %v (%d)", desc, got, total, want, len(want)))
				return nil
			}
		}
		one := q
		one.Limit = 1
		if _, total, err := find(one); err != nil {
			return err
		} else if total != len(want) {
			failures[i] = append(failures[i], fmt.Sprintf("%s, limit 1: total %d, want %d", desc, total, len(want)))
		}
		one.Offset = len(want) + 3
		if page, total, err := find(one); err != nil {
			return err
		} else if total != len(want) || len(page) != 0 {
			failures[i] = append(failures[i], fmt.Sprintf("%s, past the end: %d procedures, total %d, want none, %d", desc, len(page), total, len(want)))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, fs := range failures {
		for _, f := range fs {
			t.Error(f)
		}
	}
}

// toolTotalsReaders is how many of RequireToolTotals' reads are in flight
// at once.
const toolTotalsReaders = 4

// inParallel calls f(0) … f(n-1), toolTotalsReaders at a time, and returns
// the error of the lowest i whose call failed (every call runs).
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(toolTotalsReaders)
	for i := range n {
		g.Go(func() error { errs[i] = f(i); return nil })
	}
	_ = g.Wait() // each call's error is in errs
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func containsAll(xs, of []string) bool {
	for _, x := range of {
		if !slices.Contains(xs, x) {
			return false
		}
	}
	return true
}

func containsAny(xs, of []string) bool {
	for _, x := range of {
		if slices.Contains(xs, x) {
			return true
		}
	}
	return false
}

func show(b *bool) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}
