package dump

import (
	"fmt"
	"slices"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// checkContent is what a dump record must hold beyond its order (docs/design.md
// "A dump is data, not authority"): nothing a dump says about code is
// taken on trust. A version's code, analysed again in its dialect, must
// give the version's code hash, its procedure's signature and its opaque
// flag, and its baseline (when it carries one) must be one BaselineOf
// could make for that signature; a recording must be one NewRecording
// could make (recording.RecordingFromBody: id, content hash, bounds); a
// turn that still holds code must give its code hash, signature
// and opaque flag; every audit record (a decision, a turn's denial) must pass
// the recorder's rule (CheckAudit: bounded note, shapes, no token). It
// returns what differs, "" when the record holds.
func checkContent(r Record) string {
	switch r.Type {
	case TypeVersion:
		v := r.Version
		what := fmt.Sprintf("version %s of %s", v.CodeHash, v.Procedure)
		a, msg := analyseDumped(what, v.Code, v.Dialect, v.CodeHash)
		switch {
		case msg != "":
			return msg
		case !slices.Equal(a.Signature, r.Group.Signature):
			return fmt.Sprintf("%s: its code calls %v, not its procedure's signature %v", what, a.Signature, r.Group.Signature)
		case a.Opaque != v.Opaque:
			return fmt.Sprintf("%s: its code is opaque %v, the record says %v", what, a.Opaque, v.Opaque)
		}
		if v.Baseline != nil {
			if why := v.Baseline.Check(r.Group.Signature); why != "" {
				return fmt.Sprintf("%s: invalid baseline: %s", what, why)
			}
		}
	case TypeRecording:
		if _, err := r.Recording.Recording(); err != nil {
			return fmt.Sprintf("version %s of %s: %s", r.Recording.CodeHash, r.Recording.Procedure, fault.ErrorMessage(err))
		}
	case TypeApproval:
		t := r.Approval
		if t.Code != "" {
			what := "approval " + t.ID
			a, msg := analyseDumped(what, t.Code, t.Dialect, t.CodeHash)
			switch {
			case msg != "":
				return msg
			case !slices.Equal(a.Signature, t.Signature):
				return fmt.Sprintf("%s: its code calls %v, not its signature %v", what, a.Signature, t.Signature)
			case a.Opaque != t.Opaque:
				return fmt.Sprintf("%s: its code is opaque %v, the record says %v", what, a.Opaque, t.Opaque)
			}
		}
		if t.Denial != nil {
			if err := procedures.CheckAudit(*t.Denial); err != nil {
				return fmt.Sprintf("approval %s: its denial record: %s", t.ID, fault.ErrorMessage(err))
			}
		}
	case TypeDecision:
		if err := procedures.CheckAudit(*r.Decision); err != nil {
			return fmt.Sprintf("decision %s: %s", r.Decision.ID, fault.ErrorMessage(err))
		}
	}
	return ""
}

// analyseDumped analyses dumped code (of what) and checks that it gives
// hash; the analysis, or what is wrong.
func analyseDumped(what, code, dialect, hash string) (*signature.Analysis, string) {
	dl, err := signature.ParseDialect(dialect)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", what, err)
	}
	a, err := signature.Analyze(code, dl)
	if err != nil {
		return nil, fmt.Sprintf("%s: its code does not analyse: %v", what, err)
	}
	if a.CodeHash != hash {
		return nil, fmt.Sprintf("%s: its code gives code_hash %s", what, a.CodeHash)
	}
	return a, ""
}
