package procedures

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

// TypedSchema returns a procedure's input schema typed from the catalogue:
// the one home of docs/design.md's typed-parameter rule. stored is the version's
// input schema (InputSchema of its parameters and the capture's
// params_schema); flows are the analysis' keyword flows (signature.Flow).
//
// A parameter whose property in stored is empty ({} — no params_schema
// said anything about it) takes the schema of the tool properties it is
// passed to directly, tools.x(k=param): x's input_schema.properties.k in
// cat. A property the capture's params_schema gave wins, untouched.
// Several flows combine so that the argument satisfies every tool:
//   - identical schemas (descriptions aside) are taken once;
//   - else, if their types intersect (integer is a number; a missing type
//     allows any), the result is {"type": the intersection, "allOf": [each
//     distinct schema]} so that every tool's bounds and enums apply;
//   - else the types conflict: the parameter stays {} (permissive) and a
//     Warning at the second flow names the tools.
//
// A flow to a tool the catalogue lacks, to a property its schema does not
// declare, or to one that holds a $ref, adds nothing. Each typed property has a description: the tools'
// distinct property descriptions joined with " / ", else "Passed to TOOL as
// KEYWORD[, ...]." stored is not modified.
func TypedSchema(stored map[string]any, parameters []string, flows []signature.Flow, cat *Catalogue) (map[string]any, []Warning) {
	if len(flows) == 0 || cat == nil {
		return stored, nil
	}
	if stored == nil {
		stored, _ = schemas.InputSchema(parameters, nil)
	}
	props, _ := stored["properties"].(map[string]any)
	byParam := map[string][]signature.Flow{}
	for _, f := range flows {
		byParam[f.Parameter] = append(byParam[f.Parameter], f)
	}
	var out map[string]any
	var newProps map[string]any
	var warnings []Warning
	names := make([]string, 0, len(byParam))
	for p := range byParam {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, param := range names {
		if cur, ok := props[param].(map[string]any); !ok || len(cur) != 0 {
			continue // not a parameter of this schema, or given by params_schema
		}
		schema, w := combineFlows(param, byParam[param], cat)
		if w != nil {
			warnings = append(warnings, *w)
		}
		if len(schema) == 0 {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(stored))
			for k, v := range stored {
				out[k] = v
			}
			newProps = make(map[string]any, len(props))
			for k, v := range props {
				newProps[k] = v
			}
			out["properties"] = newProps
		}
		newProps[param] = schema
	}
	if out == nil {
		return stored, warnings
	}
	return out, warnings
}

// combineFlows is TypedSchema's rule for one parameter.
func combineFlows(param string, flows []signature.Flow, cat *Catalogue) (map[string]any, *Warning) {
	var schemas []map[string]any // distinct, without descriptions
	var at []signature.Flow      // the first flow of each
	var descs, places []string
	for _, f := range flows {
		tp := cat.toolProp(f.Tool, f.Keyword)
		if !tp.ok {
			continue
		}
		if d := tp.desc; d != "" && !slices.Contains(descs, d) {
			descs = append(descs, d)
		}
		if !slices.Contains(places, tp.place) {
			places = append(places, tp.place)
		}
		s := tp.schema
		dup := false
		for _, g := range schemas {
			if reflect.DeepEqual(g, s) {
				dup = true
				break
			}
		}
		if !dup {
			schemas = append(schemas, s)
			at = append(at, f)
		}
	}
	if len(schemas) == 0 {
		return nil, nil
	}
	description := strings.Join(descs, " / ")
	if description == "" {
		description = "Passed to " + joinAnd(places) + "."
	}
	if len(schemas) == 1 {
		out := make(map[string]any, len(schemas[0])+1)
		for k, v := range schemas[0] {
			out[k] = v
		}
		out["description"] = description
		return out, nil
	}
	types := typeSet(schemas[0])
	all := make([]any, len(schemas))
	for i, s := range schemas {
		if i > 0 {
			types = intersectTypes(types, typeSet(s))
		}
		all[i] = s
	}
	if types != nil && len(types) == 0 {
		f := at[1]
		return nil, &Warning{Line: f.Line, Column: f.Column, Message: fmt.Sprintf(
			"line %d, column %d: parameter %s is passed to tools whose schemas declare conflicting types (%s); it is left untyped",
			f.Line, f.Column, param, strings.Join(places, ", "))}
	}
	out := map[string]any{"allOf": all, "description": description}
	if types != nil {
		sort.Strings(types)
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = jsonvalue.Strings(types)
		}
	}
	return out, nil
}

