package procedures

import (
	"context"
	"sort"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graphview"
)

// maxGraphNodes bounds the nodes of a graph.
const maxGraphNodes = 500

type graphBuilder struct {
	s       *Service
	nodes   map[string]*graphview.GraphNode
	edges   map[string]graphview.GraphEdge
	order   []string
	full    bool
	visited map[string]bool
	// stored holds the procedures read from the store while building
	// (unclassified): classify reads none of them again.
	stored map[string]*Procedure
	// cat is the catalogue Service.Find read for the top procedures (no
	// start given): classify reads it again only when it is nil.
	cat *Catalogue
}

// Graph returns the neighbourhood of q's start nodes, depth hops out.
// Returns fault.CodeInvalid for a depth out of range, fault.CodeNotFound when a named
// start does not exist.
func (s *Service) Graph(ctx context.Context, q graphview.GraphQuery) (*graphview.Graph, error) {
	if q.Depth == 0 {
		q.Depth = 1
	}
	if q.Depth < 1 || q.Depth > graphview.MaxGraphDepth {
		return nil, fault.Errorf(fault.CodeInvalid, "depth must be between 1 and %d", graphview.MaxGraphDepth).WithDetails("field", "depth")
	}
	b := &graphBuilder{s: s, nodes: map[string]*graphview.GraphNode{}, edges: map[string]graphview.GraphEdge{}, visited: map[string]bool{},
		stored: map[string]*Procedure{}}
	var frontier []string
	total, next := 0, (*int)(nil)
	if len(q.Procedures)+len(q.Causes)+len(q.Tools) == 0 {
		top, n, cat, err := s.find(ctx, FindRequest{Limit: q.Limit, Offset: q.Offset})
		if err != nil {
			return nil, err
		}
		b.cat, total = cat, n
		for _, p := range top {
			frontier = append(frontier, b.procedure(p.Name, p))
		}
		if end := q.Offset + len(top); end < total {
			next = &end
		}
	} else {
		_, n, err := s.store.Find(ctx, Query{Limit: 1})
		if err != nil {
			return nil, err
		}
		total = n
	}
	for _, name := range q.Procedures {
		p, err := s.store.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		b.stored[p.Name] = p
		frontier = append(frontier, b.procedure(p.Name, nil))
	}
	for _, name := range q.Causes {
		if _, _, err := s.store.Cause(ctx, name); err != nil {
			return nil, err
		}
		frontier = append(frontier, b.node("cause", name, nil))
	}
	for _, name := range q.Tools {
		frontier = append(frontier, b.node("tool", name, nil))
	}
	for depth := 0; depth < q.Depth && len(frontier) > 0 && !b.full; depth++ {
		var next []string
		for _, id := range frontier {
			if b.visited[id] {
				continue
			}
			b.visited[id] = true
			more, err := b.expand(ctx, b.nodes[id])
			if err != nil {
				return nil, err
			}
			next = append(next, more...)
		}
		frontier = next
	}
	if err := b.classify(ctx); err != nil {
		return nil, err
	}
	g := b.result()
	g.TotalProcedures, g.NextOffset = total, next
	if ec, ok := s.store.(graphview.EdgeCounter); ok {
		calls, inv, err := ec.CountEdges(ctx)
		if err != nil {
			return nil, err
		}
		n := calls + inv
		g.TotalEdges = &n
	}
	g.Truncated = g.Truncated || next != nil
	return g, nil
}

// procedureClass is a procedure's class from its classification.
func procedureClass(p *Procedure) string {
	switch {
	case p.ReadOnly:
		return graphview.ClassReadOnly
	case len(p.UnknownTools) > 0 || p.Opaque:
		return graphview.ClassUnknown
	default:
		return graphview.ClassStateChanging
	}
}

