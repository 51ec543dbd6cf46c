// Command mutants replays procgraph's mutation list (list.go): deliberate
// bugs, each of which some test must catch. For every mutant it checks that
// each of its code fragments occurs exactly once, builds a `go build
// -overlay` that swaps the mutated files in (the working tree is never
// touched), runs the tests the mutant names (whole tests or named subtests;
// one package at a time with -failfast, stopping at the first failure), and
// reports it KILLED (with the tests that failed), SURVIVED, or ERROR (not
// applied, does not compile, or none of its named tests ran). Before the mutants it runs the same tests
// unmutated: they must pass, else no verdict means anything.
//
// The mutants that edit only function bodies, package-level values and
// embedded files are not built one by one: each test binary is built once
// with all of them in it behind a switch read at run time (mutant
// schemata, schema.go; ADR 0051, 0058), and each runs its tests on that
// binary with its switch on; the others keep an overlay of their own.
//
//	go run ./internal/mutants            # every mutant
//	go run ./internal/mutants -run api   # those whose name matches
//	go run ./internal/mutants -list      # print the list
//	go run ./internal/mutants -jobs 2    # two mutants at a time
//	go run ./internal/mutants -pkg neo4j # those with a test package matching
//	go run ./internal/mutants -verify-schemata -run sandbox
//	                                     # judge each both ways, compare
//	go run ./internal/mutants -schemata=false # each mutant its own build
//	go run ./internal/mutants -schema-plan    # which a schema can hold, and why not
//	go run ./internal/mutants -since HEAD~20 -rotate 7
//	                                     # those a change since HEAD~20 may
//	                                     # affect, and today's seventh of the rest
//
// It exits 0 when every mutant was killed, 1 when one survived or could not
// be judged, 2 on bad usage.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	// Interrupted, it stops its go commands and tests and removes what it
	// built (the schema's binaries are large) before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, "", mutants, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run replays the mutants of list selected by args in the module at dir
// ("" for the current directory's) and returns the exit code.
func run(ctx context.Context, dir string, list []Mutant, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pattern := fs.String("run", "", "replay only the mutants whose name matches this regular expression")
	pkgs := fs.String("pkg", "", "replay only the mutants with a package (./dir) matching this regular expression")
	skipPkgs := fs.String("skip-pkg", "", "leave out the mutants with a package (./dir) matching this regular expression")
	listOnly := fs.Bool("list", false, "print the mutants and exit")
	baseline := fs.Bool("baseline", true, "first run the named tests unmutated (they must pass)")
	timeout := fs.Duration("timeout", 5*time.Minute, "go test -timeout for each run")
	jobs := fs.Int("jobs", 1, "replay this many mutants at once")
	since := fs.String("since", "", "replay only the mutants that the change since this commit may affect (it edits or tests a directory the change touches, or a list file the change touches declares it)")
	rotate := fs.Int("rotate", 0, "with -since, also replay the share of the others that falls on -day (a hash of the name modulo this number)")
	schemata := fs.Bool("schemata", true, "build the mutants that edit only function bodies, package-level values or embedded files into one test binary per package, behind a run-time switch (ADR 0051, 0058); false builds each mutant its own")
	verify := fs.Bool("verify-schemata", false, "judge each selected mutant the schema binaries hold both ways, on them and with its own build, and report where the verdicts differ")
	plan := fs.Bool("schema-plan", false, "print, for each selected mutant, whether the schema can hold it and why not, and exit (builds nothing)")
	day := fs.Int("day", int(time.Now().Unix()/86400), "the day whose share -rotate replays (default today, in days since 1970)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *jobs < 1 || *rotate < 0 || (*rotate > 0 && *since == "") {
		return 2
	}
	sel, err := selectMutants(list, *pattern)
	if err == nil {
		sel, err = byPackage(sel, *pkgs, *skipPkgs)
	}
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	root, module, err := moduleRoot(ctx, dir)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	if *since != "" {
		changed, err := affected(ctx, root, *since, sel)
		if err != nil {
			fmt.Fprintln(stderr, "mutants:", err)
			return 2
		}
		var rotated []Mutant
		if *rotate > 0 {
			rotated = share(sel, *day, *rotate)
		}
		fmt.Fprintf(stdout, "%d of %d mutants: %d that the change since %s may affect, %d in share %d of %d\n",
			len(union(sel, changed, rotated)), len(sel), len(changed), *since, len(rotated), *day%max(*rotate, 1), *rotate)
		sel = union(sel, changed, rotated)
	}
	if *listOnly {
		for _, m := range sel {
			fmt.Fprintf(stdout, "%-34s %s\n%-34s tests %s in %s\n", m.Name, m.Why, "", strings.Join(m.Tests, ", "), strings.Join(m.Packages, " "))
		}
		return 0
	}
	if len(sel) == 0 {
		return 0
	}
	r := &runner{root: root, module: module, timeout: *timeout, out: stdout}
	if *plan {
		r.schemaPlan(sel)
		return 0
	}
	if *baseline && !r.baseline(ctx, sel) {
		return 1
	}
	start := time.Now()
	var s *schema
	if *schemata || *verify {
		if s, err = r.buildSchema(ctx, sel, *jobs); err != nil {
			fmt.Fprintln(stdout, "schema: not built, every mutant builds its own:", err)
			s = nil
		}
		defer s.close()
	}
	if *verify {
		return r.verifySchemata(ctx, sel, *jobs, s)
	}
	bad := r.replayAll(ctx, sel, *jobs, s)
	fmt.Fprintf(stdout, "%d mutants, %d killed, %d survived or not judged, in %s\n", len(sel), len(sel)-bad, bad, time.Since(start).Round(time.Second))
	if s != nil {
		fmt.Fprintf(stdout, "schema built once in %.1fs; %d mutants on it, %.1fs in all; %d with their own builds, %.1fs in all\n",
			s.build.Seconds(), r.onSchema, r.onSchemaTime.Seconds(), r.ownBuild, r.ownBuildTime.Seconds())
	}
	if bad > 0 {
		return 1
	}
	return 0
}

