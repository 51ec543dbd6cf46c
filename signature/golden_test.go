package signature

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// corpusFiles returns the corpus files (testdata/corpus/*.star and *.py).
func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	return files
}

// dialectOf returns the dialect of a corpus file: .py is python-async.
func dialectOf(path string) Dialect {
	if strings.HasSuffix(path, ".py") {
		return PythonAsync
	}
	return Starlark
}

// goldenResult is what a golden file records for a corpus file.
type goldenResult struct {
	Dialect  Dialect
	Analysis *Analysis `json:",omitempty"`
	Error    *Error    `json:",omitempty"`
}

func runCase(t *testing.T, path string) []byte {
	code, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := goldenResult{Dialect: dialectOf(path)}
	a, err := Analyze(string(code), res.Dialect)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error is %T, not *Error: %v", err, err)
		}
		res.Error = e
	} else {
		res.Analysis = a
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestGolden analyses every corpus file and compares every field of the
// result (or the error) with testdata/golden/FILE.json. Run with -update to
// regenerate the golden files, then review the diff.
func TestGolden(t *testing.T) {
	for _, path := range corpusFiles(t) {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			got := runCase(t, path)
			golden := filepath.Join("testdata", "golden", base+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: output differs from %s\ngot:\n%s\nwant:\n%s", path, golden, got, want)
			}
		})
	}
}

// TestEagerFeatureCheck checks that checking Python features before parsing
// (eager) and only on failure (Analyze's default) agree on every corpus file.
func TestEagerFeatureCheck(t *testing.T) {
	for _, path := range corpusFiles(t) {
		code, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []Dialect{Starlark, PythonAsync} {
			t.Run(filepath.Base(path)+"/"+string(d), func(t *testing.T) {
				checkEagerAgrees(t, string(code), d)
			})
		}
	}
}

func checkEagerAgrees(t *testing.T, code string, d Dialect) {
	t.Helper()
	a1, err1 := analyze(code, d, false, nil)
	a2, err2 := analyze(code, d, true, nil)
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(err1, err2) {
		t.Fatalf("lazy and eager feature checks differ on %q:\nlazy:  %+v %v\neager: %+v %v", code, a1, err1, a2, err2)
	}
}

// TestSharedExamples pins the expected signature and parameters of the four
// shared example procedures independently of the golden files.
func TestSharedExamples(t *testing.T) {
	cases := []struct {
		file   string
		sig    []string
		params []string
	}{
		{"compare_logs.star", []string{"compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"}, []string{"task_id"}},
		{"scouts_and_inputs.py", []string{"get_scout_job_details", "get_task_input_datasets"}, []string{"task_id"}},
		{"causes_for_symptom.py", []string{"query_past_causes_for_symptom", "query_past_procedures_for_cause"}, []string{"symptom"}},
		{"retry_after_check.star", []string{"get_task_jobs_summary", "retry_task"}, []string{"task_id"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "corpus", c.file)
			code, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a, err := Analyze(string(code), dialectOf(path))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(a.Signature, ",") != strings.Join(c.sig, ",") {
				t.Errorf("Signature = %q, want %q", a.Signature, c.sig)
			}
			if strings.Join(a.Parameters, ",") != strings.Join(c.params, ",") {
				t.Errorf("Parameters = %q, want %q", a.Parameters, c.params)
			}
			if a.Opaque || len(a.Warnings) != 0 {
				t.Errorf("Opaque = %v, Warnings = %v, want none", a.Opaque, a.Warnings)
			}
			if a.CodeHash != CodeHash(string(code)) || a.Name != Name(c.sig) {
				t.Errorf("CodeHash/Name = %s/%s", a.CodeHash, a.Name)
			}
		})
	}
}
