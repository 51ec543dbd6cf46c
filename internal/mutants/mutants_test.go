package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mustModule writes a small module: package calc with Add (tested) and Sub
// (untested), and package words, which embeds data/word.txt (tested), and
// returns its directory.
func mustModule(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{
		"go.mod":              "module example.com/m\n\ngo 1.22\n",
		"calc/calc.go":        "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n",
		"calc/calc_test.go":   "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\n// a + b appears here too: test files are never mutated.\n",
		"calc/table_test.go":  "package calc\n\nimport \"testing\"\n\nfunc TestTable(t *testing.T) {\n\tt.Run(\"add two\", func(t *testing.T) {\n\t\tif Add(2, 2) != 4 {\n\t\t\tt.Fatal(\"Add(2, 2) != 4\")\n\t\t}\n\t})\n\tt.Run(\"nothing\", func(t *testing.T) {})\n}\n",
		"words/words.go":      "package words\n\nimport _ \"embed\"\n\n// Word is data/word.txt.\n//\n//go:embed data/word.txt\nvar Word string\n",
		"words/data/word.txt": "five\n",
		"words/words_test.go": "package words\n\nimport \"testing\"\n\nfunc TestWord(t *testing.T) {\n\tif Word != \"five\\n\" {\n\t\tt.Fatal(Word)\n\t}\n}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func mutant(name, find, replace string, tests ...string) Mutant {
	return Mutant{Name: name, Edits: []Edit{{Dir: "calc", Find: find, Replace: replace}}, Packages: []string{"./calc"}, Tests: tests}
}

// TestReplay runs the runner on the small module: each verdict, the exit
// code, and the working tree left as it was.
func TestReplay(t *testing.T) {
	dir := mustModule(t)
	before, _ := os.ReadFile(filepath.Join(dir, "calc", "calc.go"))
	cases := []struct {
		name   string
		m      Mutant
		code   int
		status string
		detail string
	}{
		{"killed", mutant("add-subtracts", "return a + b", "return a - b", "TestAdd"), 0, statusKilled, "by calc TestAdd"},
		{"survived", mutant("sub-adds", "return a - b", "return a + b", "TestAdd"), 1, statusSurvived, "every named test passed"},
		{"white space is flexible", mutant("sub-adds-ws", "return   a -\n b", "return a + b", "TestAdd"), 1, statusSurvived, ""},
		{"fragment missing", mutant("missing", "return a * b", "return 0", "TestAdd"), 1, statusError, "not applied"},
		{"fragment twice", mutant("twice", "int {", "int { panic(0)", "TestAdd"), 1, statusError, "2 times"},
		{"does not compile", mutant("broken", "return a + b", "return a +", "TestAdd"), 1, statusError, "does not compile"},
		{"a named subtest", mutant("add-subtracts-sub", "return a + b", "return a - b", "TestTable/add_two"), 0, statusKilled, "by calc TestTable"},
		{"only the named subtests run", mutant("add-subtracts-other", "return a + b", "return a - b", "TestTable/nothing"), 1, statusSurvived, ""},
		{"a subtest and a whole test", mutant("add-subtracts-both", "return a + b", "return a - b", "TestTable/nothing", "TestAdd"), 0, statusKilled, "by calc TestAdd"},
		{"an embedded file", Mutant{Name: "word-six", Edits: []Edit{{Dir: "words/data", Files: "*.txt", Find: "five", Replace: "six"}},
			Packages: []string{"./words"}, Tests: []string{"TestWord"}}, 0, statusKilled, "by words TestWord"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), dir, []Mutant{tc.m}, []string{"-baseline=false"}, &out, &errOut)
			line := regexp.MustCompile(`(?m)^(\S+)\s+` + regexp.QuoteMeta(tc.m.Name) + `\s+[0-9.]+s\s+(.*)$`).FindStringSubmatch(out.String())
			if code != tc.code || line == nil || line[1] != tc.status || !strings.Contains(line[2], tc.detail) {
				t.Fatalf("exit %d, output:\n%s%s\nwant exit %d, %s with %q", code, out.String(), errOut.String(), tc.code, tc.status, tc.detail)
			}
		})
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "calc", "calc.go")); !bytes.Equal(before, after) {
		t.Fatalf("the working tree changed:\n%s", after)
	}
}