// selectMutants returns the mutants whose name matches pattern, checking
// the list itself: unique names, at least one edit, package and test each.
func selectMutants(all []Mutant, pattern string) ([]Mutant, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("-run: %v", err)
	}
	seen := map[string]bool{}
	var out []Mutant
	for _, m := range all {
		if m.Name == "" || seen[m.Name] || len(m.Edits) == 0 || len(m.Packages) == 0 || len(m.Tests) == 0 {
			return nil, fmt.Errorf("mutant %q: a unique name, edits, packages and tests are required", m.Name)
		}
		if err := validTests(m.Tests); err != nil {
			return nil, fmt.Errorf("mutant %q: %v", m.Name, err)
		}
		seen[m.Name] = true
		if re.MatchString(m.Name) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mutant matches %q", pattern)
	}
	return out, nil
}

// byPackage returns the mutants of sel with a package matching pkgs (any,
// when empty) and none matching skip (when set), a mutant marked Neo4j
// matching as if "neo4j" were among its packages: CI replays the mutants
// that need the one Neo4j database apart from those that do not.
func byPackage(sel []Mutant, pkgs, skip string) ([]Mutant, error) {
	keep, err := regexp.Compile(pkgs)
	if err != nil {
		return nil, fmt.Errorf("-pkg: %v", err)
	}
	drop, err := regexp.Compile(skip)
	if err != nil {
		return nil, fmt.Errorf("-skip-pkg: %v", err)
	}
	var out []Mutant
	for _, m := range sel {
		names := m.Packages
		if m.Neo4j {
			names = append(slices.Clip(names), "neo4j")
		}
		kept := slices.ContainsFunc(names, keep.MatchString)
		if kept && (skip == "" || !slices.ContainsFunc(names, drop.MatchString)) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mutant has a package matching -pkg %q and none matching -skip-pkg %q", pkgs, skip)
	}
	return out, nil
}

// moduleRoot returns the directory and path of the main module of dir.
func moduleRoot(ctx context.Context, dir string) (root, path string, err error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}\n{{.Path}}")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return "", "", fmt.Errorf("go list -m answered %q", out)
	}
	return lines[0], lines[1], nil
}

type runner struct {
	root, module string
	timeout      time.Duration
	mu           sync.Mutex // serializes writes to out and the sums below
	out          io.Writer
	// The mutants judged on the schema binaries and with their own
	// builds, and the sum of their times.
	onSchema, ownBuild         int
	onSchemaTime, ownBuildTime time.Duration
}

// replayAll replays sel, jobs mutants at a time (each line printed as its
// mutant is judged), and returns how many were not killed.
func (r *runner) replayAll(ctx context.Context, sel []Mutant, jobs int, s *schema) int {
	var bad atomic.Int32
	next := make(chan Mutant)
	var wg sync.WaitGroup
	for job := range min(jobs, len(sel)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range next {
				if r.replay(ctx, m, s, job) != statusKilled {
					bad.Add(1)
				}
			}
		}()
	}
	for _, m := range sel {
		next <- m
	}
	close(next)
	wg.Wait()
	return int(bad.Load())
}

// importPaths turns "./x/y" into the module's import paths.
func (r *runner) importPaths(pkgs []string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = r.module + "/" + strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./")
	}
	return out
}

func (r *runner) short(s string) string { return strings.ReplaceAll(s, r.module+"/", "") }

