package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// schemaFixture is a module whose package fix has a unit of each kind a
// schema switches: functions without result, with named results, with
// unnamed results, a method of a generic type, a closure inside a body, a
// function literal in a package-level variable, package-level values (of
// a type inferred, another package's, declared) and a file it embeds
// through an embed.FS (read at initialisation and through fs.Sub, Open,
// Stat and Seek); one whose mutant removes the only use of an import (it
// does not compile alone); and a constant (not eligible). Its test writes
// what the functions return to $SHOW_OUT, and what a child process sees:
// the test binary re-executed with an empty environment, as the sandbox
// runs its workers, and a copy of it elsewhere, as cmd/procgraph's tests
// run it as another user.
var schemaFixture = map[string]string{
	"go.mod": "module example.com/s\n\ngo 1.22\n",
	"fix/fix.go": `package fix

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a number of tens; its declaration reuses the named result err.
func Parse(s string) (n int, err error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return
	}
	n = v * 10
	return
}

// Log is what Note wrote.
var Log []string

// Note appends s.
func Note(s string) {
	Log = append(Log, s)
}

// Split cuts s at its first comma.
func Split(s string) (head, tail string) {
	head, tail, _ = strings.Cut(s, ",")
	return
}

// Twice doubles n.
func Twice(n int) int {
	return 2 * n
}

// Box holds a value.
type Box[T any] struct{ v T }

// Get returns the value.
func (b Box[T]) Get() (T, bool) {
	return b.v, true
}

// Sum adds xs through a closure.
func Sum(xs []int) int {
	total := 0
	add := func(x int) { total += x }
	for _, x := range xs {
		add(x)
	}
	return total
}

// Name quotes s.
func Name(s string) string {
	return fmt.Sprint("<", s, ">")
}

// Limit is a package-level variable.
var Limit = 3

// Unit is a constant (a schema cannot switch it).
const Unit = "u"

// Checks holds a function literal at package level.
var Checks = map[string]func(int) bool{"pos": func(n int) bool { return n > 0 }}

// Swap is a value whose type another package declares.
var Swap = strings.NewReplacer(",", ";")

// Tens is a value with its type declared.
var Tens []int = []int{10, 20}
`,
	"fix/data/greet.txt": "hello\n",
	"fix/embed.go": `package fix

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
)

//go:embed data
var data embed.FS

// Greeting is data/greet.txt, read when the package initializes.
var Greeting = mustRead("data/greet.txt")

func mustRead(name string) string {
	b, err := data.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Served reads data/greet.txt as a file server would: through fs.Sub,
// Open, Stat and Seek.
func Served() string {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		return err.Error()
	}
	f, err := sub.Open("greet.txt")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	end, err := f.(io.Seeker).Seek(0, io.SeekEnd)
	if err != nil {
		return err.Error()
	}
	if _, err := f.(io.Seeker).Seek(0, io.SeekStart); err != nil {
		return err.Error()
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(st.Size(), end, string(b))
}
`,
	"fix/fix_test.go": `package fix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestShow(t *testing.T) {
	if os.Getenv("CHILD") == "1" {
		fmt.Print(Twice(5), Greeting)
		return
	}
	Note("a")
	h, tl := Split("x,y")
	v, ok := Box[int]{v: 7}.Get()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestShow$")
	cmd.Env = []string{"CHILD=1"}
	child, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the binary elsewhere, as some tests run it.
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.WriteFile(cp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(cp, "-test.run=^TestShow$")
	cmd.Env = []string{"CHILD=1"}
	copied, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	n, perr := Parse("4")
	_, perr2 := Parse("x")
	show := fmt.Sprintln(n, perr, perr2 != nil, Log, h, tl, Twice(4), v, ok, Sum([]int{1, 2, 3}), Name("n"), Limit, Unit, Checks["pos"](0), Swap.Replace("a,b"), Tens, Greeting, Served(), "child:", string(child), "copy:", string(copied))
	if err := os.WriteFile(os.Getenv("SHOW_OUT"), []byte(show), 0o644); err != nil {
		t.Fatal(err)
	}
}
`,
}

