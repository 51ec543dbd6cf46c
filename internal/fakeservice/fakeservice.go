// Package fakeservice is an in-memory stand-in for what the transports
// call below them: the service (Service), the replayer (Replayer) and the
// turn gate (Gate). It is for the tests of what a transport itself does
// (status codes, bodies, bounds, scopes and auth headers, JSON errors)
// without a store, a sandbox or Main: it keeps no rule of the domain, only
// answers what the test put in it, records the name of every call, and
// fails every call with Err when Err is set. The transports name the
// interfaces they need (api.Service, api.Replayer, api.TurnGate) and their
// tests check at compile time that these types implement them. ADR 0027.
package fakeservice

import (
	"context"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
)

// calls is the record of the calls a fake received and the error it
// answers them with.
type calls struct {
	mu    sync.Mutex
	names []string
	// Err, when set, is what every call answers.
	Err error
}

// record notes a call of name and returns Err.
func (c *calls) record(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, name)
	return c.Err
}

// Calls returns the names of the methods called so far, in order.
func (c *calls) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.names)
}

// Service is the fake service. Its zero value is not ready: use New.
type Service struct {
	calls
	// Tools is the catalogue (Catalogue; PutCatalogue replaces it).
	Tools []procedures.Tool
	// Procedures are the procedures Get, Find and the calls on one
	// procedure answer, by name; a name not here is not_found.
	Procedures map[string]*procedures.Procedure
	// Captured is what Capture answers; nil: Capture answers invalid.
	Captured *procedures.CaptureOutcome
	// DecisionList is what Decisions answers.
	DecisionList []audit.Decision

	feed *changes.Feed
}

// New returns a fake service with no procedures, an empty catalogue and
// a change feed of its own.
func New() *Service {
	return &Service{Procedures: map[string]*procedures.Procedure{}, feed: changes.NewFeed()}
}

// Ping answers Err.
func (s *Service) Ping(ctx context.Context) error { return s.record("Ping") }

// Catalogue answers the catalogue of Tools.
func (s *Service) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	if err := s.record("Catalogue"); err != nil {
		return nil, err
	}
	return procedures.NewCatalogue(s.Tools)
}

// PutCatalogue replaces Tools by tools (when they make a catalogue).
func (s *Service) PutCatalogue(ctx context.Context, tools []procedures.Tool, actor string) (*procedures.Catalogue, error) {
	if err := s.record("PutCatalogue"); err != nil {
		return nil, err
	}
	cat, err := procedures.NewCatalogue(tools)
	if err != nil {
		return nil, err
	}
	s.Tools = tools
	return cat, nil
}

// Capture answers Captured.
func (s *Service) Capture(ctx context.Context, req procedures.CaptureRequest) (procedures.CaptureOutcome, error) {
	if err := s.record("Capture"); err != nil {
		return procedures.CaptureOutcome{}, err
	}
	if s.Captured == nil {
		return procedures.CaptureOutcome{}, fault.Errorf(fault.CodeInvalid, "fakeservice: no capture outcome set")
	}
	return *s.Captured, nil
}

