package gate

import (
	"context"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// Service is what the turn gate asks of the domain (*procedures.Service):
// one interface for what it reads to decide a turn, one for what it
// records.
type Service interface {
	DecideService
	RecordService
}

// DecideService is what the gate reads to decide a turn: the block's
// classification and program key, the stored procedure and its bindings
// now, what a grant or policy would reach, reuse advice, the clock.
type DecideService interface {
	ClassifyBlock(ctx context.Context, a *signature.Analysis) (*procedures.Classified, error)
	ProgramKey(code, dialect string, cat *procedures.Catalogue, readOnly bool, args map[string]any) string
	LiftedProgramOf(code, dialect string, cat *procedures.Catalogue) procedures.LiftedProgram
	InlinedProgramOf(code, dialect string, cat *procedures.Catalogue) procedures.LiftedProgram
	GrantedProgramOf(ctx context.Context, sig []string, cat *procedures.Catalogue) (*procedures.GrantedProgram, error)
	BindingsNow(ctx context.Context, bs []*procedures.Binding) ([]*procedures.Binding, error)
	Reach(ctx context.Context, b *procedures.Binding) ([]procedures.Reached, error)
	Grantable(p *procedures.Procedure) string
	Suggest(ctx context.Context, signature []string, except string) (*procedures.Suggestion, error)
	Now() time.Time
}

// RecordService is what the gate records through the domain: a turn's
// capture and grant, its run, its decisions, and the change feed.
type RecordService interface {
	Capture(ctx context.Context, req procedures.CaptureRequest) (procedures.CaptureOutcome, error)
	SetAutoRun(ctx context.Context, r procedures.AutoRunRequest) (*procedures.Procedure, audit.Decision, error)
	BlockUse(name, codeHash, usageKey string, run health.Run, k procedures.Kept) (procedures.UseInput, bool)
	Recorder() *procedures.Recorder
	Changes() *changes.Feed
}

var _ Service = (*procedures.Service)(nil)
