package signature

import (
	"reflect"
	"strings"
	"testing"
)

func acceptAll(LiftSite) Verdict { return Verdict{OK: true} }

func liftOf(t *testing.T, code string, d Dialect, accept func(LiftSite) Verdict) *LiftResult {
	t.Helper()
	_, p, err := AnalyzeLift(code, d)
	if err != nil {
		t.Fatalf("AnalyzeLift: %v", err)
	}
	r := p.Apply(accept, nil)
	if p.retokenized {
		t.Errorf("the lifted source was tokenized again:\n%s", r.Code)
	}
	if strings.Count(r.Code, "\n") != strings.Count(code, "\n") {
		t.Fatalf("lines moved:\n%s\n---\n%s", code, r.Code)
	}
	if want, err := Analyze(r.Code, d); err != nil || !reflect.DeepEqual(r.Analysis, want) {
		t.Fatalf("the lifted analysis is not Analyze's (%v):\n%+v\n%+v", err, r.Analysis, want)
	}
	return r
}

func TestLiftRewrite(t *testing.T) {
	tests := []struct {
		name, code string
		dialect    Dialect
		want       string
		params     map[string]any
	}{
		{"literal argument", "return tools.get_task(task_id=42)\n", Starlark,
			"return tools.get_task(task_id=task_id)\n", map[string]any{"task_id": int64(42)}},
		{"strings and comments untouched", "s = \"tools.a(k=42)\"  # tools.a(k=42)\nreturn [s, tools.a(k=42)]\n", Starlark,
			"s = \"tools.a(k=42)\"  # tools.a(k=42)\nreturn [s, tools.a(k=k)]\n", map[string]any{"k": int64(42)}},
		{"equal literals for one keyword are one parameter", "a = tools.a(task_id=7)\nb = tools.b(task_id=7, q=\"x\")\nreturn [a, b]\n", Starlark,
			"a = tools.a(task_id=task_id)\nb = tools.b(task_id=task_id, q=q)\nreturn [a, b]\n", map[string]any{"task_id": int64(7), "q": "x"}},
		{"different literals get _2", "a = tools.a(k=1)\nb = tools.a(k=2)\nreturn [a, b]\n", Starlark,
			"a = tools.a(k=k)\nb = tools.a(k=k_2)\nreturn [a, b]\n", map[string]any{"k": int64(1), "k_2": int64(2)}},
		{"a name in use gets _2", "k = tools.x()\nreturn tools.a(k=3, j=k)\n", Starlark,
			"k = tools.x()\nreturn tools.a(k=k_2, j=k)\n", map[string]any{"k_2": int64(3)}},
		{"a reserved keyword gets _2", "return tools.a(type=\"job\")\n", Starlark,
			"return tools.a(type=type_2)\n", map[string]any{"type_2": "job"}},
		{"top-level binding", "tid = 42  # the task\nr = tools.a(task_id=tid)\nreturn tools.b(id=tid, r=r)\n", Starlark,
			"  # the task\nr = tools.a(task_id=tid)\nreturn tools.b(id=tid, r=r)\n", map[string]any{"tid": int64(42)}},
		{"negative, float, bool", "return tools.a(n=-5, x=0.25, flag=True)\n", Starlark,
			"return tools.a(n=n, x=x, flag=flag)\n", map[string]any{"n": int64(-5), "x": 0.25, "flag": true}},
		{"python-async", "r = await tools.a(task_id=42)\nxs = await asyncio.gather(tools.b(q=\"a\\d\"), tools.b(q=\"z\"))\nreturn [r, xs]\n", PythonAsync,
			"r = await tools.a(task_id=task_id)\nxs = await asyncio.gather(tools.b(q=q), tools.b(q=q_2))\nreturn [r, xs]\n",
			map[string]any{"task_id": int64(42), "q": `a\d`, "q_2": "z"}},
		{"nested function", "def f(x):\n    return tools.a(k=\"s\", x=x)\nreturn f(1)\n", Starlark,
			"def f(x):\n    return tools.a(k=k, x=x)\nreturn f(1)\n", map[string]any{"k": "s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := liftOf(t, tc.code, tc.dialect, acceptAll)
			if r.Code != tc.want {
				t.Fatalf("lifted code\n%q\nwant\n%q (warnings %v)", r.Code, tc.want, r.Warnings)
			}
			if !reflect.DeepEqual(r.Examples, tc.params) {
				t.Fatalf("examples %v, want %v", r.Examples, tc.params)
			}
			orig, _ := Analyze(tc.code, tc.dialect)
			if !reflect.DeepEqual(r.Analysis.Signature, orig.Signature) || r.Analysis.Name != orig.Name {
				t.Fatalf("signature %v, want %v", r.Analysis.Signature, orig.Signature)
			}
			for p := range tc.params {
				if !contains(r.Analysis.Parameters, p) {
					t.Fatalf("%s not a parameter of %v", p, r.Analysis.Parameters)
				}
			}
		})
	}
}