// classify completes the nodes' properties: a procedure not listed by
// Service.Find is classified as Service.Get would (its counts and
// recomputed classification; the store's copy is not classified), in one
// view over the catalogue (the one Find read, else read now), from the
// copy read while building (else read now); every tool gets its class from the catalogue (unknown when the
// catalogue does not list it).
func (b *graphBuilder) classify(ctx context.Context) error {
	var err error
	cat := b.cat
	if cat == nil {
		if cat, err = b.s.store.Catalogue(ctx); err != nil {
			return err
		}
	}
	var procs []*Procedure
	nodes := map[*Procedure]*graphview.GraphNode{}
	for _, id := range b.order {
		n := b.nodes[id]
		switch n.Kind {
		case "procedure":
			if _, ok := n.Properties["class"]; ok {
				continue
			}
			p := b.stored[n.Label]
			if p == nil {
				p, err = b.s.store.Get(ctx, n.Label)
				if fault.ErrorCode(err) == fault.CodeNotFound {
					continue
				}
				if err != nil {
					return err
				}
			}
			procs = append(procs, p)
			nodes[p] = n
		case "tool":
			class := graphview.ClassUnknown
			if t, ok := cat.Tool(n.Label); ok {
				class = graphview.ClassStateChanging
				if t.ReadOnly {
					class = graphview.ClassReadOnly
				}
			}
			n.Properties["class"] = class
		}
	}
	if len(procs) == 0 {
		return nil
	}
	v, err := b.s.viewOf(ctx, cat, procs)
	if err != nil {
		return err
	}
	for _, p := range procs {
		v.decorate(p)
		nodes[p].Properties = procedureProps(p)
	}
	return nil
}

func procedureProps(p *Procedure) map[string]any {
	return map[string]any{"frequency": p.Frequency, "use_count": p.UseCount, "status": p.Status, "signature": p.Signature,
		"read_only": p.ReadOnly, "class": procedureClass(p)}
}

func (b *graphBuilder) expand(ctx context.Context, n *graphview.GraphNode) ([]string, error) {
	var out []string
	switch n.Kind {
	case "procedure":
		p, err := b.s.store.Get(ctx, n.Label)
		if fault.ErrorCode(err) == fault.CodeNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		b.stored[p.Name] = p
		for _, c := range p.Causes {
			id := b.node("cause", c.Name, nil)
			b.edge(id, n.ID, "INVESTIGATED_BY", c.Frequency)
			out = append(out, id)
		}
		for _, t := range p.Signature {
			id := b.node("tool", t, nil)
			b.edge(n.ID, id, "CALLS", 0)
			out = append(out, id)
		}
	case "cause":
		_, procs, err := b.s.store.Cause(ctx, n.Label)
		if err != nil {
			return nil, err
		}
		for _, cp := range procs {
			id := b.procedure(cp.Name, nil)
			b.edge(n.ID, id, "INVESTIGATED_BY", cp.Frequency)
			out = append(out, id)
		}
	case "tool":
		procs, _, err := b.s.store.Find(ctx, Query{Tools: []string{n.Label}, Limit: maxGraphNodes})
		if err != nil {
			return nil, err
		}
		for _, p := range procs {
			id := b.procedure(p.Name, nil)
			b.edge(id, n.ID, "CALLS", 0)
			out = append(out, id)
		}
	}
	return out, nil
}

func (b *graphBuilder) procedure(name string, p *Procedure) string {
	var props map[string]any
	if p != nil {
		props = procedureProps(p)
	}
	return b.node("procedure", name, props)
}

func (b *graphBuilder) node(kind, label string, props map[string]any) string {
	id := kind + ":" + label
	if n, ok := b.nodes[id]; ok {
		if len(n.Properties) == 0 {
			if props != nil {
				n.Properties = props
			}
		}
		return id
	}
	if len(b.nodes) >= maxGraphNodes {
		b.full = true
		return id
	}
	if props == nil {
		props = map[string]any{}
	}
	b.nodes[id] = &graphview.GraphNode{ID: id, Kind: kind, Label: label, Properties: props}
	b.order = append(b.order, id)
	return id
}

func (b *graphBuilder) edge(source, target, kind string, freq int64) {
	if b.nodes[source] == nil || b.nodes[target] == nil {
		return
	}
	b.edges[source+"|"+kind+"|"+target] = graphview.GraphEdge{Source: source, Target: target, Kind: kind, Frequency: freq}
}

func (b *graphBuilder) result() *graphview.Graph {
	g := &graphview.Graph{Nodes: make([]graphview.GraphNode, 0, len(b.order)), Edges: make([]graphview.GraphEdge, 0, len(b.edges)), Truncated: b.full}
	for _, id := range b.order {
		g.Nodes = append(g.Nodes, *b.nodes[id])
	}
	for _, e := range b.edges {
		g.Edges = append(g.Edges, e)
	}
	sort.Slice(g.Edges, func(i, j int) bool {
		if g.Edges[i].Source != g.Edges[j].Source {
			return g.Edges[i].Source < g.Edges[j].Source
		}
		return g.Edges[i].Target < g.Edges[j].Target
	})
	return g
}