func fixMutant(name string, edits ...[2]string) Mutant {
	m := Mutant{Name: name, Packages: []string{"./fix"}, Tests: []string{"TestShow"}}
	for _, e := range edits {
		m.Edits = append(m.Edits, Edit{Dir: "fix", Find: e[0], Replace: e[1]})
	}
	return m
}

// TestSchemata builds the fixture's schema binary and checks, by running
// it, that with no mutant switched on it behaves as the original and with
// each mutant switched on exactly as that mutant's own build; the mutant
// that does not compile alone and the package-level one stay out of it.
func TestSchemata(t *testing.T) {
	dir := t.TempDir()
	for name, content := range schemaFixture {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := []Mutant{
		fixMutant("void", [2]string{"Log = append(Log, s)", `Log = append(Log, s+"!")`}),
		fixMutant("named", [2]string{`head, tail, _ = strings.Cut(s, ",")`, `tail, head, _ = strings.Cut(s, ",")`}),
		fixMutant("unnamed", [2]string{"return 2 * n", "return 3 * n"}),
		fixMutant("named-reused", [2]string{"n = v * 10", "n = v * 100"}),
		fixMutant("generic", [2]string{"return b.v, true", "var zero T\n\treturn zero, false"}),
		fixMutant("closure", [2]string{"total += x", "total -= x"}),
		fixMutant("two-functions", [2]string{"return 2 * n", "return 2 + n"}, [2]string{"total := 0", "total := 100"}),
		fixMutant("package-level", [2]string{"var Limit = 3", "var Limit = 4"}),
		fixMutant("literal", [2]string{"return n > 0", "return n >= 0"}),
		fixMutant("other-package-type", [2]string{`strings.NewReplacer(",", ";")`, `strings.NewReplacer(",", "|")`}),
		fixMutant("declared-type", [2]string{"[]int{10, 20}", "[]int{10}"}),
		{Name: "embedded", Edits: []Edit{{Dir: "fix/data", Files: "greet.txt", Find: "hello", Replace: "howdy!"}}, Packages: []string{"./fix"}, Tests: []string{"TestShow"}},
		fixMutant("unused-import", [2]string{`return fmt.Sprint("<", s, ">")`, `return "<" + s + ">"`}),
		fixMutant("constant", [2]string{`const Unit = "u"`, `const Unit = "v"`}),
	}
	ctx := context.Background()
	var out bytes.Buffer
	r := &runner{root: dir, module: "example.com/s", timeout: time.Minute, out: &out}
	s, err := r.buildSchema(ctx, list, 1)
	if err != nil || s == nil {
		t.Fatalf("buildSchema: %v\n%s", err, out.String())
	}
	defer s.close()
	var held []string
	for _, m := range list {
		if s.covers(r, m) {
			held = append(held, m.Name)
		}
	}
	if want := []string{"void", "named", "unnamed", "named-reused", "generic", "closure", "two-functions", "package-level", "literal", "other-package-type", "declared-type", "embedded"}; !slices.Equal(held, want) {
		t.Fatalf("the schema holds %v, want %v\n%s", held, want, out.String())
	}
	pkg := "example.com/s/fix"
	show := filepath.Join(t.TempDir(), "show")
	t.Setenv("SHOW_OUT", show)
	read := func(what string, res *testRun) string {
		t.Helper()
		if !res.passed() {
			t.Fatalf("%s: the test did not pass: %v %v %v", what, res.failed, res.exitErr, res.buildOutput)
		}
		b, err := os.ReadFile(show)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		os.Remove(show)
		return string(b)
	}
	original := read("go test", goTest(ctx, dir, []string{"-run", "^TestShow$"}, []string{pkg}))
	if got := read("schema, no mutant", r.schemaTest(ctx, s, 0, "", pkg, "^TestShow$")); got != original {
		t.Fatalf("the schema binary with no mutant shows %q, the original %q", got, original)
	}
	seen := map[string]string{}
	for _, m := range list[:12] {
		files, err := apply(dir, m)
		if err != nil {
			t.Fatal(err)
		}
		overlay, err := writeOverlay(t.TempDir(), files)
		if err != nil {
			t.Fatal(err)
		}
		own := read(m.Name+" own build", goTest(ctx, dir, []string{"-overlay", overlay, "-run", "^TestShow$"}, []string{pkg}))
		got := read(m.Name+" schema", r.schemaTest(ctx, s, 0, m.Name, pkg, "^TestShow$"))
		if got != own || own == original {
			t.Errorf("mutant %s: the schema binary shows %q, its own build %q (the original %q)", m.Name, got, own, original)
		}
		if other, ok := seen[own]; ok {
			t.Errorf("mutants %s and %s behave alike: the fixture does not tell them apart", m.Name, other)
		}
		seen[own] = m.Name
	}
	if t.Failed() {
		t.Log(out.String())
	}
}

// TestSchemataVerdicts: through run, a mutant that does not compile alone
// is an error even though its body compiles in a schema, and the mutants
// the schema holds and those it does not get the same verdicts as before.
func TestSchemataVerdicts(t *testing.T) {
	dir := mustModule(t)
	list := []Mutant{
		mutant("add-subtracts", "return a + b", "return a - b", "TestAdd"),
		mutant("sub-adds", "return a - b", "return a + b", "TestAdd"),
		{Name: "word-six", Edits: []Edit{{Dir: "words/data", Files: "*.txt", Find: "five", Replace: "six"}}, Packages: []string{"./words"}, Tests: []string{"TestWord"}},
		mutant("add-unterminated", "return a + b", "_ = a + b", "TestAdd"),
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), dir, list, []string{"-baseline=false", "-jobs", "2"}, &out, &errOut)
	want := map[string]string{
		"add-subtracts":    statusKilled + " (schema)",
		"sub-adds":         statusSurvived + " (schema)",
		"word-six":         statusKilled,
		"add-unterminated": statusError,
	}
	for name, w := range want {
		status, suffix, _ := strings.Cut(w, " ")
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && f[1] == name {
				found = f[0] == status && strings.HasSuffix(line, suffix) == (suffix != "") || f[0] == status && suffix == "" && !strings.HasSuffix(line, "(schema)")
			}
		}
		if !found {
			t.Errorf("mutant %s: want %s", name, w)
		}
	}
	if code != 1 || t.Failed() {
		t.Fatalf("exit %d, output:\n%s%s", code, out.String(), errOut.String())
	}
}

