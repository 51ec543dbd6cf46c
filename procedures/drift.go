package procedures

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/recording"
)

// ToolContract is one tool's contract as a version keeps it for drift
// (docs/design.md "Drift"): its SchemaHash and the parts SchemaHash is made
// of, each hashed (input_schema, output_schema) or as it was (read_only,
// external_access), so a later catalogue can say which part changed.
type ToolContract struct {
	Tool           string `json:"tool"`
	SchemaHash     string `json:"schema_hash"`
	InputHash      string `json:"input_hash"`
	OutputHash     string `json:"output_hash"`
	ReadOnly       bool   `json:"read_only"`
	ExternalAccess bool   `json:"external_access"`
	// InputSchema and OutputSchema are the schemas themselves, so that a
	// later catalogue can say what changed in them (DriftOf's Changes);
	// absent from a baseline kept before they were.
	InputSchema  map[string]any `json:"input_schema,omitempty"`
	OutputSchema map[string]any `json:"output_schema,omitempty"`
}

// Key is the contract as one string: the tool's name, a space, its schema
// hash. A version is stale when one of its baseline's keys is not among the
// catalogue's (Catalogue.ContractKeys): the stores compare keys, Go names
// the change (DriftOf).
func (c ToolContract) Key() string { return c.Tool + " " + c.SchemaHash }

// ContractOf is t's contract.
func ContractOf(t Tool) ToolContract { return contractWith(t, schemaHash(t)) }

// contractWith is t's contract, its SchemaHash being hash.
func contractWith(t Tool, hash string) ToolContract {
	return ToolContract{Tool: t.Name, SchemaHash: hash, InputHash: jsonHash(orEmpty(t.InputSchema)),
		OutputHash: jsonHash(t.OutputSchema), ReadOnly: t.ReadOnly, ExternalAccess: t.ExternalAccess,
		InputSchema: nonEmpty(t.InputSchema), OutputSchema: t.OutputSchema}
}

