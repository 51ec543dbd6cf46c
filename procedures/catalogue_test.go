package procedures

import (
	"sync"
	"testing"
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
