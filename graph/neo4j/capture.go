package neo4j

import (
	"context"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// Capture records one capture: capture.cypher, which also returns the
// procedure as it now is. A new procedure is classified in the same
// transaction. When its signature names no procedure, the classification
// is computed first from the catalogue the store holds (heldClass) and the
// capture is one statement alone in its transaction (query: two round
// trips); the statement applies the classification only if the stored
// catalogue is still that one and nothing calls the new procedure, and
// returns no row otherwise; then the store reads the stored catalogue and,
// when another instance changed it, tries once more with it. When it did
// not, and for other signatures, the capture is
// a transaction function: the statement creates the procedure unclassified
// and returns its callers, and the procedure and its callers are classified
// (see reclassify) under the catalogue lock the statement took. The first
// takes one stripe of that lock only (catalogueStripe), so new procedures
// whose signatures name no procedure do not wait for each other; the
// second takes all of it (docs/adr/0036).
func (s *Store) Capture(ctx context.Context, in procedures.CaptureInput) (res procedures.CaptureResult, err error) {
	params, err := captureParams(in)
	if err != nil {
		return procedures.CaptureResult{}, err
	}
	page, err := s.pageParams(in.Page, params)
	if err != nil {
		return procedures.CaptureResult{}, err
	}
	var searched bool
	defer func() {
		// A failure may follow a commit whose answer was lost: then the
		// next search waits for the index too.
		if searched || err != nil {
			s.searchFresh.wrote()
		}
	}()
	for attempt := 1; attempt <= 2; attempt++ {
		class, held, ok, err := s.heldClass(ctx, in)
		if err != nil {
			return procedures.CaptureResult{}, err
		}
		if !ok {
			break
		}
		params["class"] = class
		recs, err := query(ctx, s, "capture", neo4j.AccessModeWrite, "capture", params)
		if err != nil {
			return procedures.CaptureResult{}, err
		}
		if len(recs) > 1 {
			return procedures.CaptureResult{}, s.mapError("capture", errRows("capture", len(recs)))
		}
		if len(recs) == 1 {
			searched = field(recs[0], "searched") == true
			res, err := s.captureResult(recs[0], page)
			return res, s.mapError("capture", err)
		}
		// No row: the classification or the capture's catalogue was
		// stale, the new procedure has callers, or another signature
		// holds the name. A catalogue put since is read, so that this
		// capture and the next ones classify with it; a capture prepared
		// under another answers that it changed; with the same
		// catalogue, the transaction below answers.
		if attempt == 1 {
			cat, err := s.Catalogue(ctx)
			if err != nil {
				return procedures.CaptureResult{}, err
			}
			if in.Catalogue != nil && cat.Revision != in.Catalogue.Revision {
				return procedures.CaptureResult{}, procedures.CatalogueChanged()
			}
			if cat.Revision == held.Revision {
				break
			}
		}
	}
	params["class"] = nil
	return writeTx(ctx, s, "capture", func(ctx context.Context, tx neo4j.ManagedTransaction) (procedures.CaptureResult, error) {
		searched = false
		recs, err := collect(ctx, tx, "capture", params)
		if err != nil {
			return procedures.CaptureResult{}, err
		}
		if len(recs) == 0 {
			return procedures.CaptureResult{}, noCapture(ctx, tx, in)
		}
		if len(recs) != 1 {
			return procedures.CaptureResult{}, errRows("capture", len(recs))
		}
		searched = field(recs[0], "searched") == true
		res, err := s.captureResult(recs[0], page)
		if err != nil || !res.Created {
			return res, err
		}
		// capture.cypher took the catalogue lock and found the callers.
		r := newProcedure{txClasses: txClasses{ctx, tx}, name: in.Name, signature: in.Signature}
		for _, c := range asList(field(recs[0], "callers")) {
			if n, ok := c.(string); ok {
				r.callers = append(r.callers, n)
			}
		}
		affected, err := procedures.Affected(r, []string{in.Name})
		if err != nil {
			return procedures.CaptureResult{}, err
		}
		// The kept classification is not part of what the statement
		// returned, so that is the procedure as it now is.
		return res, reclassifyWith(ctx, tx, r, append([]string{in.Name}, affected...))
	})
}

// noCapture is why capture.cypher, run in tx with $class null, returned
// no row: the catalogue the capture was prepared under is no longer the
// stored one (procedures.CatalogueChanged), else a procedure of another
// signature holds the name.
func noCapture(ctx context.Context, tx neo4j.ManagedTransaction, in procedures.CaptureInput) error {
	if in.Catalogue != nil {
		recs, err := collect(ctx, tx, "catalogue_since", map[string]any{"known_catalogue": in.Catalogue.Revision})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return errRows("catalogue_since", len(recs))
		}
		rev, _ := field(recs[0], "revision").(string)
		if !sameCatalogue(in.Catalogue, rev) {
			return procedures.CatalogueChanged()
		}
	}
	return signatureMismatch(in)
}

