package neo4j

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/reuse"
)

// TestWritePathStatements: on Neo4j, each write request's path runs one
// statement — its write: a capture of an existing procedure, exposed or
// not, reads nothing (the write confirms the catalogue it was prepared
// under), a capture of a new one reads its suggestion's page in the
// write's statement, before it writes (ADR 0049), and a grant and a revoke
// of a procedure the service knows write without reading first (ADR 0047).
// A second statement on one of these paths fails here.
func TestWritePathStatements(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{
		{Name: "wp_get", ReadOnly: true}, {Name: "wp_list", ReadOnly: true}, {Name: "wp_runs", ReadOnly: true}, {Name: "wp_kill"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	readOnly := "a = tools.wp_get(task_id=task_id)\nreturn tools.wp_list(x=a)\n"
	mutating := "a = tools.wp_get(task_id=task_id)\ntools.wp_kill(x=a)\n"
	var name string
	for i, code := range []string{readOnly, mutating} {
		out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: code, SessionID: "warm"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			name = out.Procedure.Name
		}
	}
	// The classes the store holds, as they are now (the warm captures'
	// pages were read beside their writes, before their classes existed).
	if _, err := svc.Suggest(ctx, []string{"wp_get", "wp_list"}, ""); err != nil {
		t.Fatal(err)
	}
	var n replaytest.Counter
	octx := WithQueryObserver(ctx, func(q string, _, _ time.Duration) { n.Add(q) })
	for i, c := range []struct {
		path string
		run  func() error
		want string
	}{
		{"capture existing, exposed", func() error {
			_, err := svc.Capture(octx, procedures.CaptureRequest{Code: readOnly, SessionID: "s1"})
			return err
		}, "capture×1"},
		{"capture existing, no holder exposed", func() error {
			_, err := svc.Capture(octx, procedures.CaptureRequest{Code: mutating, SessionID: "s2"})
			return err
		}, "capture×1"},
		{"capture new, no holder exposed", func() error {
			_, err := svc.Capture(octx, procedures.CaptureRequest{Code: "a = tools.wp_runs(task_id=task_id)\ntools.wp_kill(x=a)\n", SessionID: "s3"})
			return err
		}, "capture×1"},
		{"capture new (its suggestion's page read in the write's statement)", func() error {
			_, err := svc.Capture(octx, procedures.CaptureRequest{Code: "a = tools.wp_runs(task_id=task_id)\nreturn tools.wp_list(x=a)\n", SessionID: "s4"})
			return err
		}, "capture×1"},
		{"capture new, covered by an exposed procedure", func() error {
			out, err := svc.Capture(octx, procedures.CaptureRequest{Code: "return tools.wp_list(x=task_id)\n", SessionID: "s5"})
			if err == nil && (out.Suggestion == nil || out.Suggestion.Tool != name || out.Suggestion.Reason != reuse.SuggestCoveredBy) {
				return fmt.Errorf("suggestion %+v, want %s covered_by", out.Suggestion, name)
			}
			return err
		}, "capture×1"},
		{"grant", func() error {
			_, _, err := svc.SetAutoRun(octx, procedures.AutoRunRequest{Name: name, Enabled: true, Actor: "alice"})
			return err
		}, "grant×1"},
		{"revoke", func() error {
			_, _, err := svc.SetAutoRun(octx, procedures.AutoRunRequest{Name: name, Actor: "alice"})
			return err
		}, "grant×1"},
	} {
		if err := c.run(); err != nil {
			t.Fatalf("%d %s: %v", i, c.path, err)
		}
		if got := n.Take(); got != c.want {
			t.Errorf("%s: statements %s, want %s", c.path, got, c.want)
		}
	}
}
