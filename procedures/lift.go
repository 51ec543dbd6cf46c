package procedures

import (
	"fmt"
	"hash/maphash"
	"maps"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
)

// liftExtension is the catalogue property keyword that opts a tool's
// input property in (true) or out (false) of lifting.
const liftExtension = "x-procgraph-lift"

// Lifted is one literal a capture lifted into a parameter
// (signature.Lifted: parameter, tool, argument, its position in the code
// as written, the literal as example).
type Lifted = signature.Lifted

// The lifting rule (docs/design.md "Lifting literals into parameters"):
// its one home. A site tools.T(k=literal) is lifted when the catalogue has
// T, T's input_schema declares k, and either k carries
// "x-procgraph-lift": true (any scalar literal, booleans and enums
// included) or k's type is integer, number or string, it has no enum or
// const, no $ref, and no "x-procgraph-lift": false; the literal must be of
// k's type and satisfy k's schema (so a replay with the example is never
// refused). The verdict of a (catalogue revision, tool, property) is
// cached with the property's compiled schema.

// liftProp is the catalogue's verdict on one tool property.
type liftProp struct {
	why    string // why nothing passed as it is lifted ("" for no warning)
	ok     bool
	optIn  bool
	types  []string // nil: any
	schema *jsonschema.Schema
	// typeOnly: the schema says nothing but its type (annotationsOnly), so
	// a literal of one of types satisfies it: it is not validated.
	typeOnly bool
	display  string // tools.T's k
}

// liftCache holds liftProp by catalogue revision, tool and property.
type liftCache = propCache[liftProp]

// newLiftCache is an empty liftCache.
func newLiftCache() *liftCache { return newPropCache(newLiftProp) }

func newLiftProp(cat *Catalogue, tool, keyword string) *liftProp {
	p := &liftProp{display: fmt.Sprintf("tools.%s's %s", tool, keyword)}
	t, ok := cat.Tool(tool)
	if !ok {
		p.why = fmt.Sprintf("the literal passed to tools.%s as %s is not lifted: the catalogue has no tool %s", tool, keyword, tool)
		return p
	}
	props, _ := t.InputSchema["properties"].(map[string]any)
	s, ok := props[keyword].(map[string]any)
	if !ok {
		p.why = fmt.Sprintf("the literal passed as %s is not lifted: the catalogue does not declare %s", keyword, p.display)
		return p
	}
	optIn, set := s[liftExtension].(bool)
	switch {
	case set && !optIn:
		return p // opted out
	case hasRef(s):
		return p
	}
	p.optIn, p.types = optIn, typeSet(s)
	if !optIn {
		if _, enum := s["enum"]; enum {
			return p // a choice, not an instance value: only by opting in
		}
		if _, c := s["const"]; c {
			return p
		}
		if p.types == nil {
			p.why = fmt.Sprintf("the literal passed as %s is not lifted: the catalogue does not type %s", keyword, p.display)
			return p
		}
		if !slices.ContainsFunc(p.types, func(t string) bool { return t == "integer" || t == "number" || t == "string" }) {
			return p // a boolean (or a container): only by opting in
		}
	}
	compiled, err := schemas.CompileSchema(s)
	if err != nil {
		return p
	}
	p.schema, p.ok, p.typeOnly = compiled, true, annotationsOnly(s)
	return p
}

// annotationsOnly reports whether a property schema constrains a value by
// its type alone: besides "type" (a name or a list of names) it has only
// annotations, which never refuse a value.
func annotationsOnly(s map[string]any) bool {
	for k, v := range s {
		switch k {
		case "type":
			switch t := v.(type) {
			case string:
			case []any:
				for _, e := range t {
					if _, ok := e.(string); !ok {
						return false
					}
				}
			default:
				return false
			}
		case "description", "title", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly", liftExtension:
		default:
			return false
		}
	}
	return true
}