// nonEmpty is m, nil when empty (a contract keeps an empty input schema
// as none: its hash tells them apart from an absent one).
func nonEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// jsonHash is "sha256:" and the hex of v's canonical JSON (encoding/json
// sorts map keys and writes no white space); a nil map hashes as null.
func jsonHash(v map[string]any) string {
	var raw []byte
	var err error
	if v == nil {
		raw = []byte("null")
	} else if raw, err = json.Marshal(v); err != nil {
		// Tools hold JSON-decoded values only; this cannot fail.
		panic("procedures: a tool schema does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Baseline is what a version was last known to work with: the contracts of
// its signature's catalogue tools, by tool name, as of its capture, its
// last successful run, or the operator's accept-drift (Store.Rebaseline). A
// nil *Baseline is a version stored before drift was kept, which the stores
// give the current contracts once, when they open (never stale meanwhile).
type Baseline struct {
	Tools []ToolContract `json:"tools"`
}

// BaselineOf is the baseline of a version whose procedure has signature,
// under cat: the contract of every signature tool cat has (proc__ names and
// unknown tools have none), by name.
func BaselineOf(signature []string, cat *Catalogue) *Baseline {
	b := &Baseline{Tools: []ToolContract{}}
	for _, n := range signature {
		if t, ok := cat.Tool(n); ok {
			b.Tools = append(b.Tools, cat.contractOf(t))
		}
	}
	sort.Slice(b.Tools, func(i, j int) bool { return b.Tools[i].Tool < b.Tools[j].Tool })
	return b
}

// Check returns why b cannot be the baseline of a version whose procedure
// has signature ("" when it can): what BaselineOf makes, one contract per
// tool, sorted by name, each a catalogue tool of the signature (no proc__
// name), its hashes "sha256:" and 64 lowercase hex. A dump's baselines are
// checked with it (docs/dumps.md).
func (b *Baseline) Check(signature []string) string {
	for i, c := range b.Tools {
		switch {
		case IsProcName(c.Tool) || !slices.Contains(signature, c.Tool):
			return fmt.Sprintf("tool %q is not a catalogue tool of the signature %v", c.Tool, signature)
		case i > 0 && c.Tool <= b.Tools[i-1].Tool:
			return fmt.Sprintf("tool %q repeated or out of order (after %q)", c.Tool, b.Tools[i-1].Tool)
		}
		for _, h := range []string{c.SchemaHash, c.InputHash, c.OutputHash} {
			if !schemaHashShape.MatchString(h) {
				return fmt.Sprintf("tool %s: hash %q is not sha256: and 64 lowercase hex", c.Tool, h)
			}
		}
		// A schema kept beside its hash is the one hashed (it is shown as
		// what the tool was).
		if c.InputSchema != nil && jsonHash(c.InputSchema) != c.InputHash {
			return fmt.Sprintf("tool %s: its input_schema is not the one input_hash names", c.Tool)
		}
		if c.OutputSchema != nil && jsonHash(c.OutputSchema) != c.OutputHash {
			return fmt.Sprintf("tool %s: its output_schema is not the one output_hash names", c.Tool)
		}
	}
	return ""
}

// Keys is Key of each of b's contracts.
func (b *Baseline) Keys() []string {
	if b == nil {
		return nil
	}
	keys := make([]string, len(b.Tools))
	for i, c := range b.Tools {
		keys[i] = c.Key()
	}
	return keys
}

// ContractKeys is Key of every tool's contract in c, sorted.
func (c *Catalogue) ContractKeys() []string {
	if c == nil {
		return nil
	}
	keys := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		keys[i] = ToolContract{Tool: t.Name, SchemaHash: c.hashOf(t)}.Key()
	}
	sort.Strings(keys)
	return keys
}

// The changes a drift entry names.
const (
	DriftInputSchema    = "input_schema"
	DriftOutputSchema   = "output_schema"
	DriftReadOnly       = "read_only"
	driftExternalAccess = "external_access"
	DriftRemoved        = "removed"
)

// Drift is one change of one tool since a version's baseline. For a
// schema change, Changes says what changed in it (schemaDiff) when the
// baseline kept the earlier schema.
type Drift struct {
	Tool    string         `json:"tool"`
	Change  string         `json:"change"`
	Changes []SchemaChange `json:"changes,omitempty"`
}

// SchemaChange is one difference between two JSON Schemas: at Path (a JSON
// pointer), a value Added, Removed or Changed; Was and Now are the values'
// JSON, each cut to maxSchemaValueBytes.
type SchemaChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	Was    string `json:"was,omitempty"`
	Now    string `json:"now,omitempty"`
}

// The kinds of SchemaChange, and its bounds: at most maxSchemaChanges per
// drift entry (the last one then says how many more), each value's JSON cut
// to maxSchemaValueBytes.
const (
	schemaAdded         = "added"
	schemaRemoved       = "removed"
	SchemaChanged       = "changed"
	schemaMore          = "more"
	maxSchemaChanges    = 50
	maxSchemaValueBytes = 200
)

// schemaDiff is what changed from was to now, object members compared by
// name (recursively), any other value as a whole, in path order.
func schemaDiff(was, now map[string]any) []SchemaChange {
	var out []SchemaChange
	diffValue("", was, now, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if len(out) > maxSchemaChanges {
		more := len(out) - maxSchemaChanges + 1
		out = append(out[:maxSchemaChanges-1], SchemaChange{Path: "", Change: schemaMore, Now: fmt.Sprintf("%d more changes", more)})
	}
	return out
}

func diffValue(path string, was, now any, out *[]SchemaChange) {
	wm, wok := was.(map[string]any)
	nm, nok := now.(map[string]any)
	if wok && nok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range nm {
			keys[k] = true
		}
		for k := range keys {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			w, inW := wm[k]
			n, inN := nm[k]
			switch {
			case !inW:
				*out = append(*out, SchemaChange{Path: p, Change: schemaAdded, Now: schemaValue(n)})
			case !inN:
				*out = append(*out, SchemaChange{Path: p, Change: schemaRemoved, Was: schemaValue(w)})
			default:
				diffValue(p, w, n, out)
			}
		}
		return
	}
	if w, n := schemaJSON(was), schemaJSON(now); w != n {
		*out = append(*out, SchemaChange{Path: path, Change: SchemaChanged, Was: cutValue(w), Now: cutValue(n)})
	}
}

// schemaJSON is v's canonical JSON (sorted keys).
func schemaJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func schemaValue(v any) string { return cutValue(schemaJSON(v)) }

// cutValue cuts s to maxSchemaValueBytes, on a rune boundary, with "…".
func cutValue(s string) string {
	if len(s) <= maxSchemaValueBytes {
		return s
	}
	cut := maxSchemaValueBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// DriftOf is what changed in cat since b, by tool then in the order input,
// output, read_only, external_access (removed alone): empty when nothing
// did, or b is nil (a version not yet given its baseline). It is the one
// home of the rule; a version is stale exactly when it is not empty.
func DriftOf(b *Baseline, cat *Catalogue) []Drift {
	out := []Drift{}
	if b == nil {
		return out
	}
	for _, was := range b.Tools {
		t, ok := cat.Tool(was.Tool)
		if !ok {
			out = append(out, Drift{Tool: was.Tool, Change: DriftRemoved})
			continue
		}
		if cat.hashOf(t) == was.SchemaHash {
			continue
		}
		now := cat.contractOf(t)
		n := len(out)
		if now.InputHash != was.InputHash {
			d := Drift{Tool: was.Tool, Change: DriftInputSchema}
			// An empty schema is kept as none (omitempty): its hash says so.
			if was.InputSchema != nil || was.InputHash == jsonHash(map[string]any{}) {
				d.Changes = schemaDiff(orEmpty(was.InputSchema), orEmpty(t.InputSchema))
			}
			out = append(out, d)
		}
		if now.OutputHash != was.OutputHash {
			d := Drift{Tool: was.Tool, Change: DriftOutputSchema}
			if was.OutputSchema != nil || was.OutputHash == jsonHash(nil) {
				d.Changes = schemaDiff(was.OutputSchema, t.OutputSchema)
			}
			out = append(out, d)
		}
		if now.ReadOnly != was.ReadOnly {
			out = append(out, Drift{Tool: was.Tool, Change: DriftReadOnly})
		}
		if now.ExternalAccess != was.ExternalAccess {
			out = append(out, Drift{Tool: was.Tool, Change: driftExternalAccess})
		}
		if len(out) == n {
			// The hash changed and no part did: a baseline kept by another
			// hashing; the input schema is what the hash was made of first.
			out = append(out, Drift{Tool: was.Tool, Change: DriftInputSchema})
		}
	}
	return out
}

// StaleVersion is one version Store.Drifted found stale: its procedure, code
// hash, whether it is current, its baseline (DriftOf names the changes) and
// its last verification (nil: never verified).
type StaleVersion struct {
	Procedure    string
	CodeHash     string
	Current      bool
	Baseline     *Baseline
	At           time.Time // when the version was captured
	Verification *recording.Verification
}

// SortStale orders stale versions as Store.Drifted answers them: current
// ones first, then by procedure name and code hash.
func SortStale(vs []StaleVersion) {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Current != b.Current {
			return a.Current
		}
		if a.Procedure != b.Procedure {
			return a.Procedure < b.Procedure
		}
		return a.CodeHash < b.CodeHash
	})
}