// runArgs are the go test flags of a mutant's run of tests: the timeout,
// -failfast, the -run pattern, no vet (the unmutated code is vetted by CI;
// a finding of vet on a mutant is not a test killing it, and vet cost a
// mutant of cmd/procgraph seconds of CPU) and no DWARF in the test binary
// (-ldflags=-w: a quarter of the link, which every mutant pays; stack traces
// and build info do not use it).
func (r *runner) runArgs(pattern string) []string {
	return []string{"-timeout", r.timeout.String(), "-failfast", "-vet=off", "-ldflags=-w", "-run", pattern}
}

// runPatterns returns the go test -run patterns that run exactly tests: one
// for the top-level tests named whole, then one per top-level test and
// depth of the subtests named (go test applies each level of a pattern to
// every test, so a test run whole and one filtered to some subtests cannot
// share one, nor can subtests named at two depths: the baseline joins the
// tests of several mutants). Each level is matched exactly.
func runPatterns(tests []string) []string {
	type group struct {
		top   string
		depth int
	}
	var whole []string
	subs := map[group][][]string{} // a top-level test and depth -> its named subtest paths, split
	var groups []group
	for _, t := range tests {
		parts := strings.Split(t, "/")
		if len(parts) == 1 {
			if !slices.Contains(whole, t) {
				whole = append(whole, t)
			}
			continue
		}
		g := group{parts[0], len(parts)}
		if _, ok := subs[g]; !ok {
			groups = append(groups, g)
		}
		subs[g] = append(subs[g], parts[1:])
	}
	var out []string
	if len(whole) > 0 {
		out = append(out, exactly(whole))
	}
	for _, g := range groups {
		if slices.Contains(whole, g.top) {
			continue // run whole already
		}
		levels := []string{exactly([]string{g.top})}
		for i := range g.depth - 1 {
			var names []string
			for _, path := range subs[g] {
				if !slices.Contains(names, path[i]) {
					names = append(names, path[i])
				}
			}
			levels = append(levels, exactly(names))
		}
		out = append(out, strings.Join(levels, "/"))
	}
	return out
}

