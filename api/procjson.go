package api

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/procgraph/procgraph/procedures"
)

// jsonFlags are writeJSON's encoder flags (SetEscapeHTML(false)): map keys
// sorted, no HTML escaping.
const jsonFlags = json.SortMapKeys

// procHead is the start of a procedure's JSON, from "name" to
// "input_schema" (the bulk of its bytes: the code, the description, the
// schema), rendered once with the values it was rendered from. They change
// only with a new version, summary, cause or catalogue.
type procHead struct {
	name, summary, description, code, dialect, codeHash string
	signature, parameters                               []string
	schema                                              map[string]any // held: compared by identity
	json                                                []byte
}

// fits reports whether h was rendered from p's values.
func (h *procHead) fits(p *procedures.Procedure) bool {
	return h.name == p.Name && h.summary == p.Summary && h.description == p.Description && h.code == p.Code &&
		h.dialect == p.Dialect && h.codeHash == p.CodeHash && sameStrings(h.signature, p.Signature) &&
		sameStrings(h.parameters, p.Parameters) && reflect.ValueOf(h.schema).UnsafePointer() == reflect.ValueOf(p.InputSchema).UnsafePointer()
}

// sameStrings reports whether a and b encode alike (nil is null, empty []).
func sameStrings(a, b []string) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// maxProcHeads bounds the head cache; it is emptied when full.
const maxProcHeads = 16384

// procJSON writes procedures as JSON, their heads from a cache by name.
// Each head is checked against the procedure's values before use, so a
// stale one is never written.
type procJSON struct {
	mu    sync.Mutex
	heads map[string]*procHead
}

func (c *procJSON) head(p *procedures.Procedure) []byte {
	c.mu.Lock()
	h := c.heads[p.Name]
	c.mu.Unlock()
	if h != nil && h.fits(p) {
		return h.json
	}
	h = &procHead{name: p.Name, summary: p.Summary, description: p.Description, code: p.Code, dialect: p.Dialect,
		codeHash: p.CodeHash, signature: p.Signature, parameters: p.Parameters, schema: p.InputSchema}
	b := append([]byte(nil), `{"name":`...)
	b = json.AppendEscape(b, p.Name, jsonFlags)
	b = appendStrings(append(b, `,"signature":`...), p.Signature)
	b = json.AppendEscape(append(b, `,"summary":`...), p.Summary, jsonFlags)
	b = json.AppendEscape(append(b, `,"description":`...), p.Description, jsonFlags)
	b = json.AppendEscape(append(b, `,"code":`...), p.Code, jsonFlags)
	b = json.AppendEscape(append(b, `,"dialect":`...), p.Dialect, jsonFlags)
	b = json.AppendEscape(append(b, `,"code_hash":`...), p.CodeHash, jsonFlags)
	b = appendStrings(append(b, `,"parameters":`...), p.Parameters)
	b = append(b, `,"input_schema":`...)
	b, err := json.Append(b, p.InputSchema, jsonFlags)
	if err != nil {
		return nil // not JSON: the caller encodes p whole and reports it
	}
	h.json = b
	c.mu.Lock()
	if c.heads == nil || len(c.heads) >= maxProcHeads {
		c.heads = map[string]*procHead{}
	}
	c.heads[p.Name] = h
	c.mu.Unlock()
	return b
}

