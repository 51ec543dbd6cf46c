package signature

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// namesGolden is the naming rule's golden corpus; it also seeds FuzzNames.
const namesGolden = "testdata/names/golden.json"

// nameCase is one golden case: a signature, the catalogue tools known, and
// what Names and Plain say (rewritten by -update).
type nameCase struct {
	Case      string   `json:"case"`
	Signature []string `json:"signature"`
	Known     []string `json:"known"`
	Names     []string `json:"names"`
	Plain     bool     `json:"plain"`
}

func knownSet(tools []string) func(string) bool {
	return func(t string) bool { return slices.Contains(tools, t) }
}

func readNameCases(tb testing.TB) []nameCase {
	tb.Helper()
	raw, err := os.ReadFile(namesGolden)
	if err != nil {
		tb.Fatal(err)
	}
	var cs []nameCase
	if err := json.Unmarshal(raw, &cs); err != nil {
		tb.Fatal(err)
	}
	if len(cs) == 0 {
		tb.Fatal("empty golden corpus")
	}
	return cs
}

// TestNamesGolden compares Names and Plain with the golden corpus. Run with
// -update to rewrite names and plain from the current output, then review the
// diff.
func TestNamesGolden(t *testing.T) {
	cs := readNameCases(t)
	for i := range cs {
		c := &cs[i]
		names := Names(c.Signature, knownSet(c.Known))
		plain := Plain(c.Signature)
		if *update {
			c.Names, c.Plain = names, plain
			continue
		}
		t.Run(c.Case, func(t *testing.T) {
			if !slices.Equal(names, c.Names) || plain != c.Plain {
				t.Errorf("Names = %q, Plain = %v; golden %q, %v (run go test -run TestNamesGolden -update)", names, plain, c.Names, c.Plain)
			}
			checkNames(t, c.Signature, names)
		})
	}
	if *update {
		out, err := json.MarshalIndent(cs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(namesGolden, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every name in the corpus is the name of one signature only.
	owner := map[string]string{}
	for _, c := range cs {
		for _, n := range Names(c.Signature, knownSet(c.Known)) {
			key := strings.Join(c.Signature, "\x00")
			if o, ok := owner[n]; ok && o != key {
				t.Errorf("name %s is given to %q and %q", n, strings.Split(o, "\x00"), c.Signature)
			}
			owner[n] = key
		}
	}
}

// TestSquatting is the reproduction: the names an attacker with only
// capture can reach never equal the name of the legitimate signature, in
// whatever order they are captured (the rule has no order to depend on).
func TestSquatting(t *testing.T) {
	catalogue := knownSet([]string{"get_task_input_datasets", "search_panda_docs", "kill_job",
		"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"})
	cases := []struct {
		name   string
		legit  []string
		squats [][]string
	}{
		{"double underscore joins two tools", []string{"get_task_input_datasets", "search_panda_docs"},
			[][]string{{"get_task_input_datasets__search_panda_docs"}}},
		{"homoglyphs map to underscores", []string{"k_ll_job"},
			[][]string{{"kéll_job"}, {"k\u0456ll_job"}, {"k_ll_job_"}}},
		{"homoglyphs of a catalogue tool", []string{"kill_job"},
			[][]string{{"k\u0456ll_job"}, {"ki\u217Cl_job"}}},
		{"edge underscores", []string{"a", "b"},
			[][]string{{"a_", "_b"}, {"a__b"}, {"a_", "b"}}},
		{"a 60-character plain name shaped like a truncated one",
			[]string{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"},
			[][]string{{"compare_failed_vs_successful_job_logs", "find_s_4fb9185c"}}},
		{"a long signature with an invented tool and the same prefix",
			[]string{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"},
			[][]string{{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "invented_1"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			legit := Names(c.legit, catalogue)
			if legit[0] != ProcedureName(c.legit) {
				t.Fatalf("legitimate %q is named %s, want its Bamboo name %s", c.legit, legit[0], ProcedureName(c.legit))
			}
			for _, sq := range c.squats {
				for _, n := range Names(sq, catalogue) {
					if slices.Contains(legit, n) {
						t.Errorf("%q can take %s, a name of %q", sq, n, c.legit)
					}
				}
			}
		})
	}
}

func TestNamesTable(t *testing.T) {
	long := []string{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"}
	cases := []struct {
		name   string
		sig    []string
		known  []string
		bamboo bool // names[0] is ProcedureName
	}{
		{"plain, nothing known", []string{"a", "b"}, nil, true},
		{"exactly 60", []string{strings.Repeat("x", 54)}, nil, true},
		{"61, nothing known", []string{strings.Repeat("x", 55)}, nil, false},
		{"61, known", []string{strings.Repeat("x", 55)}, []string{strings.Repeat("x", 55)}, true},
		{"long, all known", long, long, true},
		{"long, one unknown", long, long[:2], false},
		{"nested reference", []string{"get_jobs", "proc__fetch_logs__get_jobs"}, []string{"get_jobs"}, false},
		{"non-ASCII letter", []string{"café"}, []string{"café"}, false},
		{"leading underscore", []string{"_a"}, nil, false},
		{"trailing underscore", []string{"a_"}, nil, false},
		{"digits", []string{"a1", "b2_3"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names := Names(c.sig, knownSet(c.known))
			if got := names[0] == ProcedureName(c.sig); got != c.bamboo {
				t.Errorf("Names = %q: Bamboo name %v, want %v", names, got, c.bamboo)
			}
			if names[len(names)-1] != HashedName(c.sig) {
				t.Errorf("Names = %q: the last is not HashedName %s", names, HashedName(c.sig))
			}
			if Name(c.sig) != Names(c.sig, nil)[0] {
				t.Errorf("Name = %s, want Names(nil)[0] %s", Name(c.sig), Names(c.sig, nil)[0])
			}
			checkNames(t, c.sig, names)
		})
	}
}

var (
	identName  = regexp.MustCompile(`^proc__[0-9A-Za-z_]{0,54}$`)
	hashedForm = regexp.MustCompile(`___[0-9a-f]{20}$`)
)

// checkNames checks the invariants of Names(sig, ...) = names: valid
// identifiers of at most 60 characters; the last is HashedName; a Bamboo
// name comes first when there is one, and it has the form its signature
// allows (plain: lossless, no "___", not truncated-shaped; long: truncated);
// a hashed name never has another form.
func checkNames(t *testing.T, sig []string, names []string) {
	t.Helper()
	if len(names) == 0 || len(names) > 2 {
		t.Fatalf("Names(%q) = %q: want 1 or 2 names", sig, names)
	}
	for _, n := range names {
		if !identName.MatchString(n) {
			t.Fatalf("Names(%q): %q is not a valid name", sig, n)
		}
	}
	hashed := names[len(names)-1]
	if hashed != HashedName(sig) || !hashedForm.MatchString(hashed) || truncatedShape(hashed) {
		t.Fatalf("Names(%q): last %q is not a well-formed HashedName", sig, hashed)
	}
	if len(names) == 1 {
		if Plain(sig) {
			t.Fatalf("Names(%q) = %q: a plain signature without its Bamboo name", sig, names)
		}
		return
	}
	bamboo := names[0]
	if bamboo != ProcedureName(sig) || hashedForm.MatchString(bamboo) {
		t.Fatalf("Names(%q): first %q is not the Bamboo name %q, or looks hashed", sig, bamboo, ProcedureName(sig))
	}
	if Plain(sig) {
		if strings.Contains(bamboo, "___") || truncatedShape(bamboo) || !slices.Equal(strings.Split(bamboo[len(procPrefix):], "__"), sig) {
			t.Fatalf("Names(%q): plain name %q is not lossless", sig, bamboo)
		}
	} else if !truncatedShape(bamboo) {
		t.Fatalf("Names(%q): %q is neither plain nor truncated", sig, bamboo)
	}
}

// splitSignature turns fuzz input into a signature: entries separated by
// ",", sorted and de-duplicated, empty entries dropped.
func splitSignature(s string) []string {
	var sig []string
	for _, e := range strings.Split(s, ",") {
		if e != "" && !slices.Contains(sig, e) {
			sig = append(sig, e)
		}
	}
	sort.Strings(sig)
	return sig
}

// FuzzNames checks the rule's invariants on arbitrary pairs of signatures,
// with every tool known or none: each has well-formed names, and two
// different signatures never share a name, except two truncated Bamboo names
// (32-bit, the documented residue the next name resolves), which a fuzzer
// does not find. Seeded with the golden corpus, each case paired with every
// other.
func FuzzNames(f *testing.F) {
	cs := readNameCases(f)
	for _, a := range cs {
		for _, b := range cs {
			f.Add(strings.Join(a.Signature, ","), strings.Join(b.Signature, ","), true)
			f.Add(strings.Join(a.Signature, ","), strings.Join(b.Signature, ","), false)
		}
	}
	all := func(string) bool { return true }
	f.Fuzz(func(t *testing.T, a, b string, known bool) {
		sa, sb := splitSignature(a), splitSignature(b)
		var kn func(string) bool
		if known {
			kn = all
		}
		na, nb := Names(sa, kn), Names(sb, kn)
		checkNames(t, sa, na)
		checkNames(t, sb, nb)
		if slices.Equal(sa, sb) {
			if !slices.Equal(na, nb) {
				t.Fatalf("one signature %q, two namings %q and %q", sa, na, nb)
			}
			return
		}
		for _, x := range na {
			if slices.Contains(nb, x) {
				t.Fatalf("%q and %q share the name %s", sa, sb, x)
			}
		}
	})
}

// BenchmarkNames: the naming rule per signature, for a plain pair, a long
// catalogue-only signature and a homoglyph (hashed).
func BenchmarkNames(b *testing.B) {
	all := func(string) bool { return true }
	for _, c := range []struct {
		name string
		sig  []string
	}{
		{"plain", []string{"get_task_input_datasets", "search_panda_docs"}},
		{"long", []string{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"}},
		{"hashed", []string{"k\u0456ll_job"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = Names(c.sig, all)
			}
		})
	}
}
