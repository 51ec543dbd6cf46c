package procedures

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// Tool is one tool of the catalogue: what a procedure may call.
type Tool struct {
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	ReadOnly       bool           `json:"read_only"`
	ExternalAccess bool           `json:"external_access"`
	InputSchema    map[string]any `json:"input_schema"` // {} when the tool has none
	// OutputSchema is the tool's result schema, nil when the catalogue has
	// none (part of SchemaHash either way).
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	// Server is the key of the upstream server the tool is called on (its
	// key in the upstreams file); empty for the one unnamed server of the
	// --upstream-* flags. Calls are routed by it (mcpdispatch).
	Server string `json:"server,omitempty"`
	// UpstreamName is the tool's name on its server, the name sent on the
	// wire; empty means Name. Name is the catalogue's, an identifier
	// (mcpdispatch.ToolName maps one to the other).
	UpstreamName string `json:"upstream_name,omitempty"`
	// Listed is ListedHash of the entry as its server listed it (set by
	// mcpdispatch.CatalogueOf): while the entry is exactly that
	// (FollowsServer), a catalogue refresh follows the server; an entry
	// edited or written by hand is the operator's and kept. Part of the
	// revision, not of SchemaHash.
	Listed string `json:"listed,omitempty"`
	// SchemaHash is schemaHash of the tool, computed by NewCatalogue (a
	// value given with the tool is ignored); not part of the revision.
	SchemaHash string `json:"schema_hash,omitempty"`
}

// Catalogue is the current set of tools, by name, with a revision hash that
// changes whenever any tool does.
type Catalogue struct {
	Tools    []Tool `json:"tools"`
	Revision string `json:"revision"`
	byName   map[string]*Tool
	// contracts is ContractOf each tool, by name: made with byName.
	contracts map[string]ToolContract
	// caches keep what is derived from the tools (propcache.go; nil: a
	// catalogue made otherwise, nothing kept).
	caches *catalogueCaches
}

var toolNamePattern = regexp.MustCompile(`^[A-Za-z_][0-9A-Za-z_]{0,` + strconv.Itoa(fields.MaxToolNameBytes-1) + `}$`)

// NewCatalogue validates tools and returns them as a catalogue sorted by name.
// It returns fault.CodeInvalid for an empty or invalid name, a duplicate, a
// proc__ name (procedures are not catalogue tools), a description past its
// bound (fields.ToolDesc: the bound of PUT /v1/tools, on every path that
// takes a catalogue: serve --tools, tools import, a dump) or too many tools.
func NewCatalogue(tools []Tool) (*Catalogue, error) {
	return newCatalogue(tools, true)
}

// ReadCatalogue is NewCatalogue for the tools a store read back: every
// rule but the description's bound, so a catalogue stored before that
// bound was applied on every path stays readable and replaceable.
func ReadCatalogue(tools []Tool) (*Catalogue, error) {
	return newCatalogue(tools, false)
}

func newCatalogue(tools []Tool, bounded bool) (*Catalogue, error) {
	if len(tools) > fields.MaxCatalogueTools {
		return nil, fault.Errorf(fault.CodeInvalid, "catalogue has %d tools, at most %d are allowed", len(tools), fields.MaxCatalogueTools)
	}
	sorted := make([]Tool, len(tools))
	copy(sorted, tools)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	c := &Catalogue{Tools: sorted, byName: make(map[string]*Tool, len(sorted)), caches: newCatalogueCaches()}
	for i := range sorted {
		t := &sorted[i]
		if !toolNamePattern.MatchString(t.Name) {
			return nil, fault.Errorf(fault.CodeInvalid, "tool name %q is not an identifier of at most %d characters", t.Name, fields.MaxToolNameBytes).WithDetails("field", "tools.name")
		}
		if IsProcName(t.Name) {
			return nil, fault.Errorf(fault.CodeInvalid, "tool name %q starts with %q, which is reserved for procedures", t.Name, ProcPrefix).WithDetails("field", "tools.name")
		}
		if bounded {
			if err := fields.ToolDesc.CheckString(t.Description); err != nil {
				return nil, fault.Errorf(fault.CodeInvalid, "tool %q: %s", t.Name, fault.ErrorMessage(err)).WithDetails("field", "tools.description")
			}
		}
		if err := checkRoute(*t); err != nil {
			return nil, err
		}
		if t.Listed != "" && !schemaHashShape.MatchString(t.Listed) {
			return nil, fault.Errorf(fault.CodeInvalid, "tool %q: listed is not a \"sha256:\" hash", t.Name).WithDetails("field", "tools.listed")
		}
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{}
		}
		if _, dup := c.byName[t.Name]; dup {
			return nil, fault.Errorf(fault.CodeInvalid, "tool %q appears twice", t.Name).WithDetails("field", "tools.name")
		}
		t.SchemaHash = schemaHash(*t)
		c.byName[t.Name] = t
	}
	c.Revision = catalogueRevision(sorted)
	c.contractsOf()
	return c, nil
}