// toolProp is what combineFlows takes of a tool's input property: its
// schema without its description (never modified: shared by every schema
// typed from it), its description and "TOOL as KEYWORD"; ok is false when
// the catalogue lacks the tool or the property, or the property is empty
// or refers elsewhere (hasRef).
type toolProp struct {
	schema map[string]any
	desc   string
	place  string
	ok     bool
}

func newToolProp(cat *Catalogue, tool, keyword string) *toolProp {
	t, ok := cat.Tool(tool)
	if !ok {
		return &toolProp{}
	}
	props, _ := t.InputSchema["properties"].(map[string]any)
	s, ok := props[keyword].(map[string]any)
	if !ok || len(s) == 0 || hasRef(s) {
		return &toolProp{}
	}
	d, _ := s["description"].(string)
	return &toolProp{schema: stripDescription(s), desc: d, place: t.Name + " as " + keyword, ok: true}
}

// hasRef reports whether a tool's property schema refers elsewhere ($ref,
// $dynamicRef): moved into a procedure's schema it would not resolve, so it
// is not used.
func hasRef(s map[string]any) bool {
	k := schemas.SchemaKey(s)
	return k == "" || strings.Contains(k, `"$ref"`) || strings.Contains(k, `"$dynamicRef"`)
}

func stripDescription(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if k != "description" {
			out[k] = v
		}
	}
	return out
}

// typeSet is the JSON types a schema allows, nil for any.
func typeSet(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := []string{}
		for _, v := range t {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// intersectTypes intersects two type sets (nil is any); integer is a number.
func intersectTypes(a, b []string) []string {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := []string{}
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, x := range a {
		for _, y := range b {
			switch {
			case x == y:
				add(x)
			case x == "integer" && y == "number", x == "number" && y == "integer":
				add("integer")
			}
		}
	}
	return out
}

// maxCachedFlows bounds the flow cache (least recently used entries go).
const maxCachedFlows = 8192

// flowCache holds what decoration needs of analysed code by code hash —
// its keyword flows and its statement hash — with the code itself: two
// texts may share a code hash (signature.Analysis.StatementHash), so an
// entry serves only the very code it was analysed from.
type flowCache struct {
	m *cache.Cache[string, analysed]
	// analyses counts the code get analysed (its misses).
	analyses atomic.Int64
}

// newFlowCache returns an empty flowCache.
func newFlowCache() *flowCache { return &flowCache{m: cache.New[string, analysed](maxCachedFlows)} }

// analysed is a flowCache entry.
type analysed struct {
	code      string
	flows     []signature.Flow
	statement string
}

// flows returns the keyword flows of p's current code (nil when it has no
// code or it no longer analyses).
func (c *flowCache) flows(p *Procedure) []signature.Flow { return c.get(p).flows }

// statementHash returns the statement hash of p's current code ("" when it
// has no code or it no longer analyses: bound to nothing, see Binding.Check).
func (c *flowCache) statementHash(p *Procedure) string { return c.get(p).statement }

func (c *flowCache) get(p *Procedure) analysed {
	if p.Code == "" || p.CodeHash == "" {
		return analysed{}
	}
	e, ok := c.m.Get(p.CodeHash)
	if ok && e.code == p.Code {
		return e
	}
	d, err := signature.ParseDialect(p.Dialect)
	if err != nil {
		return analysed{}
	}
	c.analyses.Add(1)
	a, err := signature.Analyze(p.Code, d)
	if err != nil {
		return analysed{}
	}
	return c.add(p.CodeHash, p.Code, a)
}

// add keeps a, the analysis of code (signature.Analyze's, or one equal to
// it), under hash, and returns the entry.
func (c *flowCache) add(hash, code string, a *signature.Analysis) analysed {
	e := analysed{code: code, flows: a.Flows, statement: a.StatementHash}
	c.m.Add(hash, e)
	return e
}