// TestVerifySchemata: -verify-schemata judges each mutant the schema holds
// both ways and says whether the verdicts agree.
func TestVerifySchemata(t *testing.T) {
	dir := mustModule(t)
	list := []Mutant{
		mutant("add-subtracts", "return a + b", "return a - b", "TestAdd"),
		mutant("sub-adds", "return a - b", "return a + b", "TestAdd"),
		mutant("add-unterminated", "return a + b", "_ = a + b", "TestAdd"),
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), dir, list, []string{"-baseline=false", "-verify-schemata"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "verify: 2 of 2 mutants agree (1 of the selection not in the schema)") ||
		!regexp.MustCompile(`(?m)^AGREE +sub-adds +schema SURVIVED .* own build SURVIVED`).MatchString(out.String()) {
		t.Fatalf("exit %d, output:\n%s%s", code, out.String(), errOut.String())
	}
}

// TestSchemaPlan: -schema-plan says, without building, which mutants a
// schema can hold and why not the others.
func TestSchemaPlan(t *testing.T) {
	dir := mustModule(t)
	list := []Mutant{
		mutant("add-subtracts", "return a + b", "return a - b", "TestAdd"),
		{Name: "word-six", Edits: []Edit{{Dir: "words/data", Files: "*.txt", Find: "five", Replace: "six"}}, Packages: []string{"./words"}, Tests: []string{"TestWord"}},
		mutant("signature", "func Sub(a, b int) int", "func Sub(a, b int) (n int)", "TestAdd"),
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), dir, list, []string{"-schema-plan"}, &out, &errOut)
	for _, want := range []string{
		`(?m)^SCHEMA +add-subtracts$`,
		`(?m)^ALONE +word-six +words/data/word.txt: embedded by words through a variable that is not one embed.FS$`,
		`(?m)^ALONE +signature +calc/calc.go: an edit outside function bodies`,
		`(?m)^schema-plan: 1 of 3 mutants can be switched in; 2 build their own$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("want %s", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("exit %d, output:\n%s%s", code, out.String(), errOut.String())
	}
}
