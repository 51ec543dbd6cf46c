package procedures

import (
	"reflect"
	"slices"

	"github.com/procgraph/procgraph/internal/cache"
)

// decoration is what decorate derived for one procedure from the
// catalogue, with the inputs it was derived from: its classification, its
// description and its typed input schema. Every part is reused only while
// its inputs are the same, so a catalogue change (another catalogue, told
// by identity or revision) or a new version, summary or cause is seen at
// once. Its values are shared by every procedure decorated from it: they
// are never modified.
type decoration struct {
	// The revision of the catalogue the classification and the schema were
	// derived from (only the revision is held, so that a cache full of old
	// entries keeps no old catalogue alive).
	rev string
	// Inputs.
	signature  []string
	summary    string
	causes     []string // names, in the procedure's order
	codeHash   string
	dialect    string
	parameters []string
	stored     map[string]any // the version's input schema (held: compared by identity)
	// Outputs.
	class        Classification
	description  string
	schema       map[string]any
	typeWarnings []Warning
}

// maxDecorations bounds the decoration cache (least recently used entries
// go).
const maxDecorations = 16384

// decorations caches decorate's derived parts per procedure name.
type decorations struct {
	m *cache.Cache[string, *decoration]
}

// newDecorations returns an empty decorations.
func newDecorations() *decorations {
	return &decorations{m: cache.New[string, *decoration](maxDecorations)}
}

func (c *decorations) get(name string) *decoration {
	d, _ := c.m.Get(name)
	return d
}

func (c *decorations) put(name string, d *decoration) { c.m.Add(name, d) }

// sameCatalogue reports whether d was derived from cat: the same revision
// (a revision is the hash of the tools, see NewCatalogue; a catalogue built
// without one matches nothing).
func (d *decoration) sameCatalogue(cat *Catalogue) bool {
	return cat != nil && cat.Revision != "" && d.rev == cat.Revision
}

// classFits reports whether d's classification is p's in cat. Only
// signatures without nested procedures are cached: theirs depends on the
// nested procedures too (see decoration for).
func (d *decoration) classFits(p *Procedure, cat *Catalogue) bool {
	return d.sameCatalogue(cat) && slices.Equal(d.signature, p.Signature)
}

// descriptionFits reports whether d's description is Describe(p).
func (d *decoration) descriptionFits(p *Procedure) bool {
	return d.summary == p.Summary && slices.Equal(d.signature, p.Signature) &&
		slices.EqualFunc(d.causes, p.Causes, func(name string, c CauseLink) bool { return name == c.Name })
}

// schemaFits reports whether d's typed schema is p's in cat: the same
// version (code, parameters, the very stored schema) and catalogue.
func (d *decoration) schemaFits(p *Procedure, cat *Catalogue) bool {
	return d.sameCatalogue(cat) && d.codeHash == p.CodeHash && d.dialect == p.Dialect &&
		slices.Equal(d.parameters, p.Parameters) && sameMap(d.stored, p.InputSchema)
}

// sameMap reports whether a and b are the same map object (both nil too).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// decorationOf returns p's derived parts in v, from the cache where their
// inputs are unchanged.
func (v *view) decorationOf(p *Procedure) *decoration {
	cacheable := v.decor != nil && !hasProcRefs(p.Signature)
	var old *decoration
	if cacheable {
		old = v.decor.get(p.Name)
	}
	classOK := old != nil && old.classFits(p, v.cat)
	descOK := old != nil && old.descriptionFits(p)
	schemaOK := old != nil && old.schemaFits(p, v.cat)
	if classOK && descOK && schemaOK {
		return old
	}
	d := &decoration{signature: p.Signature, summary: p.Summary, codeHash: p.CodeHash,
		dialect: p.Dialect, parameters: p.Parameters, stored: p.InputSchema}
	if v.cat != nil {
		d.rev = v.cat.Revision
	}
	d.causes = make([]string, len(p.Causes))
	for i, c := range p.Causes {
		d.causes[i] = c.Name
	}
	if classOK {
		d.class = old.class
	} else {
		d.class = v.classify(p.Signature)
	}
	if descOK {
		d.description = old.description
	} else {
		d.description = Describe(p)
	}
	if schemaOK {
		d.schema, d.typeWarnings = old.schema, old.typeWarnings
	} else {
		d.schema, d.typeWarnings = TypedSchema(p.InputSchema, p.Parameters, v.flows.flows(p), v.cat)
	}
	if cacheable {
		v.decor.put(p.Name, d)
	}
	return d
}

// hasProcRefs reports whether a signature names a procedure.
func hasProcRefs(signature []string) bool {
	return slices.ContainsFunc(signature, IsProcName)
}