// Find answers every procedure, by name, and their number.
func (s *Service) Find(ctx context.Context, r procedures.FindRequest) ([]*procedures.Procedure, int, error) {
	if err := s.record("Find"); err != nil {
		return nil, 0, err
	}
	out := make([]*procedures.Procedure, 0, len(s.Procedures))
	for _, p := range s.Procedures {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, len(out), nil
}

// procedure is the procedure name, or not_found.
func (s *Service) procedure(name string) (*procedures.Procedure, error) {
	if p, ok := s.Procedures[name]; ok {
		return p, nil
	}
	return nil, fault.Errorf(fault.CodeNotFound, "procedure %q not found", name)
}

// Get answers the procedure name.
func (s *Service) Get(ctx context.Context, name string) (*procedures.Procedure, error) {
	if err := s.record("Get"); err != nil {
		return nil, err
	}
	return s.procedure(name)
}

// Versions answers none for a known procedure.
func (s *Service) Versions(ctx context.Context, name string) ([]procedures.Version, error) {
	if err := s.record("Versions"); err != nil {
		return nil, err
	}
	if _, err := s.procedure(name); err != nil {
		return nil, err
	}
	return []procedures.Version{}, nil
}

// Version answers not_found.
func (s *Service) Version(ctx context.Context, name, codeHash string) (*procedures.Version, error) {
	if err := s.record("Version"); err != nil {
		return nil, err
	}
	return nil, fault.Errorf(fault.CodeNotFound, "version %s of %q not found", codeHash, name)
}

// VersionView answers not_found.
func (s *Service) VersionView(ctx context.Context, name, codeHash string) (*procedures.Version, error) {
	return s.Version(ctx, name, codeHash)
}

// Drifted answers no stale version.
func (s *Service) Drifted(ctx context.Context, limit, offset int) (*procedures.DriftPage, error) {
	if err := s.record("Drifted"); err != nil {
		return nil, err
	}
	return &procedures.DriftPage{Versions: []procedures.DriftEntry{}}, nil
}

// AcceptDrift answers the procedure and no decision.
func (s *Service) AcceptDrift(ctx context.Context, r procedures.AcceptDriftRequest) (*procedures.Procedure, audit.Decision, error) {
	return s.change("AcceptDrift", r.Name)
}

// Promote answers the procedure and no decision.
func (s *Service) Promote(ctx context.Context, r procedures.PromoteRequest) (*procedures.Procedure, audit.Decision, error) {
	return s.change("Promote", r.Name)
}

// SetAutoRun answers the procedure and no decision.
func (s *Service) SetAutoRun(ctx context.Context, r procedures.AutoRunRequest) (*procedures.Procedure, audit.Decision, error) {
	return s.change("SetAutoRun", r.Name)
}

// LiftDemotion answers the procedure and no decision.
func (s *Service) LiftDemotion(ctx context.Context, r procedures.LiftDemotionRequest) (*procedures.Procedure, audit.Decision, error) {
	return s.change("LiftDemotion", r.Name)
}

// SetRetired answers the procedure and no decision.
func (s *Service) SetRetired(ctx context.Context, r procedures.RetireRequest) (*procedures.Procedure, audit.Decision, error) {
	return s.change("SetRetired", r.Name)
}

// change is a call that changes the procedure name: it changes nothing.
func (s *Service) change(call, name string) (*procedures.Procedure, audit.Decision, error) {
	if err := s.record(call); err != nil {
		return nil, audit.Decision{}, err
	}
	p, err := s.procedure(name)
	return p, audit.Decision{}, err
}

// GrantsList answers none.
func (s *Service) GrantsList(ctx context.Context) ([]*procedures.Procedure, error) {
	return []*procedures.Procedure{}, s.record("GrantsList")
}

// Causes answers none.
func (s *Service) Causes(ctx context.Context) ([]procedures.Cause, error) {
	return []procedures.Cause{}, s.record("Causes")
}

// Cause answers not_found.
func (s *Service) Cause(ctx context.Context, name string) (*procedures.Cause, []procedures.CauseProcedure, error) {
	if err := s.record("Cause"); err != nil {
		return nil, nil, err
	}
	return nil, nil, fault.Errorf(fault.CodeNotFound, "cause %q not found", name)
}

// Graph answers an empty graph.
func (s *Service) Graph(ctx context.Context, q graphview.GraphQuery) (*graphview.Graph, error) {
	if err := s.record("Graph"); err != nil {
		return nil, err
	}
	return &graphview.Graph{Nodes: []graphview.GraphNode{}, Edges: []graphview.GraphEdge{}}, nil
}

// Decisions answers DecisionList.
func (s *Service) Decisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error) {
	if err := s.record("Decisions"); err != nil {
		return nil, err
	}
	return slices.Clone(s.DecisionList), nil
}

// Changes is the fake's change feed (not a call: it is not recorded).
func (s *Service) Changes() *changes.Feed { return s.feed }

// Backup writes nothing.
func (s *Service) Backup(ctx context.Context, w io.Writer) (int64, error) {
	return 0, s.record("Backup")
}

// Replayer is the fake replayer. The zero value is ready to use.
type Replayer struct {
	calls
	// Result is what Invoke answers; nil: Invoke answers not_found.
	Result *replay.InvokeResult
	// Descriptors is what ToolsMatching answers.
	Descriptors []replay.ToolDescriptor
}

