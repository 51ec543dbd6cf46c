package dump

import (
	"fmt"
	"time"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/search"
	"github.com/procgraph/procgraph/usage"
)

// dumpOrder checks that a dump's records come in dump order (Type),
// each section strictly increasing in its key, so a reordered or repeated
// record is refused, and that records refer only to what came before. It
// holds the cause names and one procedure group's version hashes and edge
// causes, never the procedures.
type dumpOrder struct {
	section   int
	causes    map[string]bool
	lastCause string
	// the open procedure group
	proc     *ProcedureRecord
	sub      int
	lastKey  string
	versions map[string]bool
	edges    map[string]bool
	// recorded counts the group's recordings by version.
	recorded  map[string]int
	catalogue bool
	lastAt    time.Time
	lastID    string
	lastTurn  string
	lastPol   string
}

// The sections of a dump, and the parts of a procedure group.
const (
	secCatalogue = 1 + iota
	secCauses
	secProcedures
	secDecisions
	secApprovals
	secPolicies
)

const (
	subVersion = iota
	subVersionKey
	subProcedureKey
	subEdge
	subEdgeKey
	subRecording
)

// enter moves to section sec, or says why it cannot.
func (o *dumpOrder) enter(sec int, what Type) string {
	if sec < o.section {
		return fmt.Sprintf("a %s record after the section it belongs to (out of order)", what)
	}
	if sec > o.section {
		if msg := o.closeGroup(); msg != "" {
			return msg
		}
		if sec > secCatalogue && !o.catalogue {
			return "no catalogue record before the " + string(what) + " records"
		}
		o.section = sec
	}
	return ""
}

func (o *dumpOrder) closeGroup() string {
	if o.proc != nil && !o.versions[o.proc.Current] {
		return fmt.Sprintf("procedure %s: its current version %s is not among its versions", o.proc.Name, o.proc.Current)
	}
	o.proc = nil
	return ""
}

func (o *dumpOrder) end() string {
	if !o.catalogue {
		return "no catalogue record"
	}
	return o.closeGroup()
}

// part checks that a record of a procedure group comes in order: sub-part
// sub, key strictly after the previous one of the same sub-part.
func (o *dumpOrder) part(name string, sub int, k string) string {
	if o.proc == nil || name != o.proc.Name {
		return fmt.Sprintf("a record of procedure %q outside its procedure's group", name)
	}
	switch {
	case sub < o.sub:
		return "a record of procedure " + name + " out of order"
	case sub == o.sub && k <= o.lastKey:
		return fmt.Sprintf("a record of procedure %s repeated or out of order (key %q after %q)", name, k, o.lastKey)
	}
	o.sub, o.lastKey = sub, k
	return ""
}

