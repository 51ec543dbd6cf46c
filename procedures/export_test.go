package procedures

import "context"

// ExposedMarker exposes WatchRemote's marker to the benchmarks.
func ExposedMarker(ctx context.Context, s *Service) (string, error) { return s.exposedMarker(ctx) }
