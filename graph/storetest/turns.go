package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// hashOf returns a 64-hex code hash made of c.
func hashOf(c string) string { return strings.Repeat(c, 64)[:64] }

// PendingTurn returns a pending turn record of session created at at, with
// code and argument values, its deadline d after at.
func PendingTurn(session string, at time.Time, d time.Duration) gate.TurnRecord {
	return gate.TurnRecord{
		Turn: gate.Turn{
			ID: gate.NewTurnID(at), SessionID: session, Phase: audit.PhaseInteractive,
			CodeHash: hashOf("a"), Signature: []string{"kill_job"}, StateChangingTools: []string{"kill_job"},
			Status: gate.TurnPending, RequestedBy: "agent", RequestedAt: at, Deadline: at.Add(d),
		},
		Code: "return tools.kill_job(id=id)", Dialect: "starlark", Arguments: map[string]any{"id": "secret-42"},
	}
}

// turnStore returns s as a TurnStore, skipping the test when it is none.
func turnStore(t *testing.T, s procedures.Store) gate.TurnStore {
	t.Helper()
	ts, ok := s.(gate.TurnStore)
	if !ok {
		t.Fatalf("%T does not implement gate.TurnStore", s)
	}
	return ts
}

// RequireSwept requires turns, the store of svc, to hold running failed turns and
// pending expired ones (what a sweep leaves of running turns whose run was
// lost and of pending turns past their deadline), none with code or
// argument values, one approval_expired decision per expired turn and
// one run_lost decision per failed one: each ended once.
func RequireSwept(tb testing.TB, svc *procedures.Service, turns gate.TurnStore, running, pending int) {
	tb.Helper()
	ctx := context.Background()
	for st, want := range map[gate.TurnStatus]int{gate.TurnFailed: running, gate.TurnExpired: pending} {
		f := gate.ApprovalFilter{Status: st, Limit: gate.MaxApprovalLimit}
		n := 0
		for {
			page, err := turns.ListApprovals(ctx, f)
			if err != nil {
				tb.Fatal(err)
			}
			for _, r := range page {
				if r.HoldsValues() {
					tb.Fatalf("%s turn %s holds code or arguments", st, r.ID)
				}
			}
			n += len(page)
			if len(page) < f.Limit {
				break
			}
			f.Before = page[len(page)-1].ID
		}
		if n != want {
			tb.Fatalf("%d turns %s, want %d", n, st, want)
		}
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn, Limit: 1000})
	if err != nil || len(ds) != pending+running {
		tb.Fatalf("%d turn decisions (%v), want %d approval_expired and %d run_lost", len(ds), err, pending, running)
	}
	reasons := map[string]int{}
	for _, d := range ds {
		reasons[d.Reason]++
	}
	if reasons[audit.ReasonApprovalExpired] != pending || reasons[audit.ReasonRunLost] != running {
		tb.Fatalf("turn decisions by reason %v; want %d approval_expired and %d run_lost", reasons, pending, running)
	}
}

// revokeRecords is a PolicyRecords of one record (reason "revoked") per
// code hash, of session, at at.
func revokeRecords(session string, at time.Time) gate.PolicyRecords {
	return func(hashes []string) ([]audit.Decision, error) {
		ds := make([]audit.Decision, len(hashes))
		for i, h := range hashes {
			ds[i] = Decision(audit.KindPolicy, "", h, at)
			ds[i].Reason, ds[i].Session = "revoked", session
		}
		return ds, nil
	}
}

// MustCreateApproval creates r and fails the test on error.
func MustCreateApproval(tb testing.TB, s gate.TurnStore, r gate.TurnRecord, max int, now time.Time) {
	tb.Helper()
	if err := s.CreateApproval(ctx, r, gate.PendingBounds{Total: max}, now); err != nil {
		tb.Fatalf("CreateApproval: %v", err)
	}
}

