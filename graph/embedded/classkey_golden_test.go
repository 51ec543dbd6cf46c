package embedded

import (
	"encoding/hex"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// classKeyGolden pins the classes-bucket key (and so a summary's flags
// byte) of a few classes as stored files hold them: a key that changed
// would orphan every stored class count. Literal, not regenerated.
var classKeyGolden = []struct {
	class procedures.Class
	hex   string
}{
	{procedures.Class{Status: procedures.StatusFailed}, "0000"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 2, ReadOnly: true}, "0502"},
	{procedures.Class{Status: procedures.StatusFailed, Opaque: true, Tools: 1}, "0201"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 3, Problem: true, Retired: true}, "1903"},
	{procedures.Class{Status: procedures.StatusSucceeded, Tools: 200, ReadOnly: true, Demoted: true}, "25c801"},
	{procedures.Class{Status: procedures.StatusSucceeded, Opaque: true, Tools: 5, ReadOnly: true, Problem: true, Retired: true, Demoted: true}, "3f05"},
}

// TestClassKeyGolden: classKey encodes the pinned classes as stored files
// hold them, and decodeClassKey reads them back.
func TestClassKeyGolden(t *testing.T) {
	for _, g := range classKeyGolden {
		if got := hex.EncodeToString(classKey(g.class)); got != g.hex {
			t.Errorf("classKey(%+v) = %s, stored files hold %s", g.class, got, g.hex)
		}
		k, _ := hex.DecodeString(g.hex)
		if got, ok := decodeClassKey(k); !ok || got != g.class {
			t.Errorf("decodeClassKey(%s) = %+v, %v, want %+v", g.hex, got, ok, g.class)
		}
		if got := hex.EncodeToString(encodeSummary(g.class, nil)[:1]); got != g.hex[:2] {
			t.Errorf("summary flags of %+v = %s, stored files hold %s", g.class, got, g.hex[:2])
		}
	}
}