// TestRunPatterns: the -run patterns of a mutant's tests.
func TestRunPatterns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tests []string
		want  []string
	}{
		{"whole tests", []string{"TestA", "TestB"}, []string{"^(TestA|TestB)$"}},
		{"subtests", []string{"TestStore/Bindings", "TestStore/Turns"}, []string{"^(TestStore)$/^(Bindings|Turns)$"}},
		{"both", []string{"TestA", "TestStore/Bindings/x.y"}, []string{"^(TestA)$", `^(TestStore)$/^(Bindings)$/^(x\.y)$`}},
		{"a test named whole and by a subtest", []string{"TestA", "TestA/b"}, []string{"^(TestA)$"}},
		{"subtests of one test at two depths (two mutants' tests, as the baseline joins them)", []string{"TestStore/Bindings", "TestStore/Turns/pending", "TestStore/Drift"},
			[]string{"^(TestStore)$/^(Bindings|Drift)$", "^(TestStore)$/^(Turns)$/^(pending)$"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runPatterns(tc.tests); !slices.Equal(got, tc.want) {
				t.Fatalf("runPatterns(%q) = %q, want %q", tc.tests, got, tc.want)
			}
		})
	}
	for _, bad := range [][]string{{"TestA/"}, {"TestA/b c"}, {"TestA/b", "TestA/b/c"}} {
		if err := validTests(bad); err == nil {
			t.Errorf("validTests(%q) accepted", bad)
		}
	}
}

// TestByPackage: -pkg keeps the mutants with a matching package, -skip-pkg
// leaves those out, a mutant marked Neo4j going with "neo4j"; an empty
// selection replays nothing.
func TestByPackage(t *testing.T) {
	list := []Mutant{
		{Name: "a", Packages: []string{"./calc"}},
		{Name: "b", Packages: []string{"./graph/neo4j", "./calc"}},
		{Name: "c", Packages: []string{"./graph/embedded"}},
		{Name: "d", Packages: []string{"./cmd/procgraph"}, Neo4j: true},
	}
	for _, tc := range []struct {
		name, pkg, skip string
		want            []string
	}{
		{"all", "", "", []string{"a", "b", "c", "d"}},
		{"neo4j only", "neo4j", "", []string{"b", "d"}},
		{"without neo4j", "", "neo4j", []string{"a", "c"}},
		{"graph without neo4j", "graph", "neo4j", []string{"c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := byPackage(list, tc.pkg, tc.skip)
			var got []string
			for _, m := range sel {
				got = append(got, m.Name)
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("byPackage(%q, %q) = %v, %v; want %v", tc.pkg, tc.skip, got, err, tc.want)
			}
		})
	}
	if _, err := byPackage(list, "sandbox", ""); err == nil {
		t.Error("a selection of no mutant was accepted")
	}
}

// TestBaseline: a named test that does not exist, or that fails unmutated,
// stops the run before any mutant is judged.
func TestBaseline(t *testing.T) {
	dir := mustModule(t)
	for _, tc := range []struct {
		name string
		m    Mutant
		want string
	}{
		{"renamed test", mutant("m", "return a + b", "return a - b", "TestPlus"), "test TestPlus is in none of ./calc"},
		{"renamed subtest", mutant("m", "return a + b", "return a - b", "TestTable/add_three"), "test TestTable/add_three is in none of ./calc"},
		{"red before mutating", mutant("m", "return a + b", "return a - b", "TestAdd"), "fail without any mutant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "red before mutating" {
				p := filepath.Join(dir, "calc", "calc.go")
				src, _ := os.ReadFile(p)
				if err := os.WriteFile(p, bytes.Replace(src, []byte("a + b"), []byte("a + b + 1"), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			code := run(context.Background(), dir, []Mutant{tc.m}, nil, &out, &errOut)
			if code != 1 || !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), statusKilled) {
				t.Fatalf("exit %d, output:\n%s%s\nwant exit 1 with %q and no verdict", code, out.String(), errOut.String(), tc.want)
			}
		})
	}
}

