package procedures

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
)

// TestCatalogueToolIsSafeToShare: a catalogue is shared between
// goroutines (the stores hand out one value), so looking a tool up must
// not write to it, however it was made (run it with -race).
func TestCatalogueToolIsSafeToShare(t *testing.T) {
	tools := []Tool{{Name: "a", ReadOnly: true}, {Name: "b"}}
	made, err := NewCatalogue(tools)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cat  *Catalogue
	}{
		{"NewCatalogue", made},
		{"StoredCatalogue", StoredCatalogue(made.Tools, made.Revision)},
		{"a literal", &Catalogue{Tools: made.Tools, Revision: made.Revision}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if a, ok := tc.cat.Tool("a"); !ok || !a.ReadOnly {
						t.Errorf("Tool(a) = %+v, %v", a, ok)
					}
					if _, ok := tc.cat.Tool("c"); ok {
						t.Errorf("Tool(c) found")
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestSchemaHashIsComputed: a catalogue made by NewCatalogue or
// StoredCatalogue answers the hash it computed; one made otherwise (a
// literal, whose tools' SchemaHash nobody checked) is hashed again, so a
// schema_hash a tool carries in is never taken for its contract.
func TestSchemaHashIsComputed(t *testing.T) {
	tool := Tool{Name: "a", ReadOnly: true, InputSchema: map[string]any{"type": "object"}}
	want := schemaHash(tool)
	forged := tool
	forged.SchemaHash = "sha256:" + strings.Repeat("0", 64)
	made, err := NewCatalogue([]Tool{forged})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cat  *Catalogue
	}{
		{"NewCatalogue", made},
		{"StoredCatalogue", StoredCatalogue([]Tool{forged}, made.Revision)},
		{"a literal", &Catalogue{Tools: []Tool{forged}, Revision: made.Revision}},
	} {
		if got := tc.cat.SchemaHash("a"); got != want {
			t.Errorf("%s: SchemaHash = %s, want %s", tc.name, got, want)
		}
		if got := tc.cat.ContractKeys(); len(got) != 1 || got[0] != "a "+want {
			t.Errorf("%s: ContractKeys = %v", tc.name, got)
		}
		if d := DriftOf(BaselineOf([]string{"a"}, made), tc.cat); len(d) != 0 {
			t.Errorf("%s: DriftOf its own baseline = %v", tc.name, d)
		}
		if b := BaselineOf([]string{"a", "proc__x"}, tc.cat); len(b.Tools) != 1 || !reflect.DeepEqual(b.Tools[0], ContractOf(tool)) {
			t.Errorf("%s: BaselineOf = %+v, want the tool's contract %+v", tc.name, b, ContractOf(tool))
		}
	}
}

// BenchmarkDriftOf: a version's drift under the catalogue it works with,
// as every decorated procedure computes it.
func BenchmarkDriftOf(b *testing.B) {
	cat := benchCatalogue(b)
	base := BaselineOf([]string{"tool_01", "tool_05", "tool_09"}, cat)
	b.ReportAllocs()
	for b.Loop() {
		if len(DriftOf(base, cat)) != 0 {
			b.Fatal("drift")
		}
	}
}

// BenchmarkBaselineOf: the baseline a new version is captured with.
func BenchmarkBaselineOf(b *testing.B) {
	cat := benchCatalogue(b)
	sig := []string{"tool_01", "tool_05", "tool_09"}
	b.ReportAllocs()
	for b.Loop() {
		if len(BaselineOf(sig, cat).Tools) != 3 {
			b.Fatal("baseline")
		}
	}
}

// benchCatalogue is a catalogue of 14 read-only tools, tool_00 to tool_13,
// each taking an integer task_id.
func benchCatalogue(b *testing.B) *Catalogue {
	b.Helper()
	var tools []Tool
	for i := range 14 {
		tools = append(tools, Tool{Name: fmt.Sprintf("tool_%02d", i), ReadOnly: true,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}})
	}
	cat, err := NewCatalogue(tools)
	if err != nil {
		b.Fatal(err)
	}
	return cat
}

// TestCatalogueDescriptionBound: a tool's description is bounded by
// fields.ToolDesc on every path that takes a catalogue (NewCatalogue: serve
// --tools, tools import, PUT /v1/tools, a dump): at the bound it is taken,
// a byte past it refused naming the tool; a catalogue a store read back
// (ReadCatalogue) is taken whatever its descriptions, so one stored before
// the bound stays readable and replaceable.
func TestCatalogueDescriptionBound(t *testing.T) {
	for _, c := range []struct {
		name    string
		desc    string
		read    bool
		refused bool
	}{
		{"empty", "", false, false},
		{"at the bound", strings.Repeat("d", fields.MaxToolDescBytes), false, false},
		{"a byte past the bound", strings.Repeat("d", fields.MaxToolDescBytes+1), false, true},
		{"20 KB", strings.Repeat("d", 20<<10), false, true},
		{"multi-byte past the bound", strings.Repeat("é", fields.MaxToolDescBytes/2+1), false, true},
		{"20 KB read back from a store", strings.Repeat("d", 20<<10), true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tools := []Tool{{Name: "a_tool", ReadOnly: true}, {Name: "long_tool", Description: c.desc}}
			newCat := NewCatalogue
			if c.read {
				newCat = ReadCatalogue
			}
			_, err := newCat(tools)
			switch {
			case c.refused && (fault.ErrorCode(err) != fault.CodeInvalid || !strings.Contains(err.Error(), `"long_tool"`) || !strings.Contains(err.Error(), fmt.Sprint(fields.MaxToolDescBytes))):
				t.Fatalf("%d bytes: %v; want invalid naming long_tool and the bound", len(c.desc), err)
			case !c.refused && err != nil:
				t.Fatalf("%d bytes: %v", len(c.desc), err)
			}
		})
	}
}

// TestCatalogueRoutes: a tool's server is a key and its upstream name a
// bounded line of UTF-8; neither is part of the schema hash, both of the
// revision.
func TestCatalogueRoutes(t *testing.T) {
	for _, tool := range []Tool{
		{Name: "a", Server: "bad key"},
		{Name: "a", Server: "-lead"},
		{Name: "a", Server: strings.Repeat("k", 65)},
		{Name: "a", UpstreamName: "get\nsum"},
		{Name: "a", UpstreamName: "\xff"},
		{Name: "a", UpstreamName: strings.Repeat("n", 513)},
	} {
		if _, err := NewCatalogue([]Tool{tool}); fault.ErrorCode(err) != fault.CodeInvalid {
			t.Errorf("%+v: %v, want invalid", tool, err)
		}
	}
	plain, err := NewCatalogue([]Tool{{Name: "get_sum"}})
	if err != nil {
		t.Fatal(err)
	}
	routed, err := NewCatalogue([]Tool{{Name: "get_sum", Server: "everything.v1", UpstreamName: "get-sum"}})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Tools[0].SchemaHash != routed.Tools[0].SchemaHash || plain.Revision == routed.Revision {
		t.Fatalf("hashes %s %s, revisions %s %s", plain.Tools[0].SchemaHash, routed.Tools[0].SchemaHash, plain.Revision, routed.Revision)
	}
	if routed.Tools[0].WireName() != "get-sum" || plain.Tools[0].WireName() != "get_sum" {
		t.Fatal("WireName")
	}
}
