package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// searchCorpus is a small corpus with clear winners: each entry's words
// are its own (a signature, a summary, a cause, trigger signals).
type searchDoc struct {
	sig     []string
	summary string
	cause   string
	desc    string
	signals []string
	uses    int // extra usage keys (frequency = 1 + uses)
}

var searchCorpus = []searchDoc{
	{sig: []string{"get_scout_job_details", "get_task_jobs_summary"}, summary: "Check the scouts of a task stuck in scouting",
		cause: "input dataset unavailable", desc: "the input dataset has no replica on disk"},
	{sig: []string{"find_similar_successful_tasks", "get_failed_job_log_summary"}, summary: "Compare failed logs with successful tasks",
		cause: "memory exceeded", desc: "jobs killed by the batch system for RSS", signals: []string{"pilot OOM killer", "exit code 137"}},
	{sig: []string{"get_retry_chain", "retry_task"}, summary: "Retry a task after brokerage check", cause: "transient brokerage failure"},
	{sig: []string{"get_task_jobs_summary", "search_panda_docs"}, summary: "Look up the documentation for an error", uses: 3},
}

// searchFixture captures searchCorpus into s.
func searchFixture(t *testing.T, s procedures.Store) {
	t.Helper()
	for i, d := range searchCorpus {
		in := In(d.sig, fmt.Sprintf("hash%d", i), fmt.Sprintf("k%d", i), At(i))
		in.Version.Summary = d.summary
		if d.cause != "" {
			in = WithCause(in, d.cause, d.desc)
		}
		if len(d.signals) > 0 {
			sig := make([]any, len(d.signals))
			for j, x := range d.signals {
				sig[j] = x
			}
			in.Version.Metadata = map[string]any{"trigger_signals": sig}
		}
		MustCapture(t, s, in)
		for u := 0; u < d.uses; u++ {
			in.UsageKey = fmt.Sprintf("k%d-%d", i, u)
			in.Cause = nil
			MustCapture(t, s, in)
		}
	}
}

func searchFind(t *testing.T, s procedures.Store, q string, mod func(*procedures.Query)) ([]*procedures.Procedure, int) {
	t.Helper()
	terms, err := search.Terms(q)
	if err != nil {
		t.Fatalf("SearchTerms(%q): %v", q, err)
	}
	query := procedures.Query{Search: terms}
	if mod != nil {
		mod(&query)
	}
	return MustFind(t, s, query)
}

func testSearch(t *testing.T, newStore NewStore) {
	scout, logs, retry, docs := NameOf(searchCorpus[0].sig...), NameOf(searchCorpus[1].sig...),
		NameOf(searchCorpus[2].sig...), NameOf(searchCorpus[3].sig...)
	t.Run("Matches", func(t *testing.T) {
		s := newStore(t)
		searchFixture(t, s)
		cases := []struct {
			name  string
			q     string
			mod   func(*procedures.Query)
			want  []string // the matching set, in order when ordered
			order bool     // false: only the first (the clear winner) is checked
		}{
			{"cause name", "memory exceeded", nil, []string{logs}, true},
			{"cause description", "replica", nil, []string{scout}, true},
			{"trigger signal", "OOM", nil, []string{logs}, true},
			{"summary", "brokerage", nil, []string{retry}, true},
			{"tool name words", "scout", nil, []string{scout}, true},
			{"tool name as written", "get_retry_chain", nil, []string{retry}, false},
			{"case does not matter", "DOCUMENTATION", nil, []string{docs}, true},
			{"nothing matches", "zzzz qqqq", nil, nil, true},
			{"lucene syntax is text", `memory AND (OOM OR "x") ~ *:* \ title:[a TO z] +-!`, nil, []string{logs}, false},
			{"clear winner first", "input dataset unavailable on disk scouts", nil, []string{scout}, false},
			{"frequency breaks near ties", "documentation summary", nil, []string{docs}, false},
			{"tool filter first", "summary", func(q *procedures.Query) { q.Tools = []string{"search_panda_docs"} }, []string{docs}, true},
			{"cause filter first", "logs task", func(q *procedures.Query) { q.Causes = []string{"memory exceeded"} }, []string{logs}, true},
			{"status filter first", "task", func(q *procedures.Query) { q.Status = procedures.StatusFailed }, nil, true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, total := searchFind(t, s, c.q, c.mod)
				if total != len(got) {
					t.Errorf("total %d for %d results", total, len(got))
				}
				gotNames := names(got)
				if !c.order {
					// Words are ORed: c.want is the clear winner, first.
					if len(got) == 0 || got[0].Name != c.want[0] {
						t.Fatalf("matches of %q = %v, want %s first", c.q, gotNames, c.want[0])
					}
					return
				}
				requireEqual(t, "matches of "+c.q, emptyToNil(any(gotNames)), emptyToNil(any(c.want)))
				for i, p := range got {
					if p.Score == nil || *p.Score <= 0 {
						t.Fatalf("%s has score %v", p.Name, p.Score)
					}
					if i > 0 && *p.Score > *got[i-1].Score {
						t.Fatalf("scores not descending: %v", gotNames)
					}
				}
			})
		}
	})
	t.Run("FrequencyBreaksEqualText", func(t *testing.T) {
		s := newStore(t)
		// Two procedures with the same words; b is used more.
		a := In([]string{"alpha_tool", "gamma_tool"}, "ha", "k1", At(1))
		a.Version.Summary = "same words"
		b := In([]string{"beta_tool", "gamma_tool"}, "hb", "k2", At(2))
		b.Version.Summary = "same words"
		MustCapture(t, s, a)
		MustCapture(t, s, b)
		b.UsageKey = "k3"
		MustCapture(t, s, b)
		got, total := searchFind(t, s, "same words gamma", nil)
		requireEqual(t, "order", names(got), []string{b.Name, a.Name})
		if total != 2 {
			t.Fatalf("total %d", total)
		}
		page, total := searchFind(t, s, "same words gamma", func(q *procedures.Query) { q.Offset, q.Limit = 1, 1 })
		requireEqual(t, "second page", names(page), []string{a.Name})
		if total != 2 {
			t.Fatalf("paged total %d", total)
		}
	})
	t.Run("LaterCapturesAddText", func(t *testing.T) {
		s := newStore(t)
		in := In([]string{"one_tool", "two_tool"}, "h1", "k1", At(1))
		MustCapture(t, s, in)
		if got, _ := searchFind(t, s, "stagein", nil); len(got) != 0 {
			t.Fatalf("matched before: %v", names(got))
		}
		in = WithCause(in, "stagein timeout", "")
		in.UsageKey = "k2"
		MustCapture(t, s, in)
		got, _ := searchFind(t, s, "stagein", nil)
		requireEqual(t, "after a cause", names(got), []string{in.Name})
	})
	t.Run("InvalidTerms", func(t *testing.T) {
		s := newStore(t)
		for _, terms := range [][]string{{"two words"}, {"Upper"}, {"a*"}, {""}, {`x"`}} {
			_, _, err := s.Find(context.Background(), procedures.Query{Search: terms})
			RequireCode(t, err, fault.CodeInvalid)
		}
	})
}
