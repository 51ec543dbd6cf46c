package procedures

// Class is what Find's summary filters and the exposure rule read of a
// procedure: its current version's status and opacity, its number of tools
// and its classification. Stores keep each procedure's Class (the
// classification part as Reclassify computed it) and count procedures per
// Class, so that filtered totals are sums over classes, not scans.
type Class struct {
	Status   Status
	Opaque   bool
	Tools    int  // distinct names in the signature (signatures are de-duplicated)
	ReadOnly bool // Classification.ReadOnly
	Problem  bool // Classification.Problem is set (a cycle, a nesting too deep, a retired callee)
	Retired  bool // an admin retired it (Procedure.Retired)
	Demoted  bool // its current version's failures demoted it (Procedure.Demoted)
}

// ClassOf is the Class of a procedure with that current status and opacity,
// signature, classification, retirement and demotion.
func ClassOf(status Status, opaque bool, signature []string, c Classification, retired, demoted bool) Class {
	return Class{Status: status, Opaque: opaque, Tools: len(signature), ReadOnly: c.ReadOnly, Problem: c.Problem != "", Retired: retired, Demoted: demoted}
}

// Exposed is docs/design.md's exposure rule, its one implementation: a procedure
// is offered to planners as a proc__ tool iff it succeeded, is not opaque,
// composes at least two distinct tools, has no nesting problem, is not
// retired or demoted, and is read-only unless mutating auto-run is on.
func (c Class) exposed(allowMutating bool) bool {
	return c.Status == StatusSucceeded && !c.Opaque && c.Tools >= 2 && !c.Problem && !c.Retired && !c.Demoted && (c.ReadOnly || allowMutating)
}

// noneExposedWith reports whether no procedure whose signature holds every
// name of signature can be exposed under cat: with mutating auto-run off,
// when one of its tools (not a nested proc__ name) is unknown to cat or
// state-changing, since every such procedure then holds it and is not
// read-only (Classify), and Exposed asks read-only. Suggest then reads no
// page.
func noneExposedWith(signature []string, cat *Catalogue, allowMutating bool) bool {
	if allowMutating || cat == nil {
		return false
	}
	for _, name := range signature {
		if IsProcName(name) {
			continue
		}
		if t, ok := cat.Tool(name); !ok || !t.ReadOnly {
			return true
		}
	}
	return false
}

// ClassReader is what Reclassify reads, inside a store's write transaction
// (so that what it computes is consistent with what the transaction writes).
type ClassReader interface {
	// Catalogue returns the stored catalogue.
	Catalogue() (*Catalogue, error)
	// Procedures returns what classification reads of the stored
	// procedures among names: signature and retirement.
	Procedures(names []string) (map[string]Nested, error)
	// Callers returns the stored procedures whose signature holds any of names.
	Callers(names []string) ([]string, error)
}

// Nested is what Reclassify reads of a stored procedure.
type Nested struct {
	Signature []string
	Retired   bool // Procedure.Retired is set: its callers get Problem ReasonCallsRetired
}

// Affected returns the stored procedures whose classification may change
// when names change (procedures created or removed, tools whose catalogue
// entry changed): every procedure that reaches one of them within the depth
// Classify looks at, sorted by first discovery. names themselves are not
// included unless they are reached.
func Affected(r ClassReader, names []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	frontier := names
	// Classify looks a name up at nesting depths 0..MaxNesting of a
	// signature: callers up to MaxNesting+1 levels above it.
	for level := 0; level <= MaxNesting && len(frontier) > 0; level++ {
		callers, err := r.Callers(frontier)
		if err != nil {
			return nil, err
		}
		frontier = frontier[:0:0]
		for _, c := range callers {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				frontier = append(frontier, c)
			}
		}
	}
	return out, nil
}

// Reclassify classifies the stored procedures among names with the reader's
// catalogue and procedures: the classifications a store keeps. It loads the
// nested procedures Classify needs, level by level.
func Reclassify(r ClassReader, names []string) (map[string]Classification, error) {
	out := map[string]Classification{}
	if len(names) == 0 {
		return out, nil
	}
	cat, err := r.Catalogue()
	if err != nil {
		return nil, err
	}
	procs := map[string]*Procedure{}
	want := names
	for level := 0; level <= MaxNesting+1 && len(want) > 0; level++ {
		stored, err := r.Procedures(want)
		if err != nil {
			return nil, err
		}
		var next []string
		queued := map[string]bool{}
		for _, name := range want {
			n, ok := stored[name]
			if !ok {
				continue
			}
			procs[name] = &Procedure{Name: name, Signature: n.Signature}
			if n.Retired {
				procs[name].Retired = &Retirement{}
			}
			for _, ref := range n.Signature {
				if _, have := procs[ref]; IsProcName(ref) && !have && !queued[ref] {
					queued[ref] = true
					next = append(next, ref)
				}
			}
		}
		want = next
	}
	for _, name := range names {
		if p, ok := procs[name]; ok {
			out[name] = Classify(p.Signature, cat, procs)
		}
	}
	return out, nil
}

// ChangedTools returns the tools whose part in classification differs
// between two catalogues (added, removed, or read-only changed), sorted: a
// catalogue change reclassifies their Affected callers.
func ChangedTools(old, cur *Catalogue) []string {
	changed := map[string]bool{}
	for _, c := range [2]*Catalogue{old, cur} {
		if c == nil {
			continue
		}
		for _, t := range c.Tools {
			a, inOld := old.Tool(t.Name)
			b, inCur := cur.Tool(t.Name)
			if inOld != inCur || a.ReadOnly != b.ReadOnly {
				changed[t.Name] = true
			}
		}
	}
	return sortedKeys(changed)
}
