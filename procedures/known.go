package procedures

import (
	"github.com/procgraph/procgraph/internal/cache"
)

// knownProcedures is what this service read or wrote last of each
// procedure, as the store answered it (undecorated): what a grant or a
// revoke prepares its write with instead of reading first, and what tells
// a capture whether its procedure was exposed (ADR 0047). Nothing relies
// on an entry being current: every write prepared from one checks, in its
// own statement, the current code hash and the catalogue it was prepared
// under, and a stale entry costs the read it saved. Bounded by the bytes
// of code and signature it keeps.
type knownProcedures struct {
	m *cache.Cache[string, *Procedure]
}

// maxKnownBytes bounds the code and signatures knownProcedures keeps.
const maxKnownBytes = 8 << 20

// newKnownProcedures returns an empty knownProcedures.
func newKnownProcedures() *knownProcedures {
	return &knownProcedures{m: cache.NewWeighted(maxKnownBytes, func(name string, p *Procedure) int {
		n := len(name) + len(p.Code) + len(p.Summary) + 256
		for _, s := range p.Signature {
			n += len(s)
		}
		return n
	})}
}

// remember keeps p, as the store answered it (before decorate: decorate
// writes only p's own fields, so the copy kept is unchanged by it).
func (k *knownProcedures) remember(p *Procedure) {
	if p == nil || p.Name == "" {
		return
	}
	cp := *p
	k.m.Add(p.Name, &cp)
}

// get is a copy of what was kept of procedure name (nil when nothing),
// to decorate.
func (k *knownProcedures) get(name string) *Procedure {
	p, ok := k.m.Get(name)
	if !ok {
		return nil
	}
	cp := *p
	return &cp
}