// Invoke answers Result.
func (r *Replayer) Invoke(ctx context.Context, req replay.InvokeRequest) (*replay.InvokeResult, error) {
	if err := r.record("Invoke"); err != nil {
		return nil, err
	}
	if r.Result == nil {
		return nil, fault.Errorf(fault.CodeNotFound, "procedure %q not found", req.Name)
	}
	return r.Result, nil
}

// ToolsMatching answers Descriptors.
func (r *Replayer) ToolsMatching(ctx context.Context, q string, causes []string, limit int) ([]replay.ToolDescriptor, error) {
	if err := r.record("ToolsMatching"); err != nil {
		return nil, err
	}
	return slices.Clone(r.Descriptors), nil
}

// Gate is the fake turn gate: it knows no turn (not_found) and submits
// none (unavailable). The zero value is ready to use.
type Gate struct{ calls }

// noTurn is the answer about a turn or approval id.
func noTurn(id string) error { return fault.Errorf(fault.CodeNotFound, "turn %q not found", id) }

// Submit answers unavailable.
func (g *Gate) Submit(ctx context.Context, req gate.TurnRequest) (*gate.TurnAnswer, error) {
	if err := g.record("Submit"); err != nil {
		return nil, err
	}
	return nil, fault.Errorf(fault.CodeUnavailable, "fakeservice: the fake gate runs no turn")
}

// Get answers not_found.
func (g *Gate) Get(ctx context.Context, id, actor string, wait time.Duration) (*gate.Turn, error) {
	if err := g.record("Get"); err != nil {
		return nil, err
	}
	return nil, noTurn(id)
}

// Run answers not_found.
func (g *Gate) Run(ctx context.Context, id, actor string) (*gate.TurnAnswer, error) {
	if err := g.record("Run"); err != nil {
		return nil, err
	}
	return nil, noTurn(id)
}

// Cancel answers not_found.
func (g *Gate) Cancel(ctx context.Context, id, actor string) (*gate.Turn, error) {
	if err := g.record("Cancel"); err != nil {
		return nil, err
	}
	return nil, noTurn(id)
}

// Approvals answers none.
func (g *Gate) Approvals(ctx context.Context, f gate.ApprovalFilter, showArgs bool) ([]*gate.Approval, error) {
	return []*gate.Approval{}, g.record("Approvals")
}

// Approval answers not_found.
func (g *Gate) Approval(ctx context.Context, id string, showArgs bool) (*gate.Approval, error) {
	if err := g.record("Approval"); err != nil {
		return nil, err
	}
	return nil, noTurn(id)
}

// Resolve answers not_found.
func (g *Gate) Resolve(ctx context.Context, req gate.ResolveRequest) (*gate.Turn, audit.Decision, error) {
	if err := g.record("Resolve"); err != nil {
		return nil, audit.Decision{}, err
	}
	return nil, audit.Decision{}, noTurn(req.ID)
}

// SessionPolicies answers none.
func (g *Gate) SessionPolicies(ctx context.Context, sessionID string) ([]gate.PolicyState, error) {
	return []gate.PolicyState{}, g.record("SessionPolicies")
}

// RevokePolicies revokes none.
func (g *Gate) RevokePolicies(ctx context.Context, sessionID, prefix, actor string) (int, []audit.Decision, error) {
	return 0, nil, g.record("RevokePolicies")
}

// Recordings answers none for a procedure the fake holds.
func (s *Service) Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error) {
	if err := s.record("Recordings"); err != nil {
		return nil, 0, err
	}
	if _, err := s.procedure(name); err != nil {
		return nil, 0, err
	}
	return []recording.Recording{}, 0, nil
}

// PurgeRecordings deletes nothing.
func (s *Service) PurgeRecordings(ctx context.Context, name, actor, reason string) (audit.Decision, int, error) {
	_, d, err := s.change("PurgeRecordings", name)
	return d, 0, err
}

// Verify answers a verification with no recording.
func (r *Replayer) Verify(ctx context.Context, name, codeHash, actor string) (*replay.VerifyAnswer, error) {
	if err := r.record("Verify"); err != nil {
		return nil, err
	}
	return &replay.VerifyAnswer{Procedure: name, CodeHash: codeHash, Verification: replay.Verification{Status: "none"}, Results: []replay.VerifyResult{}}, nil
}