// captureResult decodes the row of capture.cypher, with the page of the
// Find q it read first (nil: none asked).
func (c *jsonCaches) captureResult(rec *neo4j.Record, q *procedures.Query) (procedures.CaptureResult, error) {
	res := procedures.CaptureResult{
		Created:        field(rec, "created") == true,
		VersionCreated: field(rec, "versionCreated") == true,
		Counted:        field(rec, "counted") == true,
	}
	res.CodeHash, _ = field(rec, "codeHash").(string)
	var err error
	if res.Procedure, err = c.decodeProcedure(field(rec, "procedure")); err != nil {
		return res, err
	}
	res.Page, res.PageTotal, res.PageRead, err = c.capturePage(rec, q)
	return res, err
}

// capturePage decodes the page capture.cypher read for the Find q
// (fragments/filtered_page) and its total; read is false when none was
// asked, or when it met classes the store has not read (the service then
// reads the page, and the store the classes, with Find).
func (c *jsonCaches) capturePage(rec *neo4j.Record, q *procedures.Query) (ps []*procedures.Procedure, total int, read bool, err error) {
	pages := asList(field(rec, "pages"))
	if q == nil || len(pages) != 1 {
		return nil, 0, false, nil
	}
	row, _ := pages[0].(map[string]any)
	if len(asList(row["unknown"])) > 0 {
		return nil, 0, false, nil
	}
	list := asList(row["procedures"])
	ps = make([]*procedures.Procedure, 0, len(list))
	for _, v := range list {
		p, err := c.decodeProcedure(v)
		if err != nil {
			return nil, 0, false, err
		}
		ps = append(ps, p)
	}
	return ps, pageTotal(*q, len(ps), row["complete"] == true), true, nil
}

// pageParams sets capture.cypher's parameters of the page it reads first
// (fragments/filtered_page's, $page) for the Find q, a Bounded one
// (procedures.CaptureInput.Page), and returns the query read: nil when q
// is nil, or when the store has not read the classes yet (the service
// then reads the page with Find, which reads them).
func (s *Store) pageParams(q *procedures.Query, params map[string]any) (*procedures.Query, error) {
	classes := s.classes.get()
	if q != nil && !q.Bounded {
		return nil, invalid("page", "a capture reads a Bounded page only")
	}
	if q == nil || q.Summarised() && classes == nil {
		for k, v := range map[string]any{"page": false, "tools": []string{}, "causes": []string{}, "classes": nil, "known": []string{},
			"offset": 0, "limit": 0, "walk": 0, "bounded": true, "boundedCallers": 0} {
			params[k] = v
		}
		return nil, nil
	}
	fp, err := findParams(*q)
	if err != nil {
		return nil, err
	}
	for k, v := range fp {
		params[k] = v
	}
	params["page"], params["known"] = true, []string{}
	if q.Summarised() {
		params["classes"], params["known"] = selectClasses(classes, *q)
	}
	return q, nil
}

