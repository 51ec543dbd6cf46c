package binding

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Binding is what an operator (or the granter) reviewed when a standing
// authorization was given — a durable grant (procedures.Grant.Binding), a
// session policy (gate.SessionPolicy.Binding), an approved turn waiting
// to run (gate.TurnRecord.Binding): the program (both hashes), its
// classification, the contracts of its tools and the nested procedures it calls, all as they
// were then (docs/design.md "What an authorization binds to"). An authorization
// applies only while Check finds all of it unchanged. A nil Binding (an
// authorization stored before bindings, or one an import left unbound) is
// bound to nothing and applies to nothing.
type Binding struct {
	// CodeHash is the Bamboo-compatible hash of the code (the name of a
	// version and of a policy).
	CodeHash string `json:"code_hash"`
	// StatementHash is signature.Analysis.StatementHash: what tells apart
	// two texts that share a CodeHash.
	StatementHash string `json:"statement_hash"`
	// Program is the block's program key (procedures.Service.ProgramKey)
	// when a session policy was set on it ("" otherwise): a policy applies to another text of the same
	// program (Check), not only to its own.
	Program            string   `json:"program,omitempty"`
	Signature          []string `json:"signature"`
	ReadOnly           bool     `json:"read_only"`
	StateChangingTools []string `json:"state_changing_tools"`
	// Tools are the catalogue tools of the signature with their schema
	// hashes, by name.
	Tools []BoundTool `json:"tools"`
	// Nested are the procedures the code calls, directly or through other
	// procedures (within procedures.MaxNesting), by name.
	Nested []BoundNested `json:"nested"`
}

// BoundTool is one signature tool's contract at review time.
type BoundTool struct {
	Name string `json:"name"`
	// SchemaHash is the tool's schema hash
	// (procedures.Catalogue.SchemaHash), "" when the catalogue had no tool
	// of that name.
	SchemaHash string `json:"schema_hash"`
}

// BoundNested is one nested procedure at review time.
type BoundNested struct {
	Name string `json:"name"`
	// CodeHash is its current version's hash then, NestedAbsent when no
	// procedure had that name.
	CodeHash           string   `json:"code_hash"`
	ReadOnly           bool     `json:"read_only"`
	StateChangingTools []string `json:"state_changing_tools"`
}

// NestedAbsent is BoundNested.CodeHash of a procedure that did not exist
// at review time.
const NestedAbsent = "absent"

// The reasons an authorization is inactive because of its binding
// (Binding.Check).
const (
	// InactiveCodeChanged: the code changed (either hash, unless both
	// bindings carry one program key).
	InactiveCodeChanged = "code_changed"
	// InactiveUnbound: the authorization has no binding (stored before
	// bindings, or imported without --trust-authorizations); re-approve or
	// re-grant to bind it.
	InactiveUnbound = "unbound"
	// InactiveReclassified: the code's signature, read-only verdict or
	// state-changing tools changed.
	InactiveReclassified = "reclassified"
	// InactiveCatalogueDrift: a signature tool's schema hash changed.
	InactiveCatalogueDrift = "catalogue_drift"
	// InactiveArgumentsChanged: the same state-changing code with other
	// argument values than the operator saw.
	InactiveArgumentsChanged = "arguments_changed"
	// InactiveNestedChanged: a nested procedure has another current
	// version or classification, or did not exist at review time.
	InactiveNestedChanged = "nested_changed"
)

// ReasonNestedChanged is the decision reason of a nested call refused
// because its procedure is not what was reviewed (Binding.CheckNested).
const ReasonNestedChanged = "nested_changed"

// Check returns why an authorization bound to b does not apply to the code
// as it is now (cur, as the domain binds it now), or "" when every part is unchanged:
// InactiveUnbound (b is nil), InactiveCodeChanged (either hash, unless
// both carry one ProgramKey),
// InactiveNestedChanged, InactiveReclassified, InactiveCatalogueDrift, in
// that order. It is the one home of that rule.
func (b *Binding) Check(cur *Binding) string {
	switch {
	case b == nil || cur == nil:
		return InactiveUnbound
	case !b.sameProgram(cur):
		if b.CodeHash == cur.CodeHash && b.StatementHash == cur.StatementHash {
			return InactiveArgumentsChanged
		}
		return InactiveCodeChanged
	case !slices.EqualFunc(b.Nested, cur.Nested, BoundNested.equal):
		return InactiveNestedChanged
	case !slices.Equal(b.Signature, cur.Signature) || b.ReadOnly != cur.ReadOnly ||
		!slices.Equal(b.StateChangingTools, cur.StateChangingTools):
		return InactiveReclassified
	case !slices.Equal(b.Tools, cur.Tools):
		return InactiveCatalogueDrift
	}
	return ""
}

// sameProgram reports whether cur is the program b bound: for a binding
// with a ProgramKey, any text with the same key (a state-changing block's
// key holds its argument values: the same text with others is not it);
// for one without (stored before keys), the same text (both hashes).
func (b *Binding) sameProgram(cur *Binding) bool {
	if b.Program != "" {
		return b.Program == cur.Program
	}
	return b.CodeHash == cur.CodeHash && b.StatementHash == cur.StatementHash && b.StatementHash != ""
}

// CheckNested returns ReasonNestedChanged when now — a nested procedure as
// it is now — is not the one of its name b reviewed, else "". A nil b (a
// run no authorization bound) checks nothing.
func (b *Binding) CheckNested(now BoundNested) string {
	if b == nil {
		return ""
	}
	i := slices.IndexFunc(b.Nested, func(n BoundNested) bool { return n.Name == now.Name })
	if i < 0 || !b.Nested[i].equal(now) {
		return ReasonNestedChanged
	}
	return ""
}

func (n BoundNested) equal(m BoundNested) bool {
	return n.Name == m.Name && n.CodeHash == m.CodeHash && n.ReadOnly == m.ReadOnly &&
		slices.Equal(n.StateChangingTools, m.StateChangingTools)
}

// Hash names b in decision records ("sha256:" and 64 hex of its JSON), ""
// for nil.
func (b *Binding) Hash() string {
	if b == nil {
		return ""
	}
	raw, err := json.Marshal(b)
	if err != nil {
		panic("binding: a binding does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
