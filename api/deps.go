package api

import (
	"context"
	"io"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/tokens"
)

// Service is what the HTTP API asks of the domain: the methods of
// *procedures.Service its handlers call, and nothing else, one interface
// per area, so a test can serve the routes over a fake
// (internal/fakeservice) and check what the transport does (status
// codes, bodies, bounds, scopes, JSON errors) without a store. ADR 0027.
type Service interface {
	ProcedureService
	CatalogueService
	GrantService
	AuditService

	Ping(ctx context.Context) error
	Backup(ctx context.Context, w io.Writer) (int64, error)
}

// ProcedureService is what the HTTP API asks of procedures, their versions
// and causes: capture, find, read, promote, retire, the graph.
type ProcedureService interface {
	Capture(ctx context.Context, req procedures.CaptureRequest) (procedures.CaptureOutcome, error)
	Find(ctx context.Context, r procedures.FindRequest) ([]*procedures.Procedure, int, error)
	Get(ctx context.Context, name string) (*procedures.Procedure, error)
	Versions(ctx context.Context, name string) ([]procedures.Version, error)
	Version(ctx context.Context, name, codeHash string) (*procedures.Version, error)
	VersionView(ctx context.Context, name, codeHash string) (*procedures.Version, error)
	Promote(ctx context.Context, r procedures.PromoteRequest) (*procedures.Procedure, audit.Decision, error)
	SetRetired(ctx context.Context, r procedures.RetireRequest) (*procedures.Procedure, audit.Decision, error)
	Causes(ctx context.Context) ([]procedures.Cause, error)
	Cause(ctx context.Context, name string) (*procedures.Cause, []procedures.CauseProcedure, error)
	Graph(ctx context.Context, q graphview.GraphQuery) (*graphview.Graph, error)
}

// CatalogueService is what the HTTP API asks of the tool catalogue and
// the drift a change of it leaves.
type CatalogueService interface {
	Catalogue(ctx context.Context) (*procedures.Catalogue, error)
	PutCatalogue(ctx context.Context, tools []procedures.Tool, actor string) (*procedures.Catalogue, error)
	Drifted(ctx context.Context, limit, offset int) (*procedures.DriftPage, error)
	AcceptDrift(ctx context.Context, r procedures.AcceptDriftRequest) (*procedures.Procedure, audit.Decision, error)
}

// GrantService is what the HTTP API asks of grants and demotions.
type GrantService interface {
	SetAutoRun(ctx context.Context, r procedures.AutoRunRequest) (*procedures.Procedure, audit.Decision, error)
	GrantsList(ctx context.Context) ([]*procedures.Procedure, error)
	LiftDemotion(ctx context.Context, r procedures.LiftDemotionRequest) (*procedures.Procedure, audit.Decision, error)
}

// AuditService is what the HTTP API asks of the audit log, the change
// feed and the recordings.
type AuditService interface {
	Decisions(ctx context.Context, f audit.DecisionFilter) ([]audit.Decision, error)
	Changes() *changes.Feed
	Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error)
	PurgeRecordings(ctx context.Context, name, actor, reason string) (audit.Decision, int, error)
}

// Replayer is what the HTTP API asks of replays (*replay.Replayer).
type Replayer interface {
	Invoke(ctx context.Context, req replay.InvokeRequest) (*replay.InvokeResult, error)
	ToolsMatching(ctx context.Context, q string, causes []string, limit int) ([]replay.ToolDescriptor, error)
	Verify(ctx context.Context, name, codeHash, actor string) (*replay.VerifyAnswer, error)
}

// TurnGate is what the HTTP API asks of the turn gate (*gate.Gate).
type TurnGate interface {
	Submit(ctx context.Context, req gate.TurnRequest) (*gate.TurnAnswer, error)
	Get(ctx context.Context, id, actor string, wait time.Duration) (*gate.Turn, error)
	Run(ctx context.Context, id, actor string) (*gate.TurnAnswer, error)
	Cancel(ctx context.Context, id, actor string) (*gate.Turn, error)
	Approvals(ctx context.Context, f gate.ApprovalFilter, showArgs bool) ([]*gate.Approval, error)
	Approval(ctx context.Context, id string, showArgs bool) (*gate.Approval, error)
	Resolve(ctx context.Context, req gate.ResolveRequest) (*gate.Turn, audit.Decision, error)
	SessionPolicies(ctx context.Context, sessionID string) ([]gate.PolicyState, error)
	RevokePolicies(ctx context.Context, sessionID, prefix, actor string) (int, []audit.Decision, error)
}

// TokenAdmin is what the HTTP API asks of the store's tokens
// (*tokens.Manager).
type TokenAdmin interface {
	Create(ctx context.Context, r tokens.CreateRequest) (tokens.Created, error)
	List(ctx context.Context) ([]auth.TokenRecord, error)
	Rotate(ctx context.Context, holder string, expiresAt time.Time, actor string) (tokens.Created, error)
	Revoke(ctx context.Context, holder, actor string) (auth.TokenRecord, error)
}

// The production types implement the interfaces (checked at compile time).
var (
	_ Service    = (*procedures.Service)(nil)
	_ Replayer   = (*replay.Replayer)(nil)
	_ TurnGate   = (*gate.Gate)(nil)
	_ TokenAdmin = (*tokens.Manager)(nil)
)