// TestList checks the repository's mutation list itself: every mutant is
// well formed and every fragment occurs exactly once in this checkout.
// (Whether each is killed is `go run ./internal/mutants`.)
func TestList(t *testing.T) {
	sel, err := selectMutants(mutants, "")
	if err != nil {
		t.Fatal(err)
	}
	root, _, err := moduleRoot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sel {
		if _, err := apply(root, m); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	if _, err := selectMutants(append(mutants, mutants[0]), ""); err == nil {
		t.Error("a duplicate name was accepted")
	}
}

// TestCheckOverlay: an overlay naming the file as the go command does is
// accepted; one naming it another way, which the go command would ignore,
// is an error rather than a mutant silently not applied.
func TestCheckOverlay(t *testing.T) {
	dir := mustModule(t)
	r := &runner{}
	for _, tc := range []struct {
		name string
		path string
		ok   bool
	}{
		{"as built", filepath.Join(dir, "calc", "calc.go"), true},
		{"spelled another way", filepath.Join(dir, "calc") + "/../calc/calc.go", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []mutated{{path: tc.path, content: []byte("package calc\n")}}
			overlay, err := writeOverlay(t.TempDir(), files)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.checkOverlay(context.Background(), overlay, files); (err == nil) != tc.ok {
				t.Fatalf("checkOverlay = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestListApplies checks that every mutant of the project's list still finds
// each of its fragments exactly once in this tree, without running a test:
// a refactoring that moves or renames code shows here which mutants it broke.
func TestListApplies(t *testing.T) {
	root, _, err := moduleRoot(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutants {
		if _, err := apply(root, m); err != nil {
			t.Errorf("mutant %s: %v", m.Name, err)
		}
	}
}

// mustGit runs git in dir with a fixed identity.
func mustGit(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestSince selects, with -since, the mutants of the directories a change
// touches and those its list files declare, and nothing for a change to a
// test alone.
func TestSince(t *testing.T) {
	word := Mutant{Name: "word-six", Edits: []Edit{{Dir: "words/data", Files: "*.txt", Find: "five", Replace: "six"}},
		Packages: []string{"./words"}, Tests: []string{"TestWord"}}
	list := []Mutant{mutant("add-subtracts", "return a + b", "return a - b", "TestAdd"), word}
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"nothing changed", nil, nil},
		{"a test changed", map[string]string{"words/words_test.go": "package words\n"}, nil},
		{"a package changed", map[string]string{"calc/calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return b + a + 0 }\n\n// Sub subtracts.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"}, []string{"add-subtracts"}},
		{"an embedded file added", map[string]string{"words/data/other.txt": "x\n"}, []string{"word-six"}},
		{"a list file declares it", map[string]string{"internal/mutants/list_w.go": "package main\n\nvar _ = []Mutant{{Name: \"word-six\"}}\n"}, []string{"word-six"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := mustModule(t)
			mustGit(t, dir, "init", "-q")
			mustGit(t, dir, "add", ".")
			mustGit(t, dir, "commit", "-q", "-m", "base")
			for name, content := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), dir, list, []string{"-since", "HEAD", "-list"}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
			}
			var got []string
			for _, m := range list {
				if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m.Name) + `\s`).MatchString(out.String()) {
					got = append(got, m.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("selected %v, want %v:\n%s", got, tc.want, out.String())
			}
		})
	}
}

// TestShareCoversEveryMutant puts each mutant in exactly one of the n
// days' shares.
func TestShareCoversEveryMutant(t *testing.T) {
	const n = 7
	seen := map[string]int{}
	for day := 100; day < 100+n; day++ {
		for _, m := range share(mutants, day, n) {
			seen[m.Name]++
		}
	}
	for _, m := range mutants {
		if seen[m.Name] != 1 {
			t.Fatalf("mutant %s is in %d shares of %d days, want 1", m.Name, seen[m.Name], n)
		}
	}
}
