package embedded

import (
	"slices"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestClassKeyRoundTrips: every procedures.Class (storetest.Classes, built
// from the struct's fields) has its own classes-bucket key, and the key
// decodes to the class.
func TestClassKeyRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range storetest.Classes() {
		k := classKey(c)
		if got, ok := decodeClassKey(k); !ok || got != c {
			t.Fatalf("decodeClassKey(classKey(%+v)) = %+v, %v", c, got, ok)
		}
		if seen[string(k)] {
			t.Fatalf("class %+v shares its key %x with another class", c, k)
		}
		seen[string(k)] = true
	}
}

// classBit is the bit of the Class field name in a class key's flags byte.
func classBit(name string) byte {
	for i, b := range classBits {
		if b.Name == name {
			return 1 << i
		}
	}
	panic("no class bit " + name)
}

// TestClassFieldsFitTheKey: embeddedClassFields refuses a table whose
// flags outgrow the flags byte, or with a count a rank summary cannot hold.
func TestClassFieldsFitTheKey(t *testing.T) {
	flag := procedures.ClassField{Flag: func(c *procedures.Class) *bool { return &c.Opaque }}
	tools := procedures.ClassField{Name: "Tools", Count: func(c *procedures.Class) *int { return &c.Tools }}
	for name, fields := range map[string][]procedures.ClassField{
		"nine flags": append(slices.Repeat([]procedures.ClassField{flag}, 9), tools),
		"two counts": {flag, tools, tools},
		"no tools":   {flag},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: embeddedClassFields accepted it", name)
				}
			}()
			embeddedClassFields(fields)
		}()
	}
	if bits, counts := embeddedClassFields(append(slices.Repeat([]procedures.ClassField{flag}, 8), tools)); len(bits) != 8 || len(counts) != 1 {
		t.Errorf("eight flags and the tools: %d bits, %d counts", len(bits), len(counts))
	}
}