// heldClass returns the classification capture.cypher gives the procedure
// of in if the capture creates it, computed (procedures.Reclassify) with
// the catalogue the capture was prepared under (in.Catalogue), else the
// one the store holds (read when it holds none), and that catalogue, as the
// statement's $class parameter: the revisions the catalogue node reads as
// when it is that catalogue (storedRevisions), read_only and problem. ok is false for a signature that names a procedure: its
// classification depends on stored procedures, read in the transaction.
func (s *Store) heldClass(ctx context.Context, in procedures.CaptureInput) (class map[string]any, cat *procedures.Catalogue, ok bool, err error) {
	if slices.ContainsFunc(in.Signature, procedures.IsProcName) {
		return nil, nil, false, nil
	}
	if cat = in.Catalogue; cat == nil {
		if cat, err = s.heldCatalogue(ctx); err != nil {
			return nil, nil, false, err
		}
	}
	cs, err := procedures.Reclassify(heldClasses{cat: cat, name: in.Name, signature: in.Signature}, []string{in.Name})
	if err != nil {
		return nil, nil, false, err
	}
	c := cs[in.Name]
	return map[string]any{"revisions": stringList(storedRevisions(cat)), "read_only": c.ReadOnly, "problem": c.Problem}, cat, true, nil
}

// heldClasses answers what classifying a new procedure whose signature
// names no procedure asks: the catalogue the store holds, and its own
// signature. capture.cypher checks that nothing calls it.
type heldClasses struct {
	cat       *procedures.Catalogue
	name      string
	signature []string
}

func (r heldClasses) Catalogue() (*procedures.Catalogue, error) { return r.cat, nil }

func (r heldClasses) Procedures(names []string) (map[string]procedures.Nested, error) {
	out := map[string]procedures.Nested{}
	if slices.Contains(names, r.name) {
		out[r.name] = procedures.Nested{Signature: r.signature}
	}
	return out, nil
}

func (r heldClasses) Callers([]string) ([]string, error) { return nil, nil }

func captureParams(in procedures.CaptureInput) (map[string]any, error) {
	v := in.Version
	switch {
	case in.Name == "":
		return nil, invalid("name", "a capture needs a procedure name")
	case len(in.Signature) == 0:
		return nil, invalid("signature", "a capture needs a non-empty signature")
	case v.CodeHash == "" || strings.Contains(v.CodeHash, "|"):
		return nil, invalid("code_hash", "a capture needs a code hash without '|'")
	case strings.Contains(v.CanonicalHash, "|"):
		return nil, invalid("canonical_hash", "a canonical hash has no '|'")
	case !v.Status.Valid():
		return nil, invalid("status", "status %q is not succeeded or failed", v.Status)
	case in.UsageKey == "":
		return nil, invalid("usage_key", "a capture needs a usage key")
	case in.At.IsZero():
		return nil, invalid("at", "a capture needs a time")
	case in.Cause != nil && strings.TrimSpace(in.Cause.Name) == "":
		return nil, invalid("cause.name", "a cause needs a name")
	}
	schema, meta, warnings, err := versionJSON(v.InputSchema, v.Metadata, v.Warnings)
	if err != nil {
		return nil, err
	}
	capturedAt := v.CapturedAt
	if capturedAt.IsZero() {
		capturedAt = in.At
	}
	var cause, causeDesc any
	if in.Cause != nil {
		cause, causeDesc = in.Cause.Name, in.Cause.Description
	} else {
		causeDesc = ""
	}
	return map[string]any{
		"name":             in.Name,
		"signature":        in.Signature,
		"baselineTools":    baselineTools(in.Signature),
		"at":               dbTime(in.At),
		"versionId":        versionID(in.Name, v.CodeHash),
		"hash":             v.CodeHash,
		"canonical":        nilIfEmpty(v.CanonicalHash),
		"code":             v.Code,
		"dialect":          v.Dialect,
		"parameters":       stringList(v.Parameters),
		"inputSchema":      schema,
		"opaque":           v.Opaque,
		"warnings":         warnings,
		"summary":          v.Summary,
		"metadata":         meta,
		"capturedAt":       dbTime(capturedAt),
		"status":           string(v.Status),
		"succeeded":        v.Status == procedures.StatusSucceeded,
		"key":              in.UsageKey,
		"cause":            cause,
		"causeDescription": causeDesc,
		"parts":            stringList(search.MergeParts(nil, procedures.SearchParts(in))),
		"max":              search.MaxParts,
		"catalogue":        catalogueParam(in.Catalogue),
		"stripe":           catalogueStripe(in.Name),
		"stripes":          catalogueStripes,
	}, nil
}