// PageStale is vs[offset:offset+limit] (limit 0: to the end), empty past
// the end.
func PageStale(vs []StaleVersion, limit, offset int) []StaleVersion {
	if offset >= len(vs) {
		return []StaleVersion{}
	}
	vs = vs[offset:]
	if limit > 0 && limit < len(vs) {
		vs = vs[:limit]
	}
	return vs
}

// DriftEntry is one stale version as GET /v1/drift lists it.
type DriftEntry struct {
	Procedure    string                  `json:"procedure"`
	CodeHash     string                  `json:"code_hash"`
	Current      bool                    `json:"current"`
	Drift        []Drift                 `json:"drift"`
	Verification *recording.Verification `json:"verification"`
}

// RebaselineInput asks Store.Rebaseline to give a version the stored
// catalogue's contracts as its baseline.
type RebaselineInput struct {
	Name     string
	CodeHash string
	// Revision, when set, is the catalogue revision the caller saw the
	// version work under (a run that succeeded): the baseline changes only
	// if the stored catalogue is still that revision, else nothing does.
	Revision string
	// Decision, when set, is appended in the same transaction (accept-drift),
	// which then requires the version to be stale: fault.CodeConflict,
	// details reason ReasonNotStale, otherwise, and nothing is written.
	Decision *audit.Decision
}

// ReasonNotStale is the conflict of an accept-drift of a version that is
// not stale.
const ReasonNotStale = "not_stale"

// StaleNote is the sentence a stale procedure's planner description (and
// its MCP proc__ tool's) ends with: which tools changed how since it last
// worked, so an agent can expect it to fail.
func StaleNote(drift []Drift) string {
	var b strings.Builder
	b.WriteString("Stale: since it last worked, ")
	for i, d := range drift {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.Tool)
		if d.Change == DriftRemoved {
			b.WriteString(" was removed")
		} else {
			b.WriteString(" changed its " + d.Change)
		}
	}
	b.WriteString(".")
	return b.String()
}