func testTurns(t *testing.T, newStore NewStore) {
	t.Run("create and get keep code until done", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), time.Minute)
		MustCreateApproval(t, s, r, 4, At(0))
		got, err := s.GetApproval(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "status", got.Status, gate.TurnPending)
		requireEqual(t, "code", got.Code, r.Code)
		requireEqual(t, "arguments", JSONValue(t, got.Arguments), JSONValue(t, r.Arguments))
		RequireTime(t, "deadline", got.Deadline, r.Deadline)
		_, err = s.GetApproval(ctx, gate.NewTurnID(At(1)))
		RequireCode(t, err, fault.CodeNotFound)
		RequireCode(t, s.CreateApproval(ctx, r, gate.PendingBounds{Total: 4}, At(0)), fault.CodeConflict)
	})

	t.Run("an approval without id or session is invalid and writes nothing", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		noID, noSession := PendingTurn("s1", At(0), time.Minute), PendingTurn("", At(1), time.Minute)
		noID.ID = ""
		for _, r := range []gate.TurnRecord{noID, noSession} {
			RequireCode(t, s.CreateApproval(ctx, r, gate.PendingBounds{Total: 4}, At(0)), fault.CodeInvalid)
		}
		all, err := s.ListApprovals(ctx, gate.ApprovalFilter{})
		if err != nil || len(all) != 0 {
			t.Fatalf("ListApprovals = %d, %v; want none", len(all), err)
		}
	})

	t.Run("a running turn past its deadline is purged of code and arguments", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), time.Minute)
		r.Capture = &gate.TurnCapture{Summary: "keep me"}
		MustCreateApproval(t, s, r, 4, At(0))
		approved := r
		approved.Status = gate.TurnApproved
		running := r
		running.Status = gate.TurnRunning
		for _, step := range []struct {
			next gate.TurnRecord
			from gate.TurnStatus
		}{{approved, gate.TurnPending}, {running, gate.TurnApproved}} {
			if _, err := s.TransitionTurn(ctx, step.next, []gate.TurnStatus{step.from}, true, At(10)); err != nil {
				t.Fatalf("to %s: %v", step.next.Status, err)
			}
		}
		// Touched before its deadline, the running turn keeps them.
		got, err := s.TransitionTurn(ctx, running, []gate.TurnStatus{gate.TurnRunning}, false, At(59))
		if err != nil || !got.HoldsValues() || got.Code != r.Code {
			t.Fatalf("running turn before its deadline: %+v, %v", got, err)
		}
		// Its instance died mid-run: once the deadline passed, a touch
		// empties it; it stays running (its outcome is unknown).
		got, err = s.TransitionTurn(ctx, running, []gate.TurnStatus{gate.TurnRunning}, false, At(61))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.GetApproval(ctx, r.ID)
		for _, g := range []*gate.TurnRecord{got, again} {
			if g.HoldsValues() || g.Status != gate.TurnRunning {
				t.Fatalf("running turn past its deadline: status %s, code %q, arguments %v, capture %v", g.Status, g.Code, g.Arguments, g.Capture)
			}
		}
		list, _ := s.ListApprovals(ctx, gate.ApprovalFilter{})
		if len(list) != 1 || list[0].HoldsValues() {
			t.Fatalf("listed: %+v", list)
		}
	})

	t.Run("done turns are purged of code and arguments", func(t *testing.T) {
		for _, st := range []gate.TurnStatus{gate.TurnRejected, gate.TurnExpired,
			gate.TurnCancelled, gate.TurnSucceeded, gate.TurnFailed} {
			s := turnStore(t, newStore(t))
			r := PendingTurn("s1", At(0), time.Minute)
			MustCreateApproval(t, s, r, 4, At(0))
			next := r
			next.Status = st
			got, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, false, At(1))
			if err != nil {
				t.Fatalf("%s: %v", st, err)
			}
			again, _ := s.GetApproval(ctx, r.ID)
			for _, g := range []*gate.TurnRecord{got, again} {
				if g.Code != "" || len(g.Arguments) != 0 || g.Status != st {
					t.Fatalf("%s: stored code %q, arguments %v, status %s; want them purged", st, g.Code, g.Arguments, g.Status)
				}
			}
		}
	})

	t.Run("admission is bounded and expired turns free their place", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		MustCreateApproval(t, s, PendingTurn("s1", At(0), 10*time.Second), 2, At(0))
		MustCreateApproval(t, s, PendingTurn("s2", At(1), 60*time.Second), 2, At(1))
		e := RequireCode(t, s.CreateApproval(ctx, PendingTurn("s3", At(2), time.Minute), gate.PendingBounds{Total: 2}, At(2)), fault.CodeBusy)
		requireEqual(t, "reason", e.Details["reason"], gate.ReasonPendingApprovals)
		if secs, _ := e.Details[fault.DetailRetryAfter].(int); secs < 1 {
			t.Fatalf("retry after %v, want at least 1 s", e.Details[fault.DetailRetryAfter])
		}
		// At(10) the first is past its deadline: it no longer counts.
		MustCreateApproval(t, s, PendingTurn("s3", At(10), time.Minute), 2, At(10))
		list, err := s.ListApprovals(ctx, gate.ApprovalFilter{Status: gate.TurnPending})
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "pending listed", len(list), 3)
	})

	t.Run("32 concurrent submitters never exceed the bound", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		const n, max = 32, 5
		var ok, busy atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				err := s.CreateApproval(ctx, PendingTurn(fmt.Sprintf("s%d", i), At(0), time.Minute), gate.PendingBounds{Total: max}, At(0))
				switch fault.ErrorCode(err) {
				case "":
					ok.Add(1)
				case fault.CodeBusy:
					busy.Add(1)
				default:
					t.Errorf("CreateApproval: %v", err)
				}
			})
		}
		wg.Wait()
		requireEqual(t, "created", ok.Load(), int64(max))
		requireEqual(t, "refused", busy.Load(), int64(n-max))
		list, _ := s.ListApprovals(ctx, gate.ApprovalFilter{Status: gate.TurnPending, Limit: 100})
		requireEqual(t, "stored", len(list), max)
	})

	t.Run("one requester's pending approvals are bounded apart from the total", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		b := gate.PendingBounds{Total: 10, PerRequester: 2}
		by := func(who, session string, at time.Time, d time.Duration) gate.TurnRecord {
			r := PendingTurn(session, at, d)
			r.RequestedBy = who
			return r
		}
		create := func(r gate.TurnRecord, now time.Time) error { return s.CreateApproval(ctx, r, b, now) }
		if err := create(by("other", "o1", At(0), 3*time.Second), At(0)); err != nil {
			t.Fatal(err)
		}
		for i, d := range []time.Duration{10 * time.Second, 60 * time.Second} {
			if err := create(by("agent", fmt.Sprintf("a%d", i), At(i), d), At(i)); err != nil {
				t.Fatal(err)
			}
		}
		e := RequireCode(t, create(by("agent", "a2", At(2), time.Minute), At(2)), fault.CodeBusy)
		requireEqual(t, "reason", e.Details["reason"], gate.ReasonPendingRequester)
		requireEqual(t, "limit", e.Details["limit"], 2)
		// The requester's earliest deadline (At(10)) frees its place, not
		// the other requester's (At(3)).
		requireEqual(t, "retry after", e.Details[fault.DetailRetryAfter], 8)
		if err := create(by("other", "o2", At(2), time.Minute), At(2)); err != nil {
			t.Fatalf("another requester was refused: %v", err)
		}
		// At(10) the requester's first is past its deadline: a place is free.
		if err := create(by("agent", "a3", At(10), time.Minute), At(10)); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListApprovals(ctx, gate.ApprovalFilter{Status: gate.TurnPending})
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "pending listed", len(list), 5)
	})

	t.Run("concurrent creators never exceed either bound", func(t *testing.T) {
		for _, c := range []struct {
			name                string
			bounds              gate.PendingBounds
			requesters, each    int
			wantEach, wantTotal int
		}{
			{"the requester's bound binds", gate.PendingBounds{Total: 100, PerRequester: 3}, 4, 10, 3, 12},
			{"the total binds", gate.PendingBounds{Total: 5, PerRequester: 3}, 3, 8, -1, 5},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := turnStore(t, newStore(t))
				var mu sync.Mutex
				created := map[string]int{}
				var total, busy atomic.Int64
				var wg sync.WaitGroup
				for q := range c.requesters {
					for i := range c.each {
						wg.Go(func() {
							r := PendingTurn(fmt.Sprintf("s%d-%d", q, i), At(0), time.Minute)
							r.RequestedBy = fmt.Sprintf("agent%d", q)
							err := s.CreateApproval(ctx, r, c.bounds, At(0))
							switch fault.ErrorCode(err) {
							case "":
								total.Add(1)
								mu.Lock()
								created[r.RequestedBy]++
								mu.Unlock()
							case fault.CodeBusy:
								busy.Add(1)
							default:
								t.Errorf("CreateApproval: %v", err)
							}
						})
					}
				}
				wg.Wait()
				requireEqual(t, "created", total.Load(), int64(c.wantTotal))
				requireEqual(t, "refused", busy.Load(), int64(c.requesters*c.each-c.wantTotal))
				for who, n := range created {
					if n > c.bounds.PerRequester || (c.wantEach >= 0 && n != c.wantEach) {
						t.Fatalf("%s holds %d pending approvals (bound %d)", who, n, c.bounds.PerRequester)
					}
				}
				list, _ := s.ListApprovals(ctx, gate.ApprovalFilter{Status: gate.TurnPending, Limit: 100})
				requireEqual(t, "stored", len(list), c.wantTotal)
			})
		}
	})

	t.Run("a resolution happens once under concurrent resolvers", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), time.Minute)
		MustCreateApproval(t, s, r, 4, At(0))
		const n = 16
		var won atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				next := r
				next.Status = gate.TurnApproved
				next.Resolution = &gate.Resolution{Choice: gate.ChoiceRunOnce, By: fmt.Sprintf("op%d", i), At: At(1), CodeHash: r.CodeHash}
				d := Decision(audit.KindApproval, "", r.CodeHash, At(1))
				_, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, true, At(1), d)
				switch fault.ErrorCode(err) {
				case "":
					won.Add(1)
				case fault.CodeConflict:
				default:
					t.Errorf("TransitionTurn: %v", err)
				}
			})
		}
		wg.Wait()
		requireEqual(t, "resolutions", won.Load(), int64(1))
		ds := MustDecisions(t, s.(procedures.Store), audit.DecisionFilter{Kind: audit.KindApproval})
		requireEqual(t, "approval decisions", len(ds), 1)
	})

	t.Run("a run is claimed once under concurrent runners", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), time.Minute)
		MustCreateApproval(t, s, r, 4, At(0))
		approved := r
		approved.Status = gate.TurnApproved
		if _, err := s.TransitionTurn(ctx, approved, []gate.TurnStatus{gate.TurnPending}, true, At(1)); err != nil {
			t.Fatal(err)
		}
		var won atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				next := approved
				next.Status = gate.TurnRunning
				if _, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnApproved}, true, At(2)); err == nil {
					won.Add(1)
				} else if fault.ErrorCode(err) != fault.CodeConflict {
					t.Errorf("TransitionTurn: %v", err)
				}
			})
		}
		wg.Wait()
		requireEqual(t, "runs", won.Load(), int64(1))
	})

	t.Run("a resume at the call is claimed once per pause", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), time.Minute)
		r.Review = gate.ReviewAtCall
		r.Pause = &replay.Pause{Block: "b", Position: 1, Tool: "kill_job", Arguments: map[string]any{"panda_id": 4007}, ArgsDigest: "d1",
			Calls: []replay.PausedCall{{Tool: "get_task_jobs_summary", Arguments: map[string]any{"task_id": 7}, Response: []byte(`{"failed":3}`)}}}
		r.Call = gate.CallOf(r.Pause)
		MustCreateApproval(t, s, r, 4, At(0))
		step := func(cur gate.TurnRecord, to gate.TurnStatus, from gate.TurnStatus) gate.TurnRecord {
			t.Helper()
			cur.Status = to
			got, err := s.TransitionTurn(ctx, cur, []gate.TurnStatus{from}, false, At(1))
			if err != nil {
				t.Fatalf("%s → %s: %v", from, to, err)
			}
			return *got
		}
		approved := step(r, gate.TurnApproved, gate.TurnPending)
		if approved.Pause == nil || approved.Pause.ArgsDigest != "d1" || string(approved.Pause.Calls[0].Response) != `{"failed":3}` {
			t.Fatalf("the stored pause %+v; want it kept as written", approved.Pause)
		}
		running := step(approved, gate.TurnRunning, gate.TurnApproved)
		// The run pauses again: one more pause, at the next call.
		second := running
		second.Pause = &replay.Pause{Block: "b", Position: 2, Tool: "kill_job", ArgsDigest: "d2"}
		second.Pauses = running.Pauses + 1
		second = step(second, gate.TurnPending, gate.TurnRunning)
		step(second, gate.TurnApproved, gate.TurnPending)
		// A claim built from the turn read approved at the first pause
		// finds the status it expects, and is refused all the same.
		stale := approved
		stale.Status = gate.TurnRunning
		_, err := s.TransitionTurn(ctx, stale, []gate.TurnStatus{gate.TurnApproved}, true, At(2))
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CodeConflict || fe.Details["reason"] != gate.ReasonPause {
			t.Fatalf("a stale claim: %v; want a conflict, reason pause", err)
		}
		// A pause may not skip ahead either.
		skip := second
		skip.Status, skip.Pauses = gate.TurnPending, second.Pauses+2
		if _, err := s.TransitionTurn(ctx, skip, []gate.TurnStatus{gate.TurnApproved}, false, At(2)); fault.ErrorCode(err) != fault.CodeConflict {
			t.Fatalf("a transition that skips pauses: %v; want a conflict", err)
		}
		got, err := s.GetApproval(ctx, r.ID)
		if err != nil || got.Status != gate.TurnApproved || got.Pauses != 1 || got.Pause == nil || got.Pause.Position != 2 {
			t.Fatalf("the turn is %+v (%v); want approved at its second pause", got, err)
		}
		again := step(*got, gate.TurnRunning, gate.TurnApproved)
		// A finish built from the run of the first pause is refused while
		// the second runs, as a stale claim is.
		stale.Status = gate.TurnSucceeded
		if _, done, _, err := s.FinishTurn(ctx, stale, At(3), procedures.RunRecord{}); err != nil || done {
			t.Fatalf("a stale finish: done %v, %v; want not done", done, err)
		}
		done := step(again, gate.TurnSucceeded, gate.TurnRunning)
		if done.Pause != nil || done.HoldsValues() {
			t.Fatalf("a done turn keeps its pause %+v; want it purged", done.Pause)
		}
	})

	t.Run("past the deadline nothing resolves or runs", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		r := PendingTurn("s1", At(0), 10*time.Second)
		MustCreateApproval(t, s, r, 4, At(0))
		next := r
		next.Status = gate.TurnApproved
		_, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, true, At(10))
		e := RequireCode(t, err, fault.CodeConflict)
		requireEqual(t, "reason", e.Details["reason"], audit.ReasonApprovalExpired)
		got, _ := s.GetApproval(ctx, r.ID)
		requireEqual(t, "status", got.Status, gate.TurnPending)
		// Expiring is allowed past the deadline (live false).
		next.Status = gate.TurnExpired
		if _, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, false, At(10)); err != nil {
			t.Fatal(err)
		}
		next.Status = gate.TurnApproved
		_, err = s.TransitionTurn(ctx, next, []gate.TurnStatus{gate.TurnPending}, false, At(10))
		e = RequireCode(t, err, fault.CodeConflict)
		requireEqual(t, "stored status", e.Details["status"], string(gate.TurnExpired))
	})

	t.Run("list filters and pages newest first", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		var ids []string
		for i := range 5 {
			r := PendingTurn([]string{"a", "b"}[i%2], At(i), time.Hour)
			ids = append(ids, r.ID)
			MustCreateApproval(t, s, r, 10, At(i))
		}
		all, err := s.ListApprovals(ctx, gate.ApprovalFilter{})
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "order", turnIDs(all), []string{ids[4], ids[3], ids[2], ids[1], ids[0]})
		a, _ := s.ListApprovals(ctx, gate.ApprovalFilter{SessionID: "a"})
		requireEqual(t, "session a", turnIDs(a), []string{ids[4], ids[2], ids[0]})
		page, _ := s.ListApprovals(ctx, gate.ApprovalFilter{Limit: 2, Before: ids[3]})
		requireEqual(t, "page", turnIDs(page), []string{ids[2], ids[1]})
		_, err = s.ListApprovals(ctx, gate.ApprovalFilter{Status: "nope"})
		RequireCode(t, err, fault.CodeInvalid)
	})

	t.Run("list by status: the stored status, whatever the record's text holds", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		// A pending turn whose capture metadata and summary hold another
		// status's name, as JSON key and value, and as text.
		decoy := PendingTurn("s", At(0), time.Hour)
		decoy.Summary = `"status":"running"`
		decoy.Capture = &gate.TurnCapture{Metadata: map[string]any{"status": "running"}}
		MustCreateApproval(t, s, decoy, 10, At(0))
		running := PendingTurn("s", At(1), time.Hour)
		MustCreateApproval(t, s, running, 10, At(1))
		for _, st := range []gate.TurnStatus{gate.TurnApproved, gate.TurnRunning} {
			from := running.Status
			running.Status = st
			if _, err := s.TransitionTurn(ctx, running, []gate.TurnStatus{from}, true, At(2)); err != nil {
				t.Fatal(err)
			}
		}
		for st, want := range map[gate.TurnStatus][]string{
			gate.TurnRunning: {running.ID}, gate.TurnPending: {decoy.ID}, gate.TurnApproved: {},
		} {
			got, err := s.ListApprovals(ctx, gate.ApprovalFilter{Status: st})
			if err != nil {
				t.Fatal(err)
			}
			requireEqual(t, string(st), turnIDs(got), want)
		}
	})

	t.Run("a session's policies are its own, whatever longer ids hold", func(t *testing.T) {
		// "p\x00x" cannot be made since usage.CheckSessionID, but a
		// store written before may hold it.
		s := turnStore(t, newStore(t))
		for _, id := range []string{"p", "p\x00x", "p\x00"} {
			p := gate.SessionPolicy{SessionID: id, CodeHash: hashOf(id), Policy: gate.ChoiceAutoRun, SetBy: "op", SetAt: At(1)}
			if err := s.PutPolicy(ctx, p, Decision(audit.KindPolicy, "", p.CodeHash, At(1))); err != nil {
				t.Fatal(err)
			}
		}
		ps, err := s.Policies(ctx, "p")
		if err != nil || len(ps) != 1 || ps[0].CodeHash != hashOf("p") {
			t.Fatalf("Policies(p) = %+v, %v; want p's only", ps, err)
		}
		if n, err := s.DeletePolicies(ctx, "p", "", revokeRecords("p", At(2))); err != nil || n != 1 {
			t.Fatalf("DeletePolicies(p) = %d, %v; want 1", n, err)
		}
		for _, id := range []string{"p\x00x", "p\x00"} {
			if _, ok, err := s.Policy(ctx, id, hashOf(id)); err != nil || !ok {
				t.Fatalf("policy of %q after revoking p's: %v, %v", id, ok, err)
			}
		}
	})

	t.Run("policies keep the requester they are bound to", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		p := gate.SessionPolicy{SessionID: "s1", CodeHash: hashOf("a"), Policy: gate.ChoiceAutoRun, Summary: "sum",
			SetBy: "op", SetAt: At(1), RequestedBy: "agent"}
		if err := s.PutPolicy(ctx, p, Decision(audit.KindPolicy, "", p.CodeHash, At(1))); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Policy(ctx, "s1", p.CodeHash)
		if err != nil || !ok {
			t.Fatalf("Policy = %v, %v", ok, err)
		}
		want := p
		want.SetAt = Ms(p.SetAt)
		requireEqual(t, "policy", got, want)
		if !got.AppliesTo("agent") || got.AppliesTo("agent2") {
			t.Fatalf("stored policy %+v applies to the wrong requesters", got)
		}
		ps, _ := s.Policies(ctx, "s1")
		requireEqual(t, "policies", ps, []gate.SessionPolicy{want})
		// An approval for another requester's turn with the same code
		// replaces the policy, binding it to them.
		p2 := p
		p2.RequestedBy, p2.SetAt = "agent2", At(2)
		if err := s.PutPolicy(ctx, p2, Decision(audit.KindPolicy, "", p.CodeHash, At(2))); err != nil {
			t.Fatal(err)
		}
		got, _, _ = s.Policy(ctx, "s1", p.CodeHash)
		p2.SetAt = Ms(p2.SetAt)
		requireEqual(t, "replaced policy", got, p2)
	})

	t.Run("policies per session and hash, revoked by prefix or all", func(t *testing.T) {
		s := turnStore(t, newStore(t))
		put := func(session, hash string, c gate.Choice) {
			t.Helper()
			p := gate.SessionPolicy{SessionID: session, CodeHash: hash, Policy: c, SetBy: "op", SetAt: At(1)}
			if err := s.PutPolicy(ctx, p, Decision(audit.KindPolicy, "", hash, At(1))); err != nil {
				t.Fatal(err)
			}
		}
		put("s1", hashOf("a"), gate.ChoiceAutoRun)
		put("s1", "ab"+hashOf("c")[2:], gate.ChoiceAlwaysAsk)
		put("s1", hashOf("b"), gate.ChoiceAutoRun)
		put("s2", hashOf("a"), gate.ChoiceAlwaysAsk)
		p, ok, err := s.Policy(ctx, "s1", hashOf("a"))
		if err != nil || !ok || p.Policy != gate.ChoiceAutoRun || p.SetBy != "op" {
			t.Fatalf("Policy = %+v, %v, %v", p, ok, err)
		}
		if _, ok, _ := s.Policy(ctx, "s3", hashOf("a")); ok {
			t.Fatal("a policy of another session applies")
		}
		ps, _ := s.Policies(ctx, "s1")
		requireEqual(t, "s1 policies", len(ps), 3)
		_, err = s.DeletePolicies(ctx, "s1", "a", revokeRecords("s1", At(2)))
		e := RequireCode(t, err, fault.CodeConflict)
		requireEqual(t, "ambiguous", e.Details["reason"], "ambiguous")
		_, err = s.DeletePolicies(ctx, "s1", "ffff", revokeRecords("s1", At(2)))
		e = RequireCode(t, err, fault.CodeConflict)
		requireEqual(t, "no match", e.Details["reason"], "no_match")
		refused := fault.Errorf(fault.CodeInvalid, "no record")
		_, err = s.DeletePolicies(ctx, "s1", "", func([]string) ([]audit.Decision, error) { return nil, refused })
		RequireCode(t, err, fault.CodeInvalid)
		if ps, _ := s.Policies(ctx, "s1"); len(ps) != 3 {
			t.Fatalf("a revoke whose records were refused deleted policies: %d left", len(ps))
		}
		n, err := s.DeletePolicies(ctx, "s1", "bbbbbbbb", revokeRecords("s1", At(2)))
		if err != nil || n != 1 {
			t.Fatalf("DeletePolicies(prefix) = %d, %v", n, err)
		}
		n, err = s.DeletePolicies(ctx, "s1", "", revokeRecords("s1", At(3)))
		if err != nil || n != 2 {
			t.Fatalf("DeletePolicies(all) = %d, %v", n, err)
		}
		if _, ok, _ := s.Policy(ctx, "s2", hashOf("a")); !ok {
			t.Fatal("revoking s1 revoked s2's policy")
		}
		ds := MustDecisions(t, s.(procedures.Store), audit.DecisionFilter{Kind: audit.KindPolicy})
		requireEqual(t, "policy decisions", len(ds), 7)
		var revoked []string
		for _, d := range ds {
			if d.Reason == "revoked" {
				requireEqual(t, "revoked session", d.Session, "s1")
				revoked = append(revoked, d.CodeHash)
			}
		}
		slices.Sort(revoked)
		requireEqual(t, "revoked records", revoked, []string{hashOf("a"), "ab" + hashOf("c")[2:], hashOf("b")})
	})
}

