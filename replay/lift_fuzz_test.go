package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
)

// liftSeeds are FuzzLift's seed corpus: testdata/lift and the analysis'
// corpus (signature/testdata/corpus), each file in its own dialect.
func liftSeeds(f *testing.F) {
	for _, dir := range []string{filepath.Join("testdata", "lift"), filepath.Join("..", "signature", "testdata", "corpus")} {
		paths, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			code, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(code), strings.HasSuffix(p, ".py"))
		}
	}
}

// FuzzLift: lifting every literal it can (the most a catalogue could
// accept) keeps the signature, the name and the opacity, never fails to
// apply, its analysis is the lifted code's (Analyze of it, field for
// field: lifting does not parse the code again), and the lifted code run in the sandbox with the examples as its
// arguments makes the same tool calls, with the same arguments, as the code
// as written (a recording dispatcher answers both alike), and ends alike.
func FuzzLift(f *testing.F) {
	liftSeeds(f)
	f.Fuzz(func(t *testing.T, code string, pythonAsync bool) {
		d := signature.Starlark
		if pythonAsync {
			d = signature.PythonAsync
		}
		a, plan, err := signature.AnalyzeLift(code, d)
		if err != nil {
			return
		}
		res := plan.Apply(func(signature.LiftSite) signature.Verdict { return signature.Verdict{OK: true} }, nil)
		for _, w := range res.Warnings {
			if strings.HasPrefix(w.Message, "nothing was lifted") {
				t.Fatalf("%s\n%s", w.Message, code)
			}
		}
		b := res.Analysis
		if again, err := signature.Analyze(res.Code, d); err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("the lifted analysis is not the lifted code's (%v):\n%s\n%+v\n%+v", err, res.Code, b, again)
		}
		if !reflect.DeepEqual(a.Signature, b.Signature) || a.Name != b.Name || a.Opaque != b.Opaque {
			t.Fatalf("lifting changed the analysis: %v %s -> %v %s", a.Signature, a.Name, b.Signature, b.Name)
		}
		if strings.Count(code, "\n") != strings.Count(res.Code, "\n") {
			t.Fatalf("lifting moved lines:\n%s\n---\n%s", code, res.Code)
		}
		if len(res.Lifted) == 0 {
			return
		}
		args := map[string]any{}
		for _, p := range a.Parameters {
			args[p] = nil
		}
		before := runRecorded(t, a, args)
		for p, v := range res.Examples {
			args[p] = v
		}
		after := runRecorded(t, b, args)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("lifting changed the run:\n%s\n%+v\n---\n%s\n%+v", code, before, res.Code, after)
		}
	})
}

// recordedRun is what a run did: its calls (tool and JSON arguments), its
// value and its error's code.
type recordedRun struct {
	Calls []string
	Value string
	Err   string
}

func runRecorded(t *testing.T, a *signature.Analysis, args map[string]any) recordedRun {
	t.Helper()
	var mu sync.Mutex
	var calls []string
	n := 0
	disp := sandbox.ToolCallerFunc(func(_ context.Context, name string, in map[string]any) (any, error) {
		raw, _ := json.Marshal(in)
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, name+" "+string(raw))
		n++
		return map[string]any{"tool": name, "n": n, "args": in}, nil
	})
	res := pool.Run(context.Background(), sandbox.Request{Filename: "lift.star", Source: a.Source, Args: args, Allowed: a.Signature,
		Limits: sandbox.Limits{MaxSteps: 200_000, Timeout: 5 * time.Second, MaxCalls: 20, MaxMemory: 64 << 20}}, disp)
	out := recordedRun{Calls: calls}
	if res.Err != nil {
		out.Err = string(res.Err.Code)
		if res.Err.Code == sandbox.Timeout {
			t.Skip("the run timed out: nothing to compare")
		}
	} else {
		raw, _ := json.Marshal(res.Value)
		out.Value = string(raw)
	}
	return out
}
