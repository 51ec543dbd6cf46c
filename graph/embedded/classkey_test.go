package embedded

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
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