func TestLiftPositions(t *testing.T) {
	code := "x = 1\nr = await tools.a(q=\"é\", task_id=42)\nreturn r\n"
	r := liftOf(t, code, PythonAsync, acceptAll)
	want := []Lifted{
		{Parameter: "q", Tool: "a", Argument: "q", Line: 2, Column: 21, Example: "é"},
		{Parameter: "task_id", Tool: "a", Argument: "task_id", Line: 2, Column: 34, Example: int64(42)},
	}
	if !reflect.DeepEqual(r.Lifted, want) {
		t.Fatalf("lifted %+v, want %+v", r.Lifted, want)
	}
}

// TestLiftBadInput: what is not lifted, and the warnings that say so.
func TestLiftBadInput(t *testing.T) {
	tests := []struct {
		name, code string
		accept     func(LiftSite) Verdict
		warning    string // a substring of the one warning, "" for none
	}{
		{"refused by the caller", "return tools.a(k=1)\n", func(LiftSite) Verdict { return Verdict{Why: "no type"} }, "no type"},
		{"refused silently", "return tools.a(k=1)\n", func(LiftSite) Verdict { return Verdict{} }, ""},
		{"reused outside tool arguments", "r = tools.a(task_id=42)\nreturn {\"task\": 42, \"r\": r}\n", acceptAll, "also written outside tool arguments"},
		{"reused as a negative number", "r = tools.a(n=-3)\nreturn r[-3]\n", acceptAll, "also written outside"},
		{"splatted from a dict", "return tools.a(**{\"k\": 1})\n", acceptAll, "splatted"},
		{"binding used elsewhere", "tid = 4\nprint(tid)\nreturn tools.a(k=tid)\n", acceptAll, "used outside tool arguments"},
		{"binding bound twice", "tid = 4\ntid = 5\nreturn tools.a(k=tid)\n", acceptAll, "bound more than once"},
		{"binding used before it is bound", "def f():\n    return 1\nx = tools.a(k=tid) if f() == 2 else 0\ntid = 4\nreturn tools.b(k=tid)\n", acceptAll, "after its use"},
		{"positional", "return tools.a(1)\n", acceptAll, ""},
		{"an expression", "return tools.a(k=1 + 2)\n", acceptAll, ""},
		{"bytes", "return tools.a(k=b\"x\")\n", acceptAll, ""},
		{"integral float", "return tools.a(k=2.0)\n", acceptAll, ""},
		{"huge integer", "return tools.a(k=9007199254740993)\n", acceptAll, ""},
		{"not through tools", "t = tools.a\nreturn t(k=1)\n", acceptAll, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := liftOf(t, tc.code, Starlark, tc.accept)
			if r.Code != tc.code || len(r.Lifted) != 0 {
				t.Fatalf("lifted %+v:\n%s", r.Lifted, r.Code)
			}
			if tc.warning == "" {
				if len(r.Warnings) != 0 {
					t.Fatalf("warnings %v", r.Warnings)
				}
				return
			}
			if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Message, tc.warning) || r.Warnings[0].Line == 0 {
				t.Fatalf("warnings %+v, want one with %q", r.Warnings, tc.warning)
			}
		})
	}
}

// TestLiftOnlyAccepted: the caller decides per site; a binding is lifted
// only when every use is accepted.
func TestLiftOnlyAccepted(t *testing.T) {
	code := "tid = 4\na = tools.a(k=tid, enum_like=\"fast\")\nreturn tools.b(k=tid, j=1)\n"
	r := liftOf(t, code, Starlark, func(s LiftSite) Verdict { return Verdict{OK: s.Keyword != "enum_like" && s.Tool != "b"} })
	if r.Code != code {
		t.Fatalf("binding lifted although one use was refused:\n%s", r.Code)
	}
	r = liftOf(t, code, Starlark, func(s LiftSite) Verdict { return Verdict{OK: s.Keyword != "enum_like"} })
	want := "\na = tools.a(k=tid, enum_like=\"fast\")\nreturn tools.b(k=tid, j=j)\n"
	if r.Code != want {
		t.Fatalf("got\n%q\nwant\n%q", r.Code, want)
	}
}
