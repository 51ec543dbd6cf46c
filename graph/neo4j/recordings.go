package neo4j

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
)

// recordingParams is in's recording as fragments/recording_put.cypher
// reads it (nil without one).
func recordingParams(in procedures.UseInput) (any, error) {
	r := in.Recording
	if r == nil {
		return nil, nil
	}
	body, err := recording.EncodeRecordingBody(r)
	if err != nil {
		return nil, invalid("recording", "%v", err)
	}
	return map[string]any{"id": r.ID, "recorded_at": dbTime(r.RecordedAt), "content_hash": r.ContentHash,
		"bytes": int64(r.Bytes), "body": string(body), "keep": int64(in.KeepRecordings)}, nil
}

// Recordings returns a page of the procedure's recordings (see
// procedures.Store).
func (s *Store) Recordings(ctx context.Context, name, codeHash string, limit, offset int) ([]recording.Recording, int, error) {
	if limit < 0 || offset < 0 {
		return nil, 0, invalid("limit", "limit and offset must not be negative")
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	recs, err := query(ctx, s, "recordings", neo4j.AccessModeRead, "recordings",
		map[string]any{"name": name, "hash": nilIfEmpty(codeHash), "limit": lim, "offset": offset})
	if err != nil {
		return nil, 0, err
	}
	if len(recs) == 0 || field(recs[0], "exists") != true {
		return nil, 0, notFound(name)
	}
	total, _ := field(recs[0], "total").(int64)
	out := []recording.Recording{}
	for _, v := range asList(field(recs[0], "recordings")) {
		rw := &row{m: asMap(v)}
		r := recording.Recording{ID: rw.str("id"), Procedure: name, CodeHash: rw.str("code_hash"), RecordedAt: rw.time("recorded_at")}
		body := rw.str("body")
		if rw.err != nil {
			return nil, 0, s.mapError("recordings", rw.err)
		}
		if err := recording.DecodeRecordingBody([]byte(body), &r); err != nil {
			return nil, 0, fault.Errorf(fault.CodeInternal, "neo4j store: recording %s of %s: %v", r.ID, name, err)
		}
		out = append(out, r)
	}
	return out, int(total), nil
}

// DeleteRecordings deletes recordings (see procedures.Store).
func (s *Store) DeleteRecordings(ctx context.Context, name string, d *audit.Decision) (int, error) {
	var dp map[string]any
	if d != nil {
		var err error
		if dp, err = decisionParams(*d); err != nil {
			return 0, err
		}
	}
	return writeTx(ctx, s, "delete recordings", func(ctx context.Context, tx neo4j.ManagedTransaction) (int, error) {
		recs, err := collect(ctx, tx, "recordings_delete", map[string]any{"name": nilIfEmpty(name)})
		if err != nil {
			return 0, err
		}
		if len(recs) == 0 || field(recs[0], "exists") != true {
			return 0, notFound(name)
		}
		n, _ := field(recs[0], "deleted").(int64)
		if dp != nil {
			if err := appendDecision(ctx, tx, dp); err != nil {
				return 0, err
			}
		}
		return int(n), nil
	})
}

// SetVerification keeps a version's last verification (see
// procedures.Store).
func (s *Store) SetVerification(ctx context.Context, name, codeHash string, v recording.Verification) error {
	if why := v.Check(); why != "" {
		return invalid("verification", "%s", why)
	}
	v.At = v.At.UTC().Truncate(time.Millisecond)
	b, err := json.Marshal(v)
	if err != nil {
		return invalid("verification", "%v", err)
	}
	recs, err := query(ctx, s, "set verification", neo4j.AccessModeWrite, "version_verification",
		map[string]any{"name": name, "hash": codeHash, "verification": string(b)})
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return fault.Errorf(fault.CodeNotFound, "procedure %q has no version %q", name, codeHash)
	}
	return nil
}
