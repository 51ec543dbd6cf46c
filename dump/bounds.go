package dump

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// checkBounds checks every field r carries against the bound of the same
// field in internal/fields (docs/dumps.md "Bounds"): what the API would
// not take (a 60 MiB summary, a session id with a control character) a
// dump does not bring in either. A string is checked by its field's
// Field.CheckString, a list by its MaxItems, an object (metadata,
// arguments, a schema) by fields.MaxBodyBytes of JSON, code by
// signature.MaxCodeBytes. It runs before anything else reads the record
// (the order check keeps names), and returns the first field past its
// bound as fault.CodeInvalid naming it by its dotted path
// ("procedure.summary", "approval.binding.signature.3"), never its value.
func checkBounds(r Record) error {
	b := &bounder{}
	switch r.Type {
	case TypeCatalogue:
		b.catalogue(r.Catalogue)
	case TypeCause:
		b.str("cause.name", fields.CauseName, r.Cause.Name)
		b.str("cause.description", fields.CauseDesc, r.Cause.Description)
	case TypeProcedure:
		b.procedure(r.Procedure)
	case TypeVersion:
		b.version(r.Version)
	case TypeRecording:
		rec := r.Recording
		b.str("recording.procedure", fields.ProcName, rec.Procedure)
		b.str("recording.code_hash", fields.CodeHash, rec.CodeHash)
		b.str("recording.id", fields.CodeHash, rec.ID)
		b.str("recording.content_hash", fields.CodeHash, rec.ContentHash)
		// The body: recording.RecordingFromBody (checkContent) bounds it.
	case TypeUsage:
		u := r.Usage
		b.str("usage.scope", fields.Name, u.Scope)
		b.str("usage.procedure", fields.ProcName, u.Procedure)
		b.str("usage.code_hash", fields.CodeHash, u.CodeHash)
		b.str("usage.cause", fields.InvokeCause, u.Cause)
		b.str("usage.key", fields.UsageKey, u.Key)
	case TypeEdge:
		b.str("edge.cause", fields.CauseName, r.Edge.Cause)
		b.str("edge.procedure", fields.ProcName, r.Edge.Procedure)
	case TypeDecision:
		b.decision("decision", r.Decision)
	case TypeApproval:
		b.approval(r.Approval)
	case TypePolicy:
		p := r.Policy
		b.str("policy.session_id", fields.SessionID, p.SessionID)
		b.str("policy.code_hash", fields.CodeHash, p.CodeHash)
		b.enum("policy.policy", fields.Choice, string(p.Policy))
		b.str("policy.summary", fields.TurnSummary, p.Summary)
		b.str("policy.set_by", fields.Actor, p.SetBy)
		b.str("policy.requested_by", fields.Actor, p.RequestedBy)
		b.binding("policy.binding", p.Binding)
	}
	return b.err
}

// checkHeaderBounds is checkBounds of a dump's header.
func checkHeaderBounds(h *HeaderRecord) error {
	b := &bounder{}
	b.str("header.source", fields.Label, h.Source)
	b.str("header.procgraph_version", fields.Label, h.ProcgraphVersion)
	return b.err
}

// bounder keeps the first field past its bound.
type bounder struct {
	err error
}

func (b *bounder) fail(path, format string, args ...any) {
	if b.err == nil {
		b.err = fault.Errorf(fault.CodeInvalid, "%s "+format, append([]any{path}, args...)...).WithDetails("field", path)
	}
}

// str checks s against f's string rule, named path.
func (b *bounder) str(path string, f fields.Field, s string) {
	if b.err == nil {
		b.err = f.Named(path).CheckString(s)
	}
}

// enum checks s against f's values ("" allowed: a field the record
// leaves out).
func (b *bounder) enum(path string, f fields.Field, s string) {
	if b.err == nil && s != "" && !slices.Contains(f.Enum, s) {
		b.fail(path, "is not one of %v", f.Enum)
	}
}

// names checks a list of names against fields.Names.
func (b *bounder) names(path string, vs []string) {
	b.list(path, fields.Names, vs)
}

// list checks vs against f, an array of strings: its length, each item.
func (b *bounder) list(path string, f fields.Field, vs []string) {
	if b.err != nil {
		return
	}
	if len(vs) > f.MaxItems {
		b.fail(path, "has %d items, at most %d are allowed", len(vs), f.MaxItems)
		return
	}
	for i, v := range vs {
		b.str(path+"."+strconv.Itoa(i), *f.Items, v)
	}
}

// count checks the length n of a list of records against fields.MaxNames.
func (b *bounder) count(path string, n int) {
	if b.err == nil && n > fields.MaxNames {
		b.fail(path, "has %d items, at most %d are allowed", n, fields.MaxNames)
	}
}

// object checks that v, an object field, is at most fields.MaxBodyBytes of
// JSON (the request body that could have brought it).
func (b *bounder) object(path string, v any) {
	if b.err != nil || v == nil {
		return
	}
	if m, ok := v.(map[string]any); ok && m == nil {
		return
	}
	enc, err := json.Marshal(v)
	switch {
	case err != nil:
		b.fail(path, "is not a JSON object")
	case len(enc) > fields.MaxBodyBytes:
		b.fail(path, "is longer than %d bytes of JSON", fields.MaxBodyBytes)
	}
}

// code checks a block of code against signature.MaxCodeBytes.
func (b *bounder) code(path, code string) {
	if b.err == nil && len(code) > signature.MaxCodeBytes {
		b.fail(path, "is longer than %d bytes", signature.MaxCodeBytes)
	}
}