func (o *dumpOrder) check(r Record) string {
	switch r.Type {
	case TypeCatalogue:
		if o.catalogue {
			return "a second catalogue record"
		}
		if msg := o.enter(secCatalogue, r.Type); msg != "" {
			return msg
		}
		o.catalogue = true
	case TypeCause:
		if msg := o.enter(secCauses, r.Type); msg != "" {
			return msg
		}
		if r.Cause.Name == "" {
			return "a cause without name"
		}
		if o.lastCause != "" && r.Cause.Name <= o.lastCause {
			return fmt.Sprintf("cause %q repeated or out of order (after %q)", r.Cause.Name, o.lastCause)
		}
		o.lastCause = r.Cause.Name
		o.causes[r.Cause.Name] = true
	case TypeProcedure:
		if msg := o.enter(secProcedures, r.Type); msg != "" {
			return msg
		}
		p := r.Procedure
		switch {
		case !procedures.IsProcName(p.Name) || len(p.Signature) == 0 || p.Current == "":
			return "a procedure without proc__ name, signature or current version"
		case p.Frequency < 0 || p.UseCount < 0:
			return "procedure " + p.Name + ": negative count"
		case !validSearchParts(p.SearchParts):
			return fmt.Sprintf("procedure %s: search_parts must be at most %d distinct non-empty texts", p.Name, search.MaxParts)
		case o.proc != nil && p.Name <= o.proc.Name:
			return fmt.Sprintf("procedure %s repeated or out of order (after %s)", p.Name, o.proc.Name)
		}
		if msg := o.closeGroup(); msg != "" {
			return msg
		}
		// a group with no version at all is refused by closeGroup.
		o.proc, o.sub, o.lastKey = p, -1, ""
		o.versions, o.edges, o.recorded = map[string]bool{}, map[string]bool{}, map[string]int{}
	case TypeVersion:
		v := r.Version
		if o.section != secProcedures {
			return "a version outside a procedure group"
		}
		if v.CodeHash == "" || !v.Status.Valid() || v.Frequency < 0 {
			return "a version without code hash, with an unknown status or a negative count"
		}
		if msg := o.part(v.Procedure, subVersion, v.CodeHash); msg != "" {
			return msg
		}
		o.versions[v.CodeHash] = true
	case TypeUsage:
		u := r.Usage
		if o.section != secProcedures {
			return "a usage key outside a procedure group"
		}
		switch u.Scope {
		case UsageVersion:
			if !o.versions[u.CodeHash] {
				return fmt.Sprintf("a usage key of version %q, not a version of %s", u.CodeHash, u.Procedure)
			}
			return o.part(u.Procedure, subVersionKey, u.CodeHash+"\x00"+u.Key)
		case UsageProcedure:
			return o.part(u.Procedure, subProcedureKey, u.Key)
		case UsageEdge:
			if !o.edges[u.Cause] {
				return fmt.Sprintf("a usage key of cause %q, not an edge of %s", u.Cause, u.Procedure)
			}
			return o.part(u.Procedure, subEdgeKey, u.Cause+"\x00"+u.Key)
		default:
			return fmt.Sprintf("usage key scope %q unknown", u.Scope)
		}
	case TypeEdge:
		e := r.Edge
		if o.section != secProcedures {
			return "an edge outside a procedure group"
		}
		if !o.causes[e.Cause] || e.Frequency < 0 {
			return fmt.Sprintf("an edge to cause %q, which the dump does not hold, or a negative count", e.Cause)
		}
		if msg := o.part(e.Procedure, subEdge, e.Cause); msg != "" {
			return msg
		}
		o.edges[e.Cause] = true
	case TypeRecording:
		rec := r.Recording
		if o.section != secProcedures {
			return "a recording outside a procedure group"
		}
		if !o.versions[rec.CodeHash] {
			return fmt.Sprintf("a recording of version %q, not a version of %s", rec.CodeHash, rec.Procedure)
		}
		if o.recorded[rec.CodeHash]++; o.recorded[rec.CodeHash] > recording.MaxRecordingsPerVersion {
			return fmt.Sprintf("version %s of %s: more than %d recordings (no store keeps more)", rec.CodeHash, rec.Procedure, recording.MaxRecordingsPerVersion)
		}
		return o.part(rec.Procedure, subRecording, rec.CodeHash+"\x00"+rec.ID)
	case TypeDecision:
		if msg := o.enter(secDecisions, r.Type); msg != "" {
			return msg
		}
		d := r.Decision
		if d.ID == "" || !d.Kind.Valid() || d.At.IsZero() {
			return "a decision without id, with an unknown kind or without time"
		}
		if o.lastID != "" && (d.At.Before(o.lastAt) || d.At.Equal(o.lastAt) && d.ID <= o.lastID) {
			return fmt.Sprintf("decision %s repeated or out of order (after %s)", d.ID, o.lastID)
		}
		o.lastAt, o.lastID = d.At, d.ID
	case TypeApproval:
		if msg := o.enter(secApprovals, r.Type); msg != "" {
			return msg
		}
		a := r.Approval
		if err := gate.CheckApproval(*a); err != nil {
			return fmt.Sprintf("approval %s: %v", a.ID, err)
		}
		if o.lastTurn != "" && a.ID <= o.lastTurn {
			return fmt.Sprintf("approval %s repeated or out of order (after %s)", a.ID, o.lastTurn)
		}
		o.lastTurn = a.ID
	case TypePolicy:
		if msg := o.enter(secPolicies, r.Type); msg != "" {
			return msg
		}
		p := r.Policy
		if p.SessionID == "" || p.CodeHash == "" {
			return "a session policy without session or code hash"
		}
		if err := usage.CheckSessionID(p.SessionID); err != nil {
			return fmt.Sprintf("session policy %s: %v", p.CodeHash, err)
		}
		k := p.SessionID + "\x00" + p.CodeHash
		if o.lastPol != "" && k <= o.lastPol {
			return fmt.Sprintf("session policy %s/%s repeated or out of order", p.SessionID, p.CodeHash)
		}
		o.lastPol = k
	}
	return ""
}

// validSearchParts reports whether parts could be a store's search parts:
// at most search.MaxParts, distinct, none empty.
func validSearchParts(parts []string) bool {
	if len(parts) > search.MaxParts {
		return false
	}
	seen := make(map[string]bool, len(parts))
	for _, p := range parts {
		if p == "" || seen[p] {
			return false
		}
		seen[p] = true
	}
	return true
}
