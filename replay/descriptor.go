package replay

import (
	"context"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/schemas"
)

// ToolDescriptor is one exposed procedure as a planner sees it (docs/api.md's
// planner view, GET /v1/procedures/tools).
type ToolDescriptor struct {
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	InputSchema    map[string]any `json:"input_schema"`
	ReadOnly       bool           `json:"read_only"`
	ExternalAccess bool           `json:"external_access"`
	// AutoRun is whether a durable auto-run grant is active now.
	AutoRun   bool     `json:"auto_run"`
	Frequency int64    `json:"frequency"`
	Signature []string `json:"signature"`
	// Stale: the catalogue changed a tool since the procedure last worked
	// (procedures.Procedure.Stale); the description then says what.
	Stale bool `json:"stale"`
	// SuccessRate and Runs are the current version's record (its Health;
	// the success rate null before the first run); the description states
	// it too (health.Health.Note).
	SuccessRate *float64 `json:"success_rate"`
	Runs        int64    `json:"runs"`
	// Score is the relevance of a search's match, absent outside a search.
	Score *float64 `json:"score,omitempty"`
}

// Descriptor returns p's tool descriptor. p must be classified (as the
// Service returns it): ReadOnly, ExternalAccess, AutoRun.Active and
// Description are taken from it.
func Descriptor(p *procedures.Procedure) ToolDescriptor {
	schema := p.InputSchema
	if schema == nil {
		schema, _ = schemas.InputSchema(p.Parameters, nil)
	}
	description := p.Description
	if description == "" {
		description = procedures.Describe(p)
	}
	if p.Stale {
		description += " " + procedures.StaleNote(p.Drift)
	}
	if note := p.Health.Note(); note != "" {
		description += " " + note
	}
	sig := p.Signature
	if sig == nil {
		sig = []string{}
	}
	return ToolDescriptor{
		Name: p.Name, Description: description, InputSchema: schema, ReadOnly: p.ReadOnly,
		ExternalAccess: p.ExternalAccess, AutoRun: p.AutoRun.Active, Frequency: p.Frequency, Signature: sig, Stale: p.Stale, Score: p.Score,
		SuccessRate: p.Health.SuccessRate(), Runs: p.Health.Runs,
	}
}

// Tools returns the descriptors of the exposed procedures, in find order
// (frequency desc, last_used_at desc, name asc), optionally only those
// linked to any of causes. limit 0 means fields.DefaultFindLimit;
// a limit out of range is CodeInvalid.
func (r *Replayer) Tools(ctx context.Context, causes []string, limit int) ([]ToolDescriptor, error) {
	return r.ToolsMatching(ctx, "", causes, limit)
}

// ToolsMatching is Tools with a relevance search q ("" for none): only the
// matching procedures, by relevance (search.RankHits), each with its
// score. A bad q is CodeInvalid (search.Terms).
func (r *Replayer) ToolsMatching(ctx context.Context, q string, causes []string, limit int) ([]ToolDescriptor, error) {
	page, err := r.svc.ExposedMatching(ctx, q, causes, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ToolDescriptor, 0, len(page))
	for _, p := range page {
		out = append(out, Descriptor(p))
	}
	return out, nil
}