// catalogue checks what NewCatalogue, which read the record, does not:
// each tool's schemas (names, descriptions and the count it bounds).
func (b *bounder) catalogue(c *procedures.Catalogue) {
	for i, t := range c.Tools {
		p := "catalogue.tools." + strconv.Itoa(i)
		b.object(p+".input_schema", t.InputSchema)
		b.object(p+".output_schema", t.OutputSchema)
	}
}

func (b *bounder) procedure(p *ProcedureRecord) {
	b.str("procedure.name", fields.ProcName, p.Name)
	b.names("procedure.signature", p.Signature)
	b.str("procedure.summary", fields.Summary, p.Summary)
	b.str("procedure.current", fields.CodeHash, p.Current)
	b.list("procedure.search_parts", fields.SearchParts, p.SearchParts)
	if g := p.Grant; g != nil {
		b.str("procedure.grant.granted_by", fields.Actor, g.GrantedBy)
		b.str("procedure.grant.reason", fields.Reason, g.Reason)
		b.str("procedure.grant.code_hash", fields.CodeHash, g.CodeHash)
		b.binding("procedure.grant.binding", g.Binding)
	}
	if rt := p.Retired; rt != nil {
		b.str("procedure.retired.retired_by", fields.Actor, rt.RetiredBy)
		b.str("procedure.retired.reason", fields.Reason, rt.Reason)
	}
}

func (b *bounder) version(v *VersionRecord) {
	b.str("version.procedure", fields.ProcName, v.Procedure)
	b.str("version.code_hash", fields.CodeHash, v.CodeHash)
	b.code("version.code", v.Code)
	b.str("version.dialect", fields.Label, v.Dialect) // its value: signature.ParseDialect (checkContent)
	b.enum("version.status", fields.Status, string(v.Status))
	b.names("version.parameters", v.Parameters)
	b.object("version.input_schema", v.InputSchema)
	b.count("version.warnings", len(v.Warnings))
	for i, w := range v.Warnings {
		b.str("version.warnings."+strconv.Itoa(i)+".message", fields.WarningMessage, w.Message)
	}
	b.str("version.summary", fields.Summary, v.Summary)
	b.object("version.metadata", v.Metadata)
	if bl := v.Baseline; bl != nil {
		b.count("version.baseline.tools", len(bl.Tools))
		for i, c := range bl.Tools {
			p := "version.baseline.tools." + strconv.Itoa(i)
			b.str(p+".tool", fields.Name, c.Tool)
			b.str(p+".schema_hash", fields.CodeHash, c.SchemaHash)
			b.str(p+".input_hash", fields.CodeHash, c.InputHash)
			b.str(p+".output_hash", fields.CodeHash, c.OutputHash)
			b.object(p+".input_schema", c.InputSchema)
			b.object(p+".output_schema", c.OutputSchema)
		}
	}
}

// decision checks an audit record's lists; CheckAudit (checkContent)
// checks its strings against the recorder's bounds.
func (b *bounder) decision(path string, d *audit.Decision) {
	b.names(path+".allowed_tools", d.AllowedTools)
}

func (b *bounder) approval(t *gate.TurnRecord) {
	b.str("approval.id", fields.TurnID, t.ID)
	b.enum("approval.phase", fields.Phase, string(t.Phase))
	b.str("approval.status", fields.Name, string(t.Status))
	b.str("approval.session_id", fields.SessionID, t.SessionID)
	b.str("approval.code_hash", fields.CodeHash, t.CodeHash)
	b.names("approval.signature", t.Signature)
	b.names("approval.state_changing_tools", t.StateChangingTools)
	b.names("approval.unknown_tools", t.UnknownTools)
	b.str("approval.summary", fields.TurnSummary, t.Summary)
	b.str("approval.requested_by", fields.Actor, t.RequestedBy)
	if r := t.Resolution; r != nil {
		b.enum("approval.resolution.choice", fields.Choice, string(r.Choice))
		b.str("approval.resolution.by", fields.Actor, r.By)
		b.str("approval.resolution.reason", fields.Reason, r.Reason)
		b.str("approval.resolution.code_hash", fields.CodeHash, r.CodeHash)
	}
	b.code("approval.code", t.Code)
	b.str("approval.dialect", fields.Label, t.Dialect)
	b.object("approval.arguments", t.Arguments)
	if c := t.Capture; c != nil {
		if c.Cause != nil {
			b.str("approval.capture.cause.name", fields.CauseName, c.Cause.Name)
			b.str("approval.capture.cause.description", fields.CauseDesc, c.Cause.Description)
		}
		b.str("approval.capture.summary", fields.Summary, c.Summary)
		b.object("approval.capture.metadata", c.Metadata)
	}
	if t.Denial != nil {
		b.decision("approval.denial", t.Denial)
	}
	b.binding("approval.binding", t.Binding)
}

// binding checks what an authorization binds to.
func (b *bounder) binding(path string, bd *binding.Binding) {
	if bd == nil {
		return
	}
	b.str(path+".code_hash", fields.CodeHash, bd.CodeHash)
	b.str(path+".statement_hash", fields.CodeHash, bd.StatementHash)
	b.names(path+".signature", bd.Signature)
	b.names(path+".state_changing_tools", bd.StateChangingTools)
	b.count(path+".tools", len(bd.Tools))
	for i, t := range bd.Tools {
		p := path + ".tools." + strconv.Itoa(i)
		b.str(p+".name", fields.Name, t.Name)
		b.str(p+".schema_hash", fields.CodeHash, t.SchemaHash)
	}
	b.count(path+".nested", len(bd.Nested))
	for i, n := range bd.Nested {
		p := path + ".nested." + strconv.Itoa(i)
		b.str(p+".name", fields.Name, n.Name)
		b.str(p+".code_hash", fields.CodeHash, n.CodeHash)
		b.names(p+".state_changing_tools", n.StateChangingTools)
	}
}
