package procedures

import (
	"context"

	"github.com/procgraph/procgraph/signature"
)

// Block is what the current catalogue and store say about a block an agent
// submits: its classification, the stored procedures its proc__ entries
// name (classified, with the state of their grants; a missing one is
// absent), and its input schema typed from the catalogue (TypedSchema).
type Block struct {
	Class       Classification
	Refs        map[string]*Procedure
	InputSchema map[string]any
	// Binding is the block as an authorization given now binds to it: its
	// hashes (the analysis's), classification, tools' schema hashes and
	// nested procedures. Everything in it was read by ClassifyBlock.
	Binding *Binding
	// Catalogue is the catalogue the block was classified with: its tool
	// calls' arguments are checked against it at call time.
	Catalogue *Catalogue
}

// ClassifyBlock classifies an analysed block under the current catalogue.
func (s *Service) ClassifyBlock(ctx context.Context, a *signature.Analysis) (*Block, error) {
	root := &Procedure{Signature: a.Signature}
	v, err := s.newView(ctx, []*Procedure{root})
	if err != nil {
		return nil, err
	}
	b := &Block{Class: v.classify(a.Signature), Refs: map[string]*Procedure{}, Catalogue: v.cat}
	for _, ref := range root.ProcRefs() {
		if p, ok := v.procs[ref]; ok {
			cp := *p
			v.decorate(&cp)
			b.Refs[ref] = &cp
		}
	}
	b.InputSchema, _ = TypedSchema(nil, a.Parameters, a.Flows, v.cat)
	b.Binding = v.bindingOf(a.CodeHash, a.StatementHash, a.Signature, b.Class)
	return b, nil
}

// BindingsNow returns, for each binding, the binding its program (fixed
// by its hashes and signature) has now: classified under the current
// catalogue and store, what Binding.Check compares an authorization
// against. A nil binding gives nil.
func (s *Service) BindingsNow(ctx context.Context, bs []*Binding) ([]*Binding, error) {
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
	out := make([]*Binding, len(bs))
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
