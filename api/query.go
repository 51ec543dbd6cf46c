package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/recording"
)

// queryParam documents and bounds one query parameter.
type queryParam struct {
	name       string
	typ        string // "integer", "boolean" or "string"
	repeatable bool
	enum       []string
	format     string // "date-time": an RFC 3339 time
	noControl  bool   // no control characters (fields.NoControlPattern)
	min, max   int
	doc        string
}

var (
	findParams = []queryParam{
		{name: "q", typ: "string", doc: fmt.Sprintf("relevance search (at most %d bytes): only matching procedures, by relevance, each with a score", fields.MaxSearchBytes)},
		intParam(fields.Limit, fmt.Sprintf("page size (default %d)", fields.DefaultFindLimit)),
		intParam(fields.Offset, fields.Offset.Doc),
		{name: "cause", typ: "string", repeatable: true, doc: "linked to any of these causes"},
		{name: "tool", typ: "string", repeatable: true, doc: "signature contains all of these tools"},
		intParam(fields.MinTools, fields.MinTools.Doc),
		{name: "read_only", typ: "boolean", doc: "recomputed read-only classification"},
		{name: "exposed", typ: "boolean", doc: "offered to planners as a proc__ tool"},
		{name: "status", typ: "string", enum: []string{"succeeded", "failed"}, doc: "current version's status"},
	}
	recordingParams = []queryParam{
		{name: "version", typ: "string", doc: "only this version's (its code hash)"},
		{name: "limit", typ: "integer", min: 1, max: recording.MaxRecordingsPage, doc: fmt.Sprintf("how many (default %d)", recording.DefaultRecordingsPage)},
		intParam(fields.Offset, "page start"),
	}
	plannerParams = []queryParam{
		{name: "q", typ: "string", doc: fmt.Sprintf("relevance search (at most %d bytes): only matching tools, by relevance", fields.MaxSearchBytes)},
		intParam(fields.Limit, fmt.Sprintf("how many tools (default %d)", fields.DefaultFindLimit)),
		{name: "cause", typ: "string", repeatable: true, doc: "linked to any of these causes"},
	}
	graphParams = []queryParam{
		{name: "procedure", typ: "string", repeatable: true, doc: "start from this procedure"},
		{name: "cause", typ: "string", repeatable: true, doc: "start from this cause"},
		{name: "tool", typ: "string", repeatable: true, doc: "start from this tool"},
		{name: "depth", typ: "integer", min: 1, max: graphview.MaxGraphDepth, doc: "hops from the start (default 1)"},
		intParam(fields.Limit, fmt.Sprintf("without a start: how many of the most frequent procedures to start from (default %d)", fields.DefaultFindLimit)),
		intParam(fields.Offset, "without a start: the page of the most frequent procedures to start from (the previous answer's next_offset)"),
		{name: "format", typ: "string", enum: []string{graphFormatJSON, graphFormatGraphML, graphFormatDOT}, doc: "json (default), graphml (GraphML 1.0, typed attributes) or dot (Graphviz)"},
	}
	decisionParams = []queryParam{
		{name: "procedure", typ: "string", noControl: true, doc: "decisions about this procedure"},
		{name: "kind", typ: "string", enum: audit.DecisionKindNames(), doc: "decision kind"},
		{name: "actor", typ: "string", noControl: true, doc: "decisions taken by this token holder (procgraph for its own)"},
		{name: "outcome", typ: "string", enum: []string{string(audit.Allowed), string(audit.Denied)}, doc: "allowed or denied"},
		{name: "since", typ: "string", format: "date-time", doc: "records at or after this time (RFC 3339, to the millisecond)"},
		{name: "until", typ: "string", format: "date-time", doc: "records before this time (RFC 3339, to the millisecond); after since"},
		intParam(fields.DecisionLimit, fmt.Sprintf("how many (default %d)", fields.DefaultDecisionLimit)),
		{name: "before", typ: "string", doc: "page back: records older than this decision id (the previous answer's next)"},
	}
)

// exportParams are GET /v1/export's.
var exportParams = []queryParam{
	{name: "with_recordings", typ: "boolean", doc: "also the versions' recordings (tool output: the grant scope too; procgraph export --with-recordings)"},
}

// driftParams page GET /v1/drift.
var driftParams = []queryParam{
	{name: "limit", typ: "integer", min: 1, max: fields.MaxDriftPage, doc: fmt.Sprintf("how many (default %d)", defaultDriftLimit)},
	intParam(fields.Offset, "page start"),
}

// defaultDriftLimit is GET /v1/drift's page without a limit.
const defaultDriftLimit = 100

// intParam is an integer query parameter with f's name and bounds.
func intParam(f fields.Field, doc string) queryParam {
	return queryParam{name: f.Name, typ: "integer", min: *f.Min, max: *f.Max, doc: doc}
}

// maxQueryValue bounds one query value (in bytes, as a key's).
const maxQueryValue = fields.MaxKeyBytes

// checkQuery rejects unknown, repeated, oversized and mistyped parameters,
// naming the offending one.
func checkQuery(r *http.Request, params []queryParam, allowed map[string]bool) error {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fault.Errorf(fault.CodeInvalid, "the query string is malformed").WithDetails("field", "(query)")
	}
	for name, vs := range values {
		if !allowed[name] {
			return fault.Errorf(fault.CodeInvalid, "unknown query parameter %q", name).WithDetails("field", name)
		}
		for _, p := range params {
			if p.name != name {
				continue
			}
			if len(vs) > 1 && !p.repeatable {
				return fault.Errorf(fault.CodeInvalid, "query parameter %q may appear once", name).WithDetails("field", name)
			}
			if len(vs) > fields.MaxFilterValues {
				return fault.Errorf(fault.CodeInvalid, "query parameter %q appears too often", name).WithDetails("field", name)
			}
			for _, v := range vs {
				if err := p.check(v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p queryParam) check(v string) error {
	bad := func(msg string) error {
		return fault.Errorf(fault.CodeInvalid, "query parameter %q %s", p.name, msg).WithDetails("field", p.name)
	}
	if len(v) > maxQueryValue || !utf8.ValidString(v) {
		return bad("is too long or not UTF-8")
	}
	switch p.typ {
	case "integer":
		n, err := strconv.Atoi(v)
		if err != nil {
			return bad("must be an integer")
		}
		if n < p.min || n > p.max {
			return bad("must be between " + strconv.Itoa(p.min) + " and " + strconv.Itoa(p.max))
		}
	case "boolean":
		if v != "true" && v != "false" {
			return bad("must be true or false")
		}
	case "string":
		if v == "" {
			return bad("must not be empty")
		}
		if p.noControl && strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return bad("must not contain control characters")
		}
		if p.format == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				return bad("must be an RFC 3339 time (2026-01-02T15:04:05Z)")
			}
		}
		if len(p.enum) > 0 {
			for _, e := range p.enum {
				if v == e {
					return nil
				}
			}
			return bad("is not one of " + strings.Join(p.enum, ", "))
		}
	}
	return nil
}

// queryInt returns an integer parameter already checked, or def.
func queryInt(r *http.Request, name string, def int) int {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def
	}
	n, _ := strconv.Atoi(v)
	return n
}

// queryTime returns a date-time parameter already checked, or the zero time.
func queryTime(r *http.Request, name string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.URL.Query().Get(name))
	return t
}

// queryBool returns a boolean parameter already checked, or nil.
func queryBool(r *http.Request, name string) *bool {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil
	}
	b := v == "true"
	return &b
}