// catalogueParam is capture.cypher's $catalogue: the revisions the
// catalogue node reads as when cat is the stored catalogue, nil (nothing
// checked) for no catalogue.
func catalogueParam(cat *procedures.Catalogue) any {
	if cat == nil {
		return nil
	}
	return stringList(storedRevisions(cat))
}

// versionID is the key of a ProcedureVersion: unambiguous because code
// hashes hold no '|'.
func versionID(name, hash string) string { return name + "|" + hash }

// RecordUse counts a use of an existing procedure in one statement
// (use.cypher; a run that counts in the health only, use_health.cypher),
// which also returns the
// procedure as it now is.
func (s *Store) RecordUse(ctx context.Context, in procedures.UseInput) (procedures.UseResult, error) {
	statement, params, err := useStatement(in)
	if err != nil {
		return procedures.UseResult{}, err
	}
	recs, err := query(ctx, s, "record use", neo4j.AccessModeWrite, statement, params)
	if err != nil {
		return procedures.UseResult{}, err
	}
	if len(recs) == 0 {
		if in.CodeHash != "" {
			return procedures.UseResult{}, fault.Errorf(fault.CodeNotFound, "procedure %q has no version %q", in.Name, in.CodeHash)
		}
		return procedures.UseResult{}, notFound(in.Name)
	}
	res, err := s.useResult(recs[0])
	if err != nil {
		return procedures.UseResult{}, s.mapError("record use", err)
	}
	return res, nil
}

// useStatement checks in and returns the statement that counts it
// (use.cypher, or use_health.cypher for a run that counts in the health
// only) and its parameters.
func useStatement(in procedures.UseInput) (string, map[string]any, error) {
	var healthParam any
	if in.Run != nil {
		d, ok := in.Run.Delta()
		if !ok {
			return "", nil, invalid("run", "run failure class %q is not one of %v", in.Run.Failure, health.FailureClasses)
		}
		healthParam = map[string]any{"keep": d.Keep, "add": d.Add, "floor": d.Floor}
	}
	switch {
	case in.Name == "":
		return "", nil, invalid("name", "a use needs a procedure name")
	case in.UsageKey == "":
		return "", nil, invalid("usage_key", "a use needs a usage key")
	case in.At.IsZero():
		return "", nil, invalid("at", "a use needs a time")
	case in.FailedReplay():
		return "", nil, invalid("run", "a failed run is not a replay")
	}
	if err := health.CheckDemoteAfter(in.DemoteAfter); err != nil {
		return "", nil, invalid("demote_after", "%v", err)
	}
	if err := in.CheckRecording(); err != nil {
		return "", nil, err
	}
	recording, err := recordingParams(in)
	if err != nil {
		return "", nil, err
	}
	params := map[string]any{
		"name":      in.Name,
		"hash":      nilIfEmpty(in.CodeHash),
		"health":    healthParam,
		"demote":    procedures.DemoteParams(in),
		"recording": recording,
	}
	statement := "use_health"
	if !in.HealthOnly() {
		statement = "use"
		params["key"], params["replay"], params["at"] = in.UsageKey, in.Replay, dbTime(in.At)
		params["cause"] = nilIfEmpty(strings.TrimSpace(in.Cause))
	}
	return statement, params, nil
}

