package signature

import (
	"maps"
	"testing"
)

// TestCanonicalParams checks the canonical program up to parameter names
// (AnalyzeCanonicalParams): blocks that differ only in their parameters'
// names share a hash, and the names map each block's parameters onto the
// program's; blocks whose parameters feed other arguments do not.
func TestCanonicalParams(t *testing.T) {
	type block struct {
		code   string
		params map[string]string
	}
	for _, tc := range []struct {
		name string
		a, b block
		same bool
	}{
		{"a lifted binding's name and the keyword's", block{"s = tools.get_task(task_id=task)\nreturn s\n", map[string]string{"task": "task_id"}},
			block{"return tools.get_task(task_id=task_id)\n", map[string]string{"task_id": "task_id"}}, true},
		{"two parameters swapped by name", block{"return tools.kill(a=x, b=y)\n", map[string]string{"x": "a", "y": "b"}},
			block{"return tools.kill(a=y, b=x)\n", map[string]string{"y": "a", "x": "b"}}, true},
		{"independent reads in another order", block{"a = tools.get_a(k=m)\nb = tools.get_b(k=n)\nreturn [a, b]\n", map[string]string{"m": "k", "n": "k_2"}},
			block{"b = tools.get_b(k=q)\na = tools.get_a(k=r)\nreturn [a, b]\n", map[string]string{"r": "k", "q": "k_2"}}, true},
		{"a keyword that is a built-in's name", block{"return tools.get_a(len=x)\n", map[string]string{"x": "len_2"}},
			block{"return tools.get_a(len=y)\n", map[string]string{"y": "len_2"}}, true},
		{"one parameter passed twice, two parameters", block{"return tools.kill(a=x, b=x)\n", nil}, block{"return tools.kill(a=x, b=y)\n", nil}, false},
		{"another keyword", block{"return tools.kill(a=x)\n", nil}, block{"return tools.kill(b=x)\n", nil}, false},
		{"a parameter and a literal", block{"return tools.kill(a=x)\n", nil}, block{"return tools.kill(a=1)\n", nil}, false},
		{"a parameter and a nested function's parameter", block{"def f(k):\n    return tools.get_a(k=k)\nreturn f(x)\n", nil},
			block{"def f(k):\n    return tools.get_a(k=x)\nreturn f(x)\n", nil}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ca, pa, err := AnalyzeCanonicalParams(tc.a.code, Starlark, testReadOnly)
			if err != nil {
				t.Fatal(err)
			}
			_, cb, pb, err := AnalyzeCanonicalParams(tc.b.code, Starlark, testReadOnly)
			if err != nil {
				t.Fatal(err)
			}
			if (ca.Hash == cb.Hash) != tc.same {
				t.Fatalf("same hash %v, want %v:\n%s\n%s", ca.Hash == cb.Hash, tc.same, ca.Program, cb.Program)
			}
			if tc.a.params != nil && !maps.Equal(pa, tc.a.params) || tc.b.params != nil && !maps.Equal(pb, tc.b.params) {
				t.Fatalf("params %v and %v, want %v and %v\n%s", pa, pb, tc.a.params, tc.b.params, ca.Program)
			}
			// The plain canonical program keeps the parameters' names.
			_, plain, err := AnalyzeCanonical(tc.a.code, Starlark, testReadOnly)
			if err != nil {
				t.Fatal(err)
			}
			if _, plainB, _ := AnalyzeCanonical(tc.b.code, Starlark, testReadOnly); tc.name == "a lifted binding's name and the keyword's" && plain.Hash == plainB.Hash {
				t.Fatal("AnalyzeCanonical renamed parameters")
			}
		})
	}
}

// TestLiftPlanCanonicalParams: a lifting plan's CanonicalParams is
// AnalyzeCanonicalParams of its code (program, hash and parameter names),
// before the plan is applied and after, on every block of the canonical
// and analysis corpora that analyses.
func TestLiftPlanCanonicalParams(t *testing.T) {
	blocks := canonAndAnalysisCorpora(t)
	renamed := 0
	for _, b := range blocks {
		t.Run(b.name, func(t *testing.T) {
			_, want, wantParams, err := AnalyzeCanonicalParams(b.code, b.dialect, testReadOnly)
			if err != nil {
				return
			}
			if len(wantParams) > 0 {
				renamed++
			}
			for _, stage := range []string{"before Apply", "after Apply"} {
				_, plan, err := AnalyzeLift(b.code, b.dialect)
				if err != nil {
					t.Fatalf("AnalyzeLift: %v", err)
				}
				if stage == "after Apply" {
					plan.Apply(func(LiftSite) Verdict { return Verdict{OK: true} }, nil)
				}
				got, params := plan.CanonicalParams(testReadOnly)
				if *got != *want || !maps.Equal(params, wantParams) {
					t.Fatalf("%s: CanonicalParams = %s %v\n%s\nAnalyzeCanonicalParams = %s %v\n%s", stage, got.Hash, params, got.Program, want.Hash, wantParams, want.Program)
				}
			}
		})
	}
	if renamed == 0 {
		t.Fatal("no block of the corpora has a parameter renamed: the test tells nothing")
	}
}
