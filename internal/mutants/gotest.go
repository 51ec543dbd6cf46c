package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// testRun is what one `go test` run reported.
type testRun struct {
	ran         map[string]int  // package -> top-level tests run
	ranTests    map[string]bool // "package TestName" of the tests run ("package TestName/subtest" of subtests)
	failed      []string        // "package TestName" of failed top-level tests
	failedSubs  []string        // "TestName/subtest" of failed subtests
	pkgFailed   []string        // packages that failed
	buildFailed bool
	started     time.Time // when the first test binary started (its "start" event)
	buildOutput []string
	exitErr     error
	// build is the time before the first test binary started (the build,
	// the link, vet if on), tests the time after; summed over the runs of
	// a mutant, they say where its time went.
	build, tests time.Duration
}

// passed reports whether the run passed: no test, package or build failed.
func (r *testRun) passed() bool {
	return r.exitErr == nil && len(r.failed) == 0 && len(r.pkgFailed) == 0 && !r.buildFailed
}

// missing returns the packages (import paths) in which no test ran.
func (r *testRun) missing(pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		if r.ran[p] == 0 {
			out = append(out, p)
		}
	}
	return out
}

// goTest runs `go test -count=1 -json` in root with the given extra
// arguments (the overlay, -run) on pkgs (import paths).
func goTest(ctx context.Context, root string, args, pkgs []string) *testRun {
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"test", "-count=1", "-json"}, args...), pkgs...)...)
	cmd.Dir = root
	r, start, stderr := runEvents(cmd)
	r.build, r.tests = time.Since(start), 0
	if !r.started.IsZero() {
		r.build, r.tests = r.started.Sub(start), time.Since(r.started)
	}
	if stderr != "" {
		// Errors go test reports before any test runs (a package that does
		// not compile, an unknown flag) arrive here.
		r.buildOutput = append(r.buildOutput, stderr)
		if r.exitErr != nil && len(r.failed) == 0 && len(r.ran) == 0 {
			r.buildFailed = true
		}
	}
	return r
}

// runEvents runs cmd, whose standard output is a `go test -json` stream,
// and returns what the stream reported (with the exit error), when cmd
// started, and its standard error, trimmed.
func runEvents(cmd *exec.Cmd) (*testRun, time.Time, string) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return &testRun{exitErr: err}, start, ""
	}
	if err := cmd.Start(); err != nil {
		return &testRun{exitErr: err}, start, ""
	}
	r := parseEvents(out)
	r.exitErr = cmd.Wait()
	return r, start, strings.TrimSpace(stderr.String())
}

// parseEvents reads a `go test -json` stream.
func parseEvents(rd io.Reader) *testRun {
	r := &testRun{ran: map[string]int{}, ranTests: map[string]bool{}}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e testEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		topLevel := e.Test != "" && !strings.Contains(e.Test, "/")
		if e.Action == "start" && r.started.IsZero() {
			r.started = time.Now()
		}
		switch {
		case e.Action == "build-output":
			r.buildOutput = append(r.buildOutput, strings.TrimRight(e.Output, "\n"))
		case e.Action == "build-fail" || e.FailedBuild != "":
			r.buildFailed = true
		case e.Action == "run":
			if topLevel {
				r.ran[e.Package]++
			}
			r.ranTests[e.Package+" "+e.Test] = true
		case e.Action == "fail" && topLevel:
			r.failed = append(r.failed, e.Package+" "+e.Test)
		case e.Action == "fail" && e.Test != "":
			r.failedSubs = append(r.failedSubs, e.Test)
		case e.Action == "fail" && e.Test == "":
			if !slices.Contains(r.pkgFailed, e.Package) {
				r.pkgFailed = append(r.pkgFailed, e.Package)
			}
		}
	}
	return r
}

// verdict classifies a mutant's test run: killed (with what killed it),
// survived, or an error (it did not compile, or no named test ran).
func verdict(r *testRun, pkgs []string) (status, detail string) {
	switch {
	case r.buildFailed:
		return statusError, "does not compile: " + lastLines(r.buildOutput, 6)
	case len(r.failed) > 0:
		detail := "by " + strings.Join(r.failed, ", ")
		if len(r.failedSubs) > 0 {
			// The first to fail is the deepest: what a mutant may name.
			detail += " (" + r.failedSubs[0] + ")"
		}
		return statusKilled, detail
	case len(r.pkgFailed) > 0:
		// A package failed outside any test: a panic in TestMain, the
		// test binary's timeout, a crash.
		return statusKilled, "package failed outside a test: " + strings.Join(r.pkgFailed, ", ")
	case r.exitErr != nil:
		return statusError, fmt.Sprintf("go test: %v %s", r.exitErr, lastLines(r.buildOutput, 6))
	}
	if m := r.missing(pkgs); len(m) > 0 {
		return statusError, "no named test ran in " + strings.Join(m, ", ") + " (renamed? update the mutant)"
	}
	return statusSurvived, "every named test passed"
}

func lastLines(lines []string, n int) string {
	s := strings.Join(lines, "\n")
	all := strings.Split(strings.TrimSpace(s), "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.Join(all, " | ")
}

// The verdicts.
const (
	statusKilled   = "KILLED"
	statusSurvived = "SURVIVED"
	statusError    = "ERROR"
)
