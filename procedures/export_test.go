package procedures

import (
	"context"

	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/signature"
)

// ExposedMarker exposes WatchRemote's marker to the benchmarks.
func ExposedMarker(ctx context.Context, s *Service) (string, error) { return s.exposedMarker(ctx) }

// What the external tests name of the package's unexported identifiers.
const (
	InactiveUnhealthy = inactiveUnhealthy
	RefreshActor      = refreshActor
	ReasonNotDemoted  = reasonNotDemoted
)

// RefreshTools exposes refreshTools to the external tests.
func RefreshTools(stored *Catalogue, server string, listed []Tool) ([]Tool, Refreshed) {
	return refreshTools(stored, server, listed)
}

// NoneExposedWith exposes noneExposedWith to the external tests.
func NoneExposedWith(signature []string, cat *Catalogue, allowMutating bool) bool {
	return noneExposedWith(signature, cat, allowMutating)
}

// RecordRun exposes countRun to the external tests.
func (s *Service) RecordRun(ctx context.Context, name, codeHash, usageKey, cause string, run *health.Run) error {
	return s.countRun(ctx, name, codeHash, usageKey, cause, run)
}

// FlowAnalyses is the number of times s's flow cache analysed code (its
// misses).
func FlowAnalyses(s *Service) int64 { return s.flows.analyses.Load() }

// FlowsOf is the keyword flows s's flow cache gives of p's current code.
func FlowsOf(s *Service, p *Procedure) []signature.Flow { return s.flows.flows(p) }

// CaptureParses is the number of times s's captures parsed their code
// (captureAnalyses).
func CaptureParses(s *Service) int64 { return s.analyses.parses.Load() }
