package procedures

import (
	"context"

	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/signature"
)

// Classified is what the current catalogue and store say about an
// analysed block (Service.ClassifyBlock): its classification, the stored
// procedures its proc__ entries name (classified, with the state of their
// grants; a missing one is absent), the binding an authorization given now
// binds it to, and the catalogue it was classified with. A prepared block
// (replay.Block) holds one.
type Classified struct {
	Class Classification
	Refs  map[string]*Procedure
	// Binding is the block as an authorization given now binds to it: its
	// hashes (the analysis's), classification, tools' schema hashes and
	// nested procedures. Everything in it was read by ClassifyBlock.
	Binding *binding.Binding
	// Catalogue is the catalogue the block was classified with: its input
	// schema is typed from it (TypedSchema), its tool calls' arguments are
	// checked against it at call time.
	Catalogue *Catalogue
	// AuthEpoch is the authorization cache's epoch when the block was
	// classified, 0 when nothing cached could be trusted then
	// (authcache.go): the gate trusts the session's policies it read under
	// that epoch only.
	AuthEpoch uint64
}

// ClassifyBlock classifies an analysed block under the current catalogue
// and store (one view: the catalogue and the procedures it reaches).
func (s *Service) ClassifyBlock(ctx context.Context, a *signature.Analysis) (*Classified, error) {
	epoch := s.authEpoch() // before what it reads: a drop meanwhile moves it past
	root := &Procedure{Signature: a.Signature}
	v, err := s.newView(ctx, []*Procedure{root})
	if err != nil {
		return nil, err
	}
	c := &Classified{Class: v.classify(a.Signature), Refs: map[string]*Procedure{}, Catalogue: v.cat, AuthEpoch: epoch}
	for _, ref := range root.procRefs() {
		if p, ok := v.procs[ref]; ok {
			cp := *p
			v.decorate(&cp)
			c.Refs[ref] = &cp
		}
	}
	c.Binding = v.bindingOf(a.CodeHash, a.StatementHash, a.Signature, c.Class)
	return c, nil
}

// BindingsNow returns, for each binding, the binding its program (fixed
// by its hashes and signature) has now: classified under the current
// catalogue and store, what Binding.Check compares an authorization
// against. A nil binding gives nil.
func (s *Service) BindingsNow(ctx context.Context, bs []*binding.Binding) ([]*binding.Binding, error) {
	roots := []*Procedure{}
	for _, b := range bs {
		if b != nil {
			roots = append(roots, &Procedure{Signature: b.Signature})
		}
	}
	v, err := s.newView(ctx, roots)
	if err != nil {
		return nil, err
	}
	out := make([]*binding.Binding, len(bs))
	for i, b := range bs {
		if b != nil {
			out[i] = v.bindingOf(b.CodeHash, b.StatementHash, b.Signature, v.classify(b.Signature))
			// The program its hashes fix is the one its key names; its
			// classification and contracts are checked as they are now.
			out[i].Program = b.Program
		}
	}
	return out, nil
}

// GrantsList returns every procedure holding a durable auto-run grant
// (Store.Granted), by name, classified (AutoRun says whether it is active).
func (s *Service) GrantsList(ctx context.Context) ([]*Procedure, error) {
	granted, err := s.store.Granted(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.newView(ctx, granted)
	if err != nil {
		return nil, err
	}
	out := []*Procedure{}
	for _, p := range granted {
		v.decorate(p)
		out = append(out, p)
	}
	return out, nil
}
