package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// testSearchCatalogue: a relevance search also matches the CURRENT
// catalogue's tool descriptions (search.Tools): a procedure
// composing a tool whose description holds a word of q is found, below one
// holding the word in its own text; a word most descriptions hold selects
// no tool; a catalogue change changes the matches with no recapture.
func testSearchCatalogue(t *testing.T, newStore NewStore) {
	s := newStore(t)
	direct := In([]string{"alpha_probe", "beta_probe"}, "hd", "kd", At(1))
	direct.Version.Summary = "check the stdout of the payload"
	viaTool := In([]string{"delta_probe", "gamma_reader"}, "hg", "kg", At(2))
	viaTool.Version.Summary = "look at a task"
	other := In([]string{"epsilon_probe", "zeta_probe"}, "he", "ke", At(3))
	other.Version.Summary = "unrelated work"
	for _, in := range []procedures.CaptureInput{direct, viaTool, other} {
		MustCapture(t, s, in)
	}
	find := func(t *testing.T, q string) []string {
		t.Helper()
		got, total := searchFind(t, s, q, nil)
		if total != len(got) {
			t.Fatalf("total %d for %d results", total, len(got))
		}
		return names(got)
	}
	tools := func(stdout string) *procedures.Catalogue {
		desc := map[string]string{
			"alpha_probe": "Probes a queue", "beta_probe": "Probes a site", "delta_probe": "Probes a node",
			"epsilon_probe": "Probes a pilot", "zeta_probe": "Probes a worker", "gamma_reader": "Reads a payload",
		}
		desc[stdout] += " and its stdout"
		var ts []procedures.Tool
		for name, d := range desc {
			ts = append(ts, procedures.Tool{Name: name, Description: d, ReadOnly: true})
		}
		return mustCatalogue(t, ts)
	}

	requireEqual(t, "stdout before any catalogue", emptyToNil(any(find(t, "stdout"))), emptyToNil(any([]string{direct.Name})))
	MustPutCatalogue(t, s, tools("gamma_reader"))
	requireEqual(t, "stdout: the direct match, then through gamma_reader's description", find(t, "stdout"), []string{direct.Name, viaTool.Name})
	requireEqual(t, "a word most descriptions hold selects no tool", emptyToNil(any(find(t, "probes"))), nil)
	requireEqual(t, "a tool description's word alone", find(t, "reads"), []string{viaTool.Name})

	MustPutCatalogue(t, s, tools("epsilon_probe"))
	requireEqual(t, "stdout after the catalogue moved it to epsilon_probe", find(t, "stdout"), []string{direct.Name, other.Name})
	requireEqual(t, "reads still through gamma_reader", find(t, "reads"), []string{viaTool.Name})
	got, _ := searchFind(t, s, "stdout", nil)
	if *got[1].Score >= *got[0].Score {
		t.Fatalf("the match through a description scores %v, the direct one %v", *got[1].Score, *got[0].Score)
	}
}
