package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// testAuthRevision: the store's authorization revision (AuthRevision)
// moves with every write that can change what a grant or a session policy
// decides — a catalogue, a new procedure, a current version or its status
// changed by a capture, a grant and a revoke, a promotion, a retirement
// and its end, a demotion by a run and its lift, a rebaseline, a policy
// set and deleted — and with no other write: a capture of a version that
// stays as it was, a use that does not demote, an appended decision.
func testAuthRevision(t *testing.T, newStore NewStore) {
	t.Run("every write that changes an authorization moves it, no other", func(t *testing.T) {
		s := newStore(t)
		name := NameOf(sigAB...)
		last, err := s.AuthRevision(ctx)
		if err != nil || last != 0 {
			t.Fatalf("AuthRevision of an empty store = %d, %v; want 0", last, err)
		}
		step := func(what string, moves bool, write func() error) {
			t.Helper()
			if err := write(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			rev, err := s.AuthRevision(ctx)
			if err != nil {
				t.Fatalf("%s: AuthRevision: %v", what, err)
			}
			switch {
			case moves && rev <= last:
				t.Errorf("%s: revision %d after %d, want it moved", what, rev, last)
			case !moves && rev != last:
				t.Errorf("%s: revision %d after %d, want it unchanged", what, rev, last)
			}
			last = rev
		}
		capture := func(in procedures.CaptureInput) func() error {
			return func() error { _, err := s.Capture(ctx, in); return err }
		}
		grant := func(g *procedures.Grant, hash string, at int) func() error {
			kind := audit.KindGrant
			if g == nil {
				kind = audit.KindRevoke
			}
			return func() error {
				_, err := s.SetGrant(ctx, name, g, hash, nil, Decision(kind, name, hash, At(at)))
				return err
			}
		}
		fail := func(n int) func() error {
			return func() error {
				in := run(name, "", fmt.Sprintf("f%d", n), health.FailureToolError, time.Millisecond, At(40+n))
				in.DemoteAfter, in.Run.Caller = 3, []string{"a", "b"}[n%2]
				_, err := s.RecordUse(ctx, in)
				return err
			}
		}

		step("a catalogue", true, func() error { putDriftTools(t, s, driftTools(nil)); return nil })
		step("a new procedure", true, capture(In(sigAB, "h1", "k1", At(1))))
		step("its version again", false, capture(In(sigAB, "h1", "k2", At(2))))
		step("a failed version not current", false, capture(Failed(In(sigAB, "h2", "k3", At(3)))))
		step("a succeeded version not current", false, capture(In(sigAB, "h3", "k4", At(4))))
		step("a grant", true, grant(&procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: At(5), Reason: "r"}, "h1", 5))
		step("a successful use", false, func() error {
			_, err := s.RecordUse(ctx, run(name, "", "u1", "", time.Millisecond, At(6)))
			return err
		})
		step("a decision", false, func() error { return s.AppendDecision(ctx, Decision(audit.KindInvoke, name, "h1", At(7))) })
		step("a revoke", true, grant(nil, "h1", 8))
		step("a promotion", true, func() error {
			_, err := s.Promote(ctx, name, "h3", Decision(audit.KindPromote, name, "h3", At(9)))
			return err
		})
		step("a retirement", true, func() error {
			_, err := s.SetRetired(ctx, name, &procedures.Retirement{RetiredBy: "op", RetiredAt: At(10), Reason: "r"}, Decision(audit.KindRetire, name, "h3", At(10)))
			return err
		})
		step("its end", true, func() error {
			_, err := s.SetRetired(ctx, name, nil, Decision(audit.KindRetire, name, "h3", At(11)))
			return err
		})
		step("a failure that does not demote", false, fail(0))
		step("another", false, fail(1))
		step("the failure that demotes", true, fail(2))
		step("a failure of the demoted", false, fail(3))
		step("the demotion lifted", true, func() error {
			_, err := s.LiftDemotion(ctx, procedures.LiftInput{Name: name, Decision: Decision(audit.KindHealth, name, "h3", At(50))})
			return err
		})
		step("another catalogue", true, func() error {
			putDriftTools(t, s, driftTools(func(_, b *procedures.Tool) { b.ExternalAccess = true }))
			return nil
		})
		step("a rebaseline", true, func() error {
			d := Decision(audit.KindDrift, name, "h3", At(60))
			_, err := s.Rebaseline(ctx, procedures.RebaselineInput{Name: name, CodeHash: "h3", Decision: &d})
			return err
		})
		sigC := []string{"tool_c"}
		step("a new procedure that failed", true, capture(Failed(In(sigC, "c1", "k5", At(61)))))
		step("its current version succeeding", true, capture(In(sigC, "c1", "k6", At(62))))
		ts := turnStore(t, s)
		p := gate.SessionPolicy{SessionID: "s1", CodeHash: hashOf("a"), Policy: gate.ChoiceAutoRun, SetBy: "op", SetAt: At(70)}
		step("a session policy", true, func() error { return ts.PutPolicy(ctx, p, Decision(audit.KindPolicy, "", p.CodeHash, At(70))) })
		step("its deletion", true, func() error {
			_, err := ts.DeletePolicies(ctx, "s1", "", func(hashes []string) ([]audit.Decision, error) {
				return []audit.Decision{Decision(audit.KindPolicy, "", hashes[0], At(71))}, nil
			})
			return err
		})
	})
}