// serverKeyPattern is what a server's key may be (the upstreams file's
// keys and a tool's server).
var serverKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,` + strconv.Itoa(fields.MaxServerKeyBytes-1) + `}$`)

// CheckServerKey returns fault.CodeInvalid unless key may name an upstream
// server: 1 to 64 ASCII letters, digits, '_', '.' or '-', starting with a
// letter or digit.
func CheckServerKey(key string) error {
	if !serverKeyPattern.MatchString(key) {
		return fault.Errorf(fault.CodeInvalid, "server key %q is not 1 to %d letters, digits, '_', '.' or '-' starting with a letter or digit", key, fields.MaxServerKeyBytes)
	}
	return nil
}

// checkRoute checks where t is called: its server (empty, or a key) and
// its upstream name (at most fields.MaxUpstreamNameBytes of valid UTF-8
// without control characters).
func checkRoute(t Tool) error {
	if t.Server != "" {
		if err := CheckServerKey(t.Server); err != nil {
			return fault.Errorf(fault.CodeInvalid, "tool %q: %s", t.Name, fault.ErrorMessage(err)).WithDetails("field", "tools.server")
		}
	}
	if len(t.UpstreamName) > fields.MaxUpstreamNameBytes || !utf8.ValidString(t.UpstreamName) ||
		strings.IndexFunc(t.UpstreamName, unicode.IsControl) >= 0 {
		return fault.Errorf(fault.CodeInvalid, "tool %q: upstream_name is not at most %d bytes of UTF-8 without control characters", t.Name, fields.MaxUpstreamNameBytes).
			WithDetails("field", "tools.upstream_name")
	}
	return nil
}

// WireName is the name t is called by on its server: UpstreamName, or Name
// when it has none.
func (t Tool) WireName() string {
	if t.UpstreamName != "" {
		return t.UpstreamName
	}
	return t.Name
}

func catalogueRevision(sorted []Tool) string {
	bare := make([]Tool, len(sorted))
	for i, t := range sorted {
		t.SchemaHash = ""
		bare[i] = t
	}
	b, err := json.Marshal(bare)
	if err != nil {
		// Tools hold JSON-decoded values only; this cannot fail.
		panic("procedures: catalogue does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Tool returns the tool named name, if the catalogue has it.
func (c *Catalogue) Tool(name string) (Tool, bool) {
	if c == nil {
		return Tool{}, false
	}
	if c.byName == nil {
		// A catalogue not made by NewCatalogue or StoredCatalogue (a
		// literal): looked through, not indexed in place, since a
		// catalogue is shared between goroutines.
		for _, t := range c.Tools {
			if t.Name == name {
				return t, true
			}
		}
		return Tool{}, false
	}
	t, ok := c.byName[name]
	if !ok {
		return Tool{}, false
	}
	return *t, true
}

// SchemaHash returns the schema hash of the catalogue's tool name, "" when
// it has none (see the function schemaHash).
func (c *Catalogue) SchemaHash(name string) string {
	t, ok := c.Tool(name)
	if !ok {
		return ""
	}
	return c.hashOf(t)
}

// hashOf is schemaHash(t) for a tool of c: computed when c was made
// (NewCatalogue, StoredCatalogue: Tool.SchemaHash), now for a catalogue
// made otherwise, whose tools' SchemaHash is not trusted.
func (c *Catalogue) hashOf(t Tool) string {
	if c.byName != nil && t.SchemaHash != "" {
		return t.SchemaHash
	}
	return schemaHash(t)
}

// schemaHash is a tool's contract as authorizations bind to it and drift
// compares it (docs/design.md "What an authorization binds to"): "sha256:" and
// the 64 hex of the canonical JSON (keys sorted, no white space) of its
// input_schema, output_schema (null when the tool has none), read_only
// and external_access. Its description is not part of it.
func schemaHash(t Tool) string {
	in := t.InputSchema
	if in == nil {
		in = map[string]any{}
	}
	raw, err := json.Marshal(map[string]any{"input_schema": in, "output_schema": t.OutputSchema,
		"read_only": t.ReadOnly, "external_access": t.ExternalAccess})
	if err != nil {
		// Tools hold JSON-decoded values only; this cannot fail.
		panic("procedures: a tool schema does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Has reports whether the catalogue lists a tool named name (what
// signature.Names asks of it).
func (c *Catalogue) Has(name string) bool {
	_, ok := c.Tool(name)
	return ok
}

// ToolCount is how many tools c has (0 for a nil c): with ToolText, what
// search.Tools reads of a catalogue.
func (c *Catalogue) ToolCount() int {
	if c == nil {
		return 0
	}
	return len(c.Tools)
}

// ToolText is the name and description of c's i-th tool.
func (c *Catalogue) ToolText(i int) (name, description string) {
	return c.Tools[i].Name, c.Tools[i].Description
}

// StoredCatalogue is the catalogue a store read back: tools as
// NewCatalogue made them (sorted, valid) under revision, indexed, their
// schema hashes computed again.
func StoredCatalogue(tools []Tool, revision string) *Catalogue {
	c := &Catalogue{Tools: tools, Revision: revision, caches: newCatalogueCaches()}
	for i := range c.Tools {
		c.Tools[i].SchemaHash = schemaHash(c.Tools[i])
	}
	c.index()
	c.contractsOf()
	return c
}

// contractsOf computes ContractOf each of c's tools (their SchemaHash set).
func (c *Catalogue) contractsOf() {
	c.contracts = make(map[string]ToolContract, len(c.Tools))
	for _, t := range c.Tools {
		c.contracts[t.Name] = contractWith(t, t.SchemaHash)
	}
}

// contractOf is ContractOf(t) for a tool of c: computed when c was made,
// now for a catalogue made otherwise.
func (c *Catalogue) contractOf(t Tool) ToolContract {
	if k, ok := c.contracts[t.Name]; ok {
		return k
	}
	return ContractOf(t)
}

func (c *Catalogue) index() {
	c.byName = make(map[string]*Tool, len(c.Tools))
	for i := range c.Tools {
		c.byName[c.Tools[i].Name] = &c.Tools[i]
	}
}

// ReadOnlyTools returns the names of the catalogue's read-only tools, sorted.
func (c *Catalogue) ReadOnlyTools() []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, t := range c.Tools {
		if t.ReadOnly {
			names = append(names, t.Name)
		}
	}
	return names
}