// exactly is the -run element matching exactly one of names.
func exactly(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// validTests checks a mutant's test names: no empty level, and the
// subtests named under one top-level test all at one depth.
func validTests(tests []string) error {
	depth := map[string]int{}
	for _, t := range tests {
		parts := strings.Split(t, "/")
		if slices.Contains(parts, "") || strings.ContainsAny(t, " \t\n") {
			return fmt.Errorf("test %q: want TestName or TestName/subtest (spaces written as _)", t)
		}
		if len(parts) == 1 {
			continue
		}
		if d, ok := depth[parts[0]]; ok && d != len(parts) {
			return fmt.Errorf("test %q: the subtests of %s are named at different depths", t, parts[0])
		}
		depth[parts[0]] = len(parts)
	}
	return nil
}

// baseline runs every selected mutant's tests unmutated, in one go test:
// they must pass, and each named test must exist in one of its packages.
func (r *runner) baseline(ctx context.Context, sel []Mutant) bool {
	var pkgs, tests []string
	for _, m := range sel {
		for _, p := range m.Packages {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		for _, t := range m.Tests {
			if !slices.Contains(tests, t) {
				tests = append(tests, t)
			}
		}
	}
	start := time.Now()
	// The tests as the mutants run them: the named subtests, not their
	// whole top-level tests (a conformance suite on Neo4j takes minutes).
	res := &testRun{ranTests: map[string]bool{}}
	for _, pattern := range runPatterns(tests) {
		one := goTest(ctx, r.root, []string{"-timeout", r.timeout.String(), "-run", pattern}, pkgs)
		res.failed = append(res.failed, one.failed...)
		res.pkgFailed = append(res.pkgFailed, one.pkgFailed...)
		res.buildFailed = res.buildFailed || one.buildFailed
		res.buildOutput = append(res.buildOutput, one.buildOutput...)
		res.exitErr = cmp.Or(res.exitErr, one.exitErr)
		maps.Copy(res.ranTests, one.ranTests)
	}
	ok := res.passed()
	if !ok {
		fmt.Fprintf(r.out, "%-8s %-34s the named tests fail without any mutant: %s %s\n", statusError, "(baseline)",
			r.short(strings.Join(append(res.failed, res.pkgFailed...), ", ")), lastLines(res.buildOutput, 6))
	}
	for _, m := range sel {
		for _, t := range m.Tests {
			found := false
			for _, p := range r.importPaths(m.Packages) {
				found = found || res.ranTests[p+" "+t]
			}
			if !found {
				ok = false
				fmt.Fprintf(r.out, "%-8s %-34s test %s is in none of %s (renamed? update the mutant)\n", statusError, m.Name, t, strings.Join(m.Packages, " "))
			}
		}
	}
	if ok {
		fmt.Fprintf(r.out, "%-8s %-34s %5.1fs  %d tests in %d packages pass unmutated\n", "OK", "(baseline)", time.Since(start).Seconds(), len(tests), len(pkgs))
	}
	return ok
}

// replay runs m's tests on the schema binaries when they hold it, else
// applies m through an overlay of its own and runs them, and prints its
// verdict.
func (r *runner) replay(ctx context.Context, m Mutant, s *schema, job int) string {
	start := time.Now()
	var status, detail string
	if s.covers(r, m) {
		status, detail = r.runTests(m, func(pkg, pattern string) *testRun {
			return r.schemaTest(ctx, s, job, m.Name, pkg, pattern)
		})
		detail += " (schema)"
	} else {
		status, detail = r.judge(ctx, m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.covers(r, m) {
		r.onSchema++
		r.onSchemaTime += time.Since(start)
	} else {
		r.ownBuild++
		r.ownBuildTime += time.Since(start)
	}
	fmt.Fprintf(r.out, "%-8s %-34s %5.1fs  %s\n", status, m.Name, time.Since(start).Seconds(), r.short(detail))
	return status
}

func (r *runner) judge(ctx context.Context, m Mutant) (status, detail string) {
	files, err := apply(r.root, m)
	if err != nil {
		return statusError, "not applied: " + err.Error()
	}
	dir, err := os.MkdirTemp("", "mutant-")
	if err != nil {
		return statusError, err.Error()
	}
	defer os.RemoveAll(dir)
	overlay, err := writeOverlay(dir, files)
	if err != nil {
		return statusError, err.Error()
	}
	if err := r.checkOverlay(ctx, overlay, files); err != nil {
		return statusError, "not applied: " + err.Error()
	}
	return r.runTests(m, func(pkg, pattern string) *testRun {
		return goTest(ctx, r.root, append([]string{"-overlay", overlay}, r.runArgs(pattern)...), []string{pkg})
	})
}

// runTests runs m's tests through test (a package and a -run pattern: the
// mutant's own overlay, or the schema binary with its switch), one package
// and one -run pattern at a time in the order the mutant names them, with
// -failfast, and stops at the first failure: the mutant is killed, and
// what it would still run could not change that.
// The detail ends with where the time went: building (compile and link)
// and running the tests.
func (r *runner) runTests(m Mutant, test func(pkg, pattern string) *testRun) (status, detail string) {
	ran := &testRun{ran: map[string]int{}}
	timed := func(status, detail string) (string, string) {
		return status, fmt.Sprintf("%s [build %.1fs, tests %.1fs]", detail, ran.build.Seconds(), ran.tests.Seconds())
	}
	for _, pkg := range r.importPaths(m.Packages) {
		for _, pattern := range runPatterns(m.Tests) {
			res := test(pkg, pattern)
			ran.build += res.build
			ran.tests += res.tests
			if status, detail := verdict(res, nil); status != statusSurvived {
				return timed(status, detail)
			}
			ran.ran[pkg] += res.ran[pkg]
		}
	}
	return timed(verdict(ran, r.importPaths(m.Packages)))
}

// checkOverlay asks the go command which source files it builds, with the
// overlay, for each mutated file's package: each mutated file must be one
// of them under the path the overlay replaces (a path spelled differently,
// through a symbolic link, would be silently ignored). A file that is not
// Go must be embedded by the package of its directory or of one above it.
func (r *runner) checkOverlay(ctx context.Context, overlay string, files []mutated) error {
	for _, f := range files {
		list := `{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}`
		dirs := []string{filepath.Dir(f.path)}
		if !strings.HasSuffix(f.path, ".go") {
			list = `{{range .EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}`
			for d := filepath.Dir(dirs[0]); d != filepath.Dir(d) && strings.HasPrefix(d, r.root); d = filepath.Dir(d) {
				dirs = append(dirs, d)
			}
		}
		if !r.builds(ctx, overlay, list, dirs, f.path) {
			return fmt.Errorf("the go command does not build %s as the overlay names it", f.path)
		}
	}
	return nil
}

// builds reports whether the package of one of dirs lists path (list is
// the go list template of the files to look among).
func (r *runner) builds(ctx context.Context, overlay, list string, dirs []string, path string) bool {
	for _, dir := range dirs {
		cmd := exec.CommandContext(ctx, "go", "list", "-overlay", overlay, "-f", list, ".")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err == nil && slices.Contains(strings.Split(string(out), "\n"), filepath.ToSlash(path)) {
			return true
		}
	}
	return false
}