// useResult decodes the row of a use's statement.
func (s *Store) useResult(rec *neo4j.Record) (procedures.UseResult, error) {
	res := procedures.UseResult{Counted: field(rec, "counted") == true}
	var err error
	if res.Procedure, err = s.decodeProcedure(field(rec, "procedure")); err != nil {
		return procedures.UseResult{}, err
	}
	res.Demotion = health.DemotionOf(field(rec, "wasDemoted") == true, res.Procedure.Demoted)
	return res, nil
}

// RecordRun commits what a run left in one write transaction (see
// procedures.Store) of one statement when it has at most one use: its
// audit records and its first use together (run_use.cypher,
// run_use_health.cypher; run_audit.cypher without a use), each further
// use a statement of its own (use.cypher, use_health.cypher). A conflict
// or an unknown record the statement reports rolls it all back.
func (s *Store) RecordRun(ctx context.Context, rr procedures.RunRecord) ([]procedures.UseResult, error) {
	run, err := runStatements(rr)
	if err != nil {
		return nil, err
	}
	if len(run.uses) <= 1 {
		// One statement: sent with BEGIN, committed unless its records
		// conflict (queryChecked: two round trips, not three).
		out := make([]procedures.UseResult, len(run.uses))
		err := queryChecked(ctx, s, "record run", run.first.name, run.first.params, func(recs []*neo4j.Record) error {
			return s.runFirst(recs, run, out)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return writeTx(ctx, s, "record run", func(ctx context.Context, tx neo4j.ManagedTransaction) ([]procedures.UseResult, error) {
		return s.recordRun(ctx, tx, run)
	})
}

// statement is one statement to run and its parameters.
type statement struct {
	name   string
	params map[string]any
}

// runWrite is what a run left as the statements RecordRun runs: the
// first carries the run's audit records (run_use, run_use_health,
// run_audit), each other a further use.
type runWrite struct {
	results []procedures.DecisionResult
	first   statement
	uses    []statement // the first is first's use, when it has one
}

// runStatements checks rr and returns its statements.
func runStatements(rr procedures.RunRecord) (runWrite, error) {
	if err := rr.CheckResults(); err != nil {
		return runWrite{}, err
	}
	decisions := make([]any, len(rr.Decisions))
	for i, d := range rr.Decisions {
		dp, err := decisionParams(d)
		if err != nil {
			return runWrite{}, err
		}
		decisions[i] = dp
	}
	results := make([]any, len(rr.Results))
	for i, r := range rr.Results {
		results[i] = map[string]any{"id": r.ID, "result": r.Result}
	}
	w := runWrite{results: rr.Results, uses: make([]statement, len(rr.Uses))}
	for i, in := range rr.Uses {
		st, params, err := useStatement(in)
		if err != nil {
			return runWrite{}, err
		}
		w.uses[i] = statement{st, params}
	}
	w.first = statement{"run_audit", map[string]any{}}
	if len(w.uses) > 0 {
		w.first = statement{"run_" + w.uses[0].name, w.uses[0].params}
	}
	w.first.params["decisions"], w.first.params["results"] = decisions, results
	return w, nil
}

// recordRun runs w in tx: RecordRun's transaction.
func (s *Store) recordRun(ctx context.Context, tx neo4j.ManagedTransaction, w runWrite) ([]procedures.UseResult, error) {
	out := make([]procedures.UseResult, len(w.uses))
	recs, err := collect(ctx, tx, w.first.name, w.first.params)
	if err != nil {
		return nil, err
	}
	if err := s.runFirst(recs, w, out); err != nil {
		return nil, err
	}
	for i := 1; i < len(w.uses); i++ {
		u := w.uses[i]
		if recs, err = collect(ctx, tx, u.name, u.params); err != nil {
			return nil, err
		}
		if len(recs) == 0 || field(recs[0], "procedure") == nil {
			continue // an unknown procedure or version: this use wrote nothing
		}
		if out[i], err = s.useResult(recs[0]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runFirst reads the records of w's first statement into out: an error
// when the run's audit records conflict (the transaction must roll back),
// and its first use's result when it has one.
func (s *Store) runFirst(recs []*neo4j.Record, w runWrite, out []procedures.UseResult) error {
	if len(recs) != 1 {
		return errRows(w.first.name, len(recs))
	}
	if err := audited(recs[0], w.results); err != nil {
		return err
	}
	if len(w.uses) == 0 || field(recs[0], "procedure") == nil {
		return nil // no use, or an unknown procedure or version: it wrote nothing
	}
	var err error
	out[0], err = s.useResult(recs[0])
	return err
}

// audited reads run_audit's conflicts and results (the fragment's): a
// record another record holds is CodeConflict, a result for an unknown
// record CodeNotFound, another result than want's CodeConflict.
func audited(rec *neo4j.Record, want []procedures.DecisionResult) error {
	r := &row{m: rec.AsMap()}
	if ids := r.strings("conflicts"); len(ids) > 0 {
		return fault.Errorf(fault.CodeConflict, "decision %s already exists", ids[0])
	}
	got := r.list("results")
	if r.err != nil {
		return r.err
	}
	if len(got) != len(want) {
		return errRows("run_audit results", len(got))
	}
	for i, g := range got {
		x := &row{m: asMap(g)}
		found, result := x.bool("found"), x.str("result")
		switch {
		case x.err != nil:
			return x.err
		case !found:
			return fault.Errorf(fault.CodeNotFound, "no decision %s", want[i].ID)
		case result != want[i].Result:
			return fault.Errorf(fault.CodeConflict, "decision %s already has the result %s", want[i].ID, result)
		}
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func invalid(field, format string, args ...any) error {
	return fault.Errorf(fault.CodeInvalid, format, args...).WithDetails("field", field)
}

// signatureMismatch is the answer to a capture under a name that a procedure
// of another signature holds.
func signatureMismatch(in procedures.CaptureInput) error {
	return fault.Errorf(fault.CodeConflict, "procedure %s is stored with another signature than %v", in.Name, in.Signature).
		WithDetails("reason", audit.ReasonSignatureMismatch)
}

func notFound(name string) error {
	return fault.Errorf(fault.CodeNotFound, "no procedure named %q", name)
}

// newProcedure answers what classifying a procedure just created asks about
// it from what capture.cypher returned (its callers) and from the capture
// (its signature; it is not retired), and the rest inside the transaction.
type newProcedure struct {
	txClasses
	name      string
	signature []string
	callers   []string
}

func (r newProcedure) Callers(names []string) ([]string, error) {
	if len(names) == 1 && names[0] == r.name {
		return r.callers, nil
	}
	return r.txClasses.Callers(names)
}

func (r newProcedure) Procedures(names []string) (map[string]procedures.Nested, error) {
	var rest []string
	for _, n := range names {
		if n != r.name {
			rest = append(rest, n)
		}
	}
	out := map[string]procedures.Nested{}
	if len(rest) > 0 {
		var err error
		if out, err = r.txClasses.Procedures(rest); err != nil {
			return nil, err
		}
	}
	if len(rest) < len(names) {
		out[r.name] = procedures.Nested{Signature: r.signature}
	}
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// versionJSON encodes a version's JSON-valued properties as stored: input schema,
// metadata, and warnings (nil when there are none).
func versionJSON(inputSchema, metadata map[string]any, ws []procedures.Warning) (schema, meta, warnings any, err error) {
	if schema, err = jsonString(inputSchema); err != nil {
		return nil, nil, nil, invalid("input_schema", "input schema is not JSON")
	}
	if meta, err = jsonString(metadata); err != nil {
		return nil, nil, nil, invalid("metadata", "metadata is not JSON")
	}
	if len(ws) > 0 {
		if warnings, err = jsonString(ws); err != nil {
			return nil, nil, nil, invalid("warnings", "warnings are not JSON")
		}
	}
	return schema, meta, warnings, nil
}

// baselineTools is the sorted catalogue-tool names of signature (no proc__
// names): the tools a new version's baseline has contracts for
// (fragments/baseline_tools.cypher).
func baselineTools(signature []string) []string {
	out := make([]string, 0, len(signature))
	for _, n := range signature {
		if !procedures.IsProcName(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
