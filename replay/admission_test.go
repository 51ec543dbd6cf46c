package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// gateDispatcher holds every call until its channel is closed (or the
// call's context ends), and says when a call arrived.
type gateDispatcher struct {
	open    chan struct{}
	arrived chan string
}

func (d *gateDispatcher) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	d.arrived <- tool
	if args["task_id"] != int64(1) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-d.open:
		return map[string]any{"ok": true}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// busyOf returns the details of a CodeBusy error, failing the test otherwise.
func busyOf(t *testing.T, err error) map[string]any {
	t.Helper()
	pe, ok := err.(*fault.Error)
	if !ok || pe.Code != fault.CodeBusy {
		t.Fatalf("error = %v, want busy", err)
	}
	if pe.Details["reason"] != fault.ReasonReplayQueue || pe.Details[fault.DetailRetryAfter].(int) < 1 {
		t.Fatalf("details = %v", pe.Details)
	}
	return pe.Details
}

// TestAdmissionQueueFull: with one slot and a queue of one, a third invoke
// is refused at once as busy, before anything is decided; the two admitted
// ones run when the upstream answers.
func TestAdmissionQueueFull(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			p := e.Capture(replaytest.ReadOnlyCode)
			d := &gateDispatcher{open: make(chan struct{}), arrived: make(chan string, 10)}
			adm := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1, Queue: 1})
			rp := replay.New(e.Service, rn.r, d, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Admission: adm})
			req := replay.InvokeRequest{Name: p.Name, Arguments: map[string]any{"task_id": 1}, Phase: audit.PhaseAutomatic}
			errs := make(chan error, 2)
			go func() { _, err := rp.Invoke(context.Background(), req); errs <- err }()
			<-d.arrived // the first holds the slot
			go func() { _, err := rp.Invoke(context.Background(), req); errs <- err }()
			for adm.Stats().Waiting != 1 {
				time.Sleep(time.Millisecond)
			}
			_, err := rp.Invoke(context.Background(), req)
			if busyOf(t, err)["limit"] != sandbox.LimitQueue {
				t.Fatalf("details = %v", err.(*fault.Error).Details)
			}
			// The running invoke's record is stored with its run (a read
			// commits once, after it ran): none is stored yet.
			if n := len(e.Decisions(p.Name)); n != 0 {
				t.Fatalf("%d decisions while one ran: the refused invoke was decided", n)
			}
			close(d.open)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if n := len(e.Decisions(p.Name)); n != 2 {
				t.Fatalf("%d decisions, want 2", n)
			}
		})
	}
}

// TestAdmissionDeadlineCountsWait: the deadline is fixed when the request
// arrives. A request that waits for a slot until its deadline is refused as
// busy, never run late; one admitted after waiting half its time gets only
// the other half to run.
func TestAdmissionDeadlineCountsWait(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			p := e.Capture(replaytest.ReadOnlyCode)
			adm := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1})
			// Seconds, not less: under -race on a loaded machine the held
			// run takes a while to give its slot back once opened.
			const timeout = 4 * time.Second
			// task_id 1 waits for open; task_id 2 waits for its deadline.
			d := &gateDispatcher{open: make(chan struct{}), arrived: make(chan string, 10)}
			long := replay.New(e.Service, rn.r, d, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Admission: adm})
			short := replay.New(e.Service, rn.r, d, replay.Options{Limits: sandbox.Limits{Timeout: timeout}, Admission: adm})
			req := func(id int) replay.InvokeRequest {
				return replay.InvokeRequest{Name: p.Name, Arguments: map[string]any{"task_id": id}, Phase: audit.PhaseAutomatic}
			}
			held := make(chan error, 1)
			go func() { _, err := long.Invoke(context.Background(), req(1)); held <- err }()
			<-d.arrived
			start := time.Now()
			_, err := short.Invoke(context.Background(), req(2))
			if busyOf(t, err)["limit"] != sandbox.LimitDeadline {
				t.Fatalf("details = %v", err.(*fault.Error).Details)
			}
			if waited := time.Since(start); waited > timeout+timeout/2 {
				t.Errorf("refused after %v: waited past its deadline of %v", waited, timeout)
			}
			close(d.open)
			if err := <-held; err != nil {
				t.Fatal(err)
			}

			// Admitted after waiting half its time: the run gets the rest.
			// (A fresh Admission: this one now expects a wait of a second
			// and would refuse at once, as the next test shows.)
			d = &gateDispatcher{open: make(chan struct{}), arrived: make(chan string, 10)}
			adm = sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1})
			long.SetDispatcher(d)
			short.SetDispatcher(d)
			long.SetAdmission(adm)
			short.SetAdmission(adm)
			go func() { _, err := long.Invoke(context.Background(), req(1)); held <- err }()
			<-d.arrived
			time.AfterFunc(timeout/2, func() { close(d.open) })
			start = time.Now()
			res, err := short.Invoke(context.Background(), req(2))
			took := time.Since(start)
			if err != nil || res.Error == nil || res.Error.Code != sandbox.Timeout {
				t.Fatalf("second = %+v, %v; want a run ending with timeout", res, err)
			}
			// Counted from the arrival it ends near timeout; counted from
			// the admission it would end near 1.5×timeout.
			if took > timeout+timeout/4 {
				t.Errorf("took %v: the wait for a slot did not count against the deadline of %v", took, timeout)
			}
			if err := <-held; err != nil {
				t.Fatal(err)
			}
		})
	}
}