// appendProcedure appends p's JSON to b: the bytes writeJSON's encoder
// writes for p (the struct tags of procedures.Procedure are the one home
// of the shape; TestProcedureJSON holds the two equal field by field).
func (c *procJSON) appendProcedure(b []byte, p *procedures.Procedure) ([]byte, error) {
	head := c.head(p)
	if head == nil {
		return json.Append(b, p, jsonFlags)
	}
	b = append(b, head...)
	b = json.AppendEscape(append(b, `,"status":`...), string(p.Status), jsonFlags)
	b = strconv.AppendInt(append(b, `,"frequency":`...), p.Frequency, 10)
	b = strconv.AppendInt(append(b, `,"use_count":`...), p.UseCount, 10)
	b = strconv.AppendBool(append(b, `,"read_only":`...), p.ReadOnly)
	b = appendStrings(append(b, `,"state_changing_tools":`...), p.StateChangingTools)
	b = appendStrings(append(b, `,"unknown_tools":`...), p.UnknownTools)
	b = strconv.AppendBool(append(b, `,"opaque":`...), p.Opaque)
	b = appendList(append(b, `,"warnings":`...), p.Warnings, func(b []byte, w procedures.Warning) []byte {
		b = strconv.AppendInt(append(b, `{"line":`...), int64(w.Line), 10)
		b = strconv.AppendInt(append(b, `,"column":`...), int64(w.Column), 10)
		return append(json.AppendEscape(append(b, `,"message":`...), w.Message, jsonFlags), '}')
	})
	b = strconv.AppendBool(append(b, `,"external_access":`...), p.ExternalAccess)
	b = strconv.AppendBool(append(b, `,"exposed":`...), p.Exposed)
	a := &p.AutoRun
	b = strconv.AppendBool(append(b, `,"auto_run":{"enabled":`...), a.Enabled)
	b = strconv.AppendBool(append(b, `,"active":`...), a.Active)
	b = appendStringPtr(append(b, `,"granted_by":`...), a.GrantedBy)
	b = appendTimePtr(append(b, `,"granted_at":`...), a.GrantedAt)
	b = appendStringPtr(append(b, `,"reason":`...), a.Reason)
	b = appendStringPtr(append(b, `,"code_hash":`...), a.CodeHash)
	b = appendStringPtr(append(b, `,"inactive_reason":`...), a.InactiveReason)
	b = appendList(append(b, `},"causes":`...), p.Causes, func(b []byte, cl procedures.CauseLink) []byte {
		b = json.AppendEscape(append(b, `{"name":`...), cl.Name, jsonFlags)
		return append(strconv.AppendInt(append(b, `,"frequency":`...), cl.Frequency, 10), '}')
	})
	b = strconv.AppendBool(append(b, `,"stale":`...), p.Stale)
	b = appendList(append(b, `,"drift":`...), p.Drift, func(b []byte, d procedures.Drift) []byte {
		b = json.AppendEscape(append(b, `{"tool":`...), d.Tool, jsonFlags)
		return append(json.AppendEscape(append(b, `,"change":`...), d.Change, jsonFlags), '}')
	})
	b, err := json.Append(append(b, `,"health":`...), p.Health, jsonFlags)
	if err != nil {
		return b, err
	}
	if b, err = json.Append(append(b, `,"verification":`...), p.Verification, jsonFlags); err != nil {
		return b, err
	}
	b = strconv.AppendBool(append(b, `,"demoted":`...), p.Demoted)
	if p.Score != nil {
		if b, err = json.Append(append(b, `,"score":`...), *p.Score, jsonFlags); err != nil {
			return b, err
		}
	}
	b = appendTime(append(b, `,"created_at":`...), p.CreatedAt)
	b = appendTime(append(b, `,"updated_at":`...), p.UpdatedAt)
	b = appendTimePtr(append(b, `,"last_used_at":`...), p.LastUsedAt)
	b = append(b, `,"retired":`...)
	if r := p.Retired; r == nil {
		b = append(b, "null"...)
	} else {
		b = json.AppendEscape(append(b, `{"retired_by":`...), r.RetiredBy, jsonFlags)
		b = appendTime(append(b, `,"retired_at":`...), r.RetiredAt)
		b = append(json.AppendEscape(append(b, `,"reason":`...), r.Reason, jsonFlags), '}')
	}
	return append(b, '}'), nil
}

// appendList appends xs as a JSON array (null when nil), each item by item.
func appendList[T any](b []byte, xs []T, item func([]byte, T) []byte) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, x)
	}
	return append(b, ']')
}

func appendStrings(b []byte, ss []string) []byte {
	return appendList(b, ss, func(b []byte, s string) []byte { return json.AppendEscape(b, s, jsonFlags) })
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return json.AppendEscape(b, *s, jsonFlags)
}

// appendTime writes t as the encoder does (time.Time's RFC 3339 form).
func appendTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

// procs writes procedure lists. Its heads are checked against each
// procedure's values, so every server shares it.
var procs procJSON

// listBuffers recycles list answers; large ones are not kept.
var listBuffers = sync.Pool{New: func() any { return new([]byte) }}

// writeProcedureList answers a page of procedures and its total: the bytes
// writeJSON writes for {"procedures": page, "total": total}, with each
// procedure's head from procs.
func writeProcedureList(w http.ResponseWriter, page []*procedures.Procedure, total int) {
	bp := listBuffers.Get().(*[]byte)
	b := append((*bp)[:0], `{"procedures":[`...)
	for i, p := range page {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = procs.appendProcedure(b, p); err != nil {
			listBuffers.Put(bp)
			writeJSON(w, http.StatusOK, map[string]any{"procedures": page, "total": total}) // answers the encoding error
			return
		}
	}
	b = strconv.AppendInt(append(b, `],"total":`...), int64(total), 10)
	b = append(b, "}\n"...)
	writeBody(w, http.StatusOK, "application/json", b)
	if cap(b) <= 1<<20 {
		*bp = b
		listBuffers.Put(bp)
	}
}
