package procedures

//go:generate go run ../internal/gen/classcypher -cypher ../cypher

// ClassField is one field of Class as both stores encode it; ClassFields
// lists them. Exactly one of Status, Flag and Count is set: it returns the
// field's address in a Class, so that a store reads and writes the field
// without naming it.
type ClassField struct {
	// Name is the Class field's name.
	Name string
	// Property names the field on a Neo4j ProcedureClass node and as a
	// column of classes.cypher.
	Property string
	// Node is the Cypher expression that gives the field from the
	// properties of a Procedure node p (a string, a boolean or an integer
	// as the field is a Status, a flag or a count).
	Node string
	// Token is a flag's part of Neo4j's class key when it is set (unset,
	// the part is "-", or nothing when Appended).
	Token string
	// Appended marks a flag added after classes were stored: its part of
	// Neo4j's key is "|"+Token when it is set and nothing when it is not, so
	// that the classes without it keep the keys stored before it, and a
	// ProcedureClass node made before it, which lacks the property, reads
	// it as false.
	Appended bool

	Status func(*Class) *Status // the Status field
	Flag   func(*Class) *bool   // a flag (a bool field)
	Count  func(*Class) *int    // a count (an int field)
}

// ClassFields is the one definition of how both stores encode a Class: each
// of its fields, in key order (docs/adr/0034). The embedded store walks it
// at run time; internal/gen/classcypher writes Neo4j's Cypher from it
// (cypher/fragments/class_key.cypher, class_create.cypher and
// cypher/queries/classes.cypher, written again by go generate ./procedures),
// and the Neo4j store walks it to decode the classes that Cypher reads back.
//
//   - Neo4j's class key (p.class_key, ProcedureClass.key) is the fields'
//     parts joined by '|': the Status as its string, a count in decimal, a
//     flag's Token or '-'; an Appended flag adds "|"+Token when set,
//     nothing when not.
//   - The embedded class key (the classes bucket's keys, a rank summary's
//     first byte) is one byte of bits, the Status and the flags in order
//     from the lowest (the Status's bit: StatusSucceeded; clear it decodes
//     as StatusFailed), then each count as a uvarint.
//
// Both keys are stored: class counts are kept under them. A new field is
// one entry at the end, an Appended flag (plus the Procedure property that
// feeds it, in ClassOf and the stores' procedures); any other change alters
// stored keys, which the stores' golden tests pin (TestClassKeyGolden).
var ClassFields = []ClassField{
	{Name: "Status", Property: "status", Node: "p.status", Status: func(c *Class) *Status { return &c.Status }},
	{Name: "Opaque", Property: "opaque", Node: "coalesce(p.opaque, false)", Token: "o", Flag: func(c *Class) *bool { return &c.Opaque }},
	{Name: "Tools", Property: "tools", Node: "size(p.signature)", Count: func(c *Class) *int { return &c.Tools }},
	{Name: "ReadOnly", Property: "read_only", Node: "p.read_only", Token: "r", Flag: func(c *Class) *bool { return &c.ReadOnly }},
	{Name: "Problem", Property: "problem", Node: "p.problem <> ''", Token: "x", Flag: func(c *Class) *bool { return &c.Problem }},
	{Name: "Retired", Property: "retired", Node: "p.retired_at IS NOT NULL", Token: "retired", Appended: true, Flag: func(c *Class) *bool { return &c.Retired }},
	{Name: "Demoted", Property: "demoted", Node: "coalesce(p.demoted, false)", Token: "demoted", Appended: true, Flag: func(c *Class) *bool { return &c.Demoted }},
}