func turnIDs(rs []*gate.TurnRecord) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// BenchApprovalRoundTrip measures the store's part of an approval round
// trip: create (admission), resolve (with its decision), claim the run
// (with its decision) and finish (purge) — four write transactions.
func BenchApprovalRoundTrip(b *testing.B, s gate.TurnStore) {
	b.ReportAllocs()
	for b.Loop() {
		now := time.Now()
		r := PendingTurn("bench", now, time.Minute)
		if err := s.CreateApproval(ctx, r, gate.PendingBounds{Total: 1 << 20}, now); err != nil {
			b.Fatal(err)
		}
		for _, step := range []struct {
			from, to gate.TurnStatus
			d        bool
		}{{gate.TurnPending, gate.TurnApproved, true}, {gate.TurnApproved, gate.TurnRunning, true},
			{gate.TurnRunning, gate.TurnSucceeded, false}} {
			next := r
			next.Status = step.to
			var ds []audit.Decision
			if step.d {
				ds = append(ds, Decision(audit.KindApproval, "", r.CodeHash, now))
			}
			if _, err := s.TransitionTurn(ctx, next, []gate.TurnStatus{step.from}, step.to != gate.TurnSucceeded, now, ds...); err != nil {
				b.Fatal(err)
			}
		}
	}
}