// jsonType is a literal's JSON Schema type.
func jsonType(v any) string {
	switch v.(type) {
	case int64:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return ""
}

// verdict is the lifting rule for one site under cat. Each reason is told
// once per capture (seen).
func (p *liftProp) verdict(site signature.LiftSite, seen map[string]bool) signature.Verdict {
	once := func(why string) signature.Verdict {
		if why == "" || seen[why] {
			return signature.Verdict{}
		}
		seen[why] = true
		return signature.Verdict{Why: why}
	}
	if !p.ok {
		return once(p.why)
	}
	t := jsonType(site.Value)
	if t == "boolean" && !p.optIn {
		return signature.Verdict{} // booleans only by opting in
	}
	if p.types != nil && !slices.Contains(p.types, t) && !(t == "integer" && slices.Contains(p.types, "number")) {
		return once(fmt.Sprintf("the literal passed as %s is not lifted: it is a JSON %s and %s is %v", site.Keyword, t, p.display, p.types))
	}
	if !p.typeOnly && p.schema.Validate(site.Value) != nil {
		return once(fmt.Sprintf("the literal passed as %s is not lifted: it does not satisfy %s's schema", site.Keyword, p.display))
	}
	return signature.Verdict{OK: true}
}

// lift applies the lifting rule under cat to plan. taken are names the
// parameters must not take (the capture's params_schema properties).
func (s *Service) lift(plan *signature.LiftPlan, cat *Catalogue, taken []string) *signature.LiftResult {
	seen := map[string]bool{}
	return plan.Apply(func(site signature.LiftSite) signature.Verdict {
		if cat == nil {
			return signature.Verdict{}
		}
		return s.lifts.get(cat, site.Tool, site.Keyword).verdict(site, seen)
	}, taken)
}

// liftOutcome is what lifting made of a capture's code: the lifted code,
// its analysis, what was lifted and the version's input schema with the
// lifted parameters typed (analysis and schema nil when nothing was), and
// why literals were not lifted.
type liftOutcome struct {
	code     string
	analysis *signature.Analysis
	lifted   []Lifted
	schema   map[string]any
	warnings []signature.Warning
}

// liftCapture lifts ca's plan, req's code analysed in dialect (the plan
// made only when the outcome is not kept), under cat (see lift) and types the lifted parameters (InputSchema of the lifted
// analysis and req's params_schema, liftedSchema). The outcome of a
// capture without params_schema is kept (liftMemos) by its code as sent,
// dialect and catalogue revision, which are all it depends on, from the
// second capture of that key on: the same code captured again under the
// same catalogue is not lifted again, and code seen once (new values)
// costs no outcome kept.
func (s *Service) liftCapture(req *CaptureRequest, dialect signature.Dialect, ca *codeAnalysis, cat *Catalogue) (*liftOutcome, error) {
	memo := s.memos != nil && req.ParamsSchema == nil && cat != nil && cat.Revision != "" && len(req.Code) <= maxLiftMemoCode
	var key liftMemoKey
	if memo {
		key = liftMemoKey{req.Code, string(dialect), cat.Revision}
		var kept *liftOutcome
		if kept, memo = s.memos.get(key); kept != nil {
			return kept.clone(), nil
		}
	}
	plan, err := ca.liftPlan()
	if err != nil {
		return nil, CodeError(err)
	}
	res := s.lift(plan, cat, schemaNames(req.ParamsSchema))
	l := &liftOutcome{code: res.Code, warnings: res.Warnings, lifted: []Lifted{}}
	if len(res.Lifted) > 0 {
		schema, err := schemas.InputSchema(res.Analysis.Parameters, req.ParamsSchema)
		if err != nil {
			return nil, err
		}
		l.analysis, l.lifted, l.schema = res.Analysis, res.Lifted, liftedSchema(schema, res.Analysis, res.Examples, cat)
	}
	if !memo {
		return l, nil
	}
	s.memos.put(key, l)
	return l.clone(), nil
}

// clone is l with everything a capture passes on copied, so that a kept
// outcome is never shared with a capture's version or answer (the lifted
// parameters' own schemas are shared: nothing modifies them).
func (l *liftOutcome) clone() *liftOutcome {
	c := *l
	c.lifted = slices.Clone(l.lifted)
	c.warnings = slices.Clone(l.warnings)
	if l.analysis != nil {
		c.analysis = l.analysis.Clone()
	}
	if l.schema != nil {
		c.schema = maps.Clone(l.schema)
		if props, ok := l.schema["properties"].(map[string]any); ok {
			c.schema["properties"] = maps.Clone(props)
		}
		if req, ok := l.schema["required"].([]any); ok {
			c.schema["required"] = slices.Clone(req)
		}
	}
	return &c
}

// liftMemoKey is what a capture's lifting depends on (liftCapture).
type liftMemoKey struct{ code, dialect, revision string }

// Bounds of liftMemos: the outcomes kept and the keys seen once (least
// recently used entries go), the largest code kept.
const (
	maxLiftMemos    = 256
	maxLiftMemoSeen = 4096
	maxLiftMemoCode = 16 << 10
)

// liftMemos keeps liftCapture's outcomes by liftMemoKey, for keys seen
// before.
type liftMemos struct {
	m    *cache.Cache[liftMemoKey, *liftOutcome]
	seed maphash.Seed
	seen *cache.Cache[uint64, struct{}] // the keys seen, by hash
}

// newLiftMemos returns an empty liftMemos.
func newLiftMemos() *liftMemos {
	return &liftMemos{m: cache.New[liftMemoKey, *liftOutcome](maxLiftMemos), seed: maphash.MakeSeed(),
		seen: cache.New[uint64, struct{}](maxLiftMemoSeen)}
}

// get returns the outcome kept for k, else whether k was seen before (its
// outcome is to be kept: put), noting that it has been.
func (c *liftMemos) get(k liftMemoKey) (*liftOutcome, bool) {
	if l, ok := c.m.Get(k); ok {
		return l, true
	}
	h := maphash.Comparable(c.seed, k)
	if _, ok := c.seen.Get(h); ok {
		return nil, true
	}
	c.seen.Add(h, struct{}{})
	return nil, false
}

func (c *liftMemos) put(k liftMemoKey, l *liftOutcome) { c.m.Add(k, l) }

// liftedSchema is a version's stored input schema with its lifted
// parameters typed: each takes the schema TypedSchema gives it from the
// tools it is passed to, with the literal as its example ("examples"),
// stored with the version so that it is required and typed like every
// other parameter. schema is not modified.
func liftedSchema(schema map[string]any, a *signature.Analysis, examples map[string]any, cat *Catalogue) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		out[k] = v
	}
	np := make(map[string]any, len(props))
	for k, v := range props {
		np[k] = v
	}
	var flows []signature.Flow
	for p, ex := range examples {
		// TypedSchema's rule for one untyped parameter.
		flows = flows[:0]
		for _, f := range a.Flows {
			if f.Parameter == p {
				flows = append(flows, f)
			}
		}
		var t map[string]any
		if len(flows) > 0 && cat != nil {
			t, _ = combineFlows(p, flows, cat)
		}
		q := make(map[string]any, len(t)+1)
		for k, v := range t {
			if k != liftExtension {
				q[k] = v
			}
		}
		q["examples"] = []any{ex}
		np[p] = q
	}
	out["properties"] = np
	return out
}

// schemaNames are the property names of a capture's params_schema.
func schemaNames(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	return out
}

// LiftPreview is what a capture of code would lift under cat, without
// capturing it: `procgraph lift --dry-run` (stored versions are never
// rewritten). Errors are the analysis'.
func LiftPreview(code, dialect string, cat *Catalogue) (*signature.LiftResult, error) {
	d, err := signature.ParseDialect(dialect)
	if err != nil {
		return nil, err
	}
	_, plan, err := signature.AnalyzeLift(code, d)
	if err != nil {
		return nil, err
	}
	s := &Service{lifts: newLiftCache()}
	return s.lift(plan, cat, nil), nil
}
