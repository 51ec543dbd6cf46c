package procedures

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/reuse"
	"github.com/procgraph/procgraph/schemas"
	"github.com/procgraph/procgraph/signature"
	"github.com/procgraph/procgraph/usage"
)

// CaptureRequest is one capture as a client sends it.
type CaptureRequest struct {
	Code           string
	Dialect        string
	Summary        string
	Cause          *CauseInput
	SessionID      string
	IdempotencyKey string
	Status         Status
	ParamsSchema   map[string]any
	Metadata       map[string]any
	// NoLift keeps the code as written ("lift": false): no literal is
	// lifted into a parameter (lift.go).
	NoLift bool
}

// CaptureOutcome is what a capture did. Use is true when the block was a
// single proc__X call: Procedure is then X, and the capture counted a use.
type CaptureOutcome struct {
	Procedure *Procedure
	// CodeHash is the version the code was stored as (lifted, when
	// something was); "" for a use.
	CodeHash string
	// Version names the version the capture stored (nil for a use): the
	// procedure's current version may be another.
	Version        *CapturedVersion
	Created        bool
	VersionCreated bool
	Counted        bool
	Use            bool
	// Suggestion names an exposed procedure to call instead of this code
	// (Suggest), nil when none; a capture that created the procedure is
	// never told to call itself.
	Suggestion *reuse.Suggestion
	// Lifted lists the literals lifted into parameters (empty when none);
	// Warnings say why literals that could have been were not. Their
	// positions are in the code as sent.
	Lifted   []Lifted
	Warnings []Warning
}

// CapturedVersion names the version a capture stored (the capture answer's
// "version"): its code hash, whether it is the procedure's current version
// after the capture, whether the capture created it, and its parameters.
type CapturedVersion struct {
	CodeHash   string   `json:"code_hash"`
	Current    bool     `json:"current"`
	Created    bool     `json:"created"`
	Parameters []string `json:"parameters"`
}

// Capture analyses code and records it. Returns fault.CodeInvalid for bad fields,
// fault.CodeTooLarge for code over signature.MaxCodeBytes, fault.CodeInvalidCode (with
// details line, column, feature) for code that is rejected or has an empty
// signature, or that is a single proc__X call when X does not exist, and
// CatalogueChanged when the stored catalogue changed under each of
// maxCatalogueAttempts preparations.
func (s *Service) Capture(ctx context.Context, req CaptureRequest) (CaptureOutcome, error) {
	if err := validateCapture(&req); err != nil {
		return CaptureOutcome{}, err
	}
	dialect, err := signature.ParseDialect(req.Dialect)
	if err != nil {
		return CaptureOutcome{}, fault.Errorf(fault.CodeInvalid, "dialect %q is not starlark or python-async", req.Dialect).WithDetails("field", "dialect")
	}
	// The code is parsed at most once (captureAnalyses): its lifting plan
	// (left unused for "lift": false) also makes its canonical program
	// (prepareCapture).
	ca, err := s.analyses.analyse(req.Code, dialect)
	if err != nil {
		return CaptureOutcome{}, CodeError(err)
	}
	a := ca.a
	key := usage.UsageKey(req.SessionID, req.IdempotencyKey)
	if len(a.Signature) == 1 && len(a.ProcRefs) == 1 {
		return s.captureUse(ctx, a.ProcRefs[0], key, req)
	}
	// The capture is prepared (named, lifted) under one catalogue, which
	// the store checks is still the stored one in the capture's own write
	// (CaptureInput.Catalogue): when another was put since this instance
	// read it — by this instance or another — nothing is written, and the
	// capture is prepared again under the catalogue read then.
	var prep *preparedCapture
	var res CaptureResult
	for attempt := 1; ; attempt++ {
		if prep, err = s.prepareCapture(ctx, &req, dialect, ca, key, attempt > 1); err != nil {
			break
		}
		if s.pageNeeded(prep) {
			prep.in.Page = suggestQuery(prep.in.Signature, s.opts.AllowMutatingAutorun)
		}
		res, err = s.captureNamed(ctx, prep.in, prep.names)
		if !IsCatalogueChanged(err) || attempt == maxCatalogueAttempts {
			break
		}
	}
	if err != nil {
		return CaptureOutcome{}, err
	}
	hash := prep.in.Version.CodeHash
	if res.CodeHash != "" {
		hash = res.CodeHash // another text of a stored version's program: a use of it
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeCapture, Procedure: res.Procedure.Name, CodeHash: hash})
	if res.VersionCreated {
		// Decorating the procedure reads its new version's flows: they
		// are the capture's analysis's.
		s.flows.add(prep.in.Version.CodeHash, prep.in.Version.Code, prep.a)
	}
	suggestion := s.captureSuggestion(ctx, res, prep)
	stored := &CapturedVersion{CodeHash: hash, Current: res.Procedure.CodeHash == hash, Created: res.VersionCreated,
		Parameters: slices.Clone(prep.in.Version.Parameters)}
	return CaptureOutcome{Procedure: res.Procedure, CodeHash: hash, Version: stored, Created: res.Created, VersionCreated: res.VersionCreated, Counted: res.Counted,
		Suggestion: suggestion, Lifted: prep.lifted, Warnings: prep.warnings}, nil
}

// maxCatalogueAttempts bounds how many times one capture is prepared: a
// catalogue that changes under every attempt answers CatalogueChanged.
const maxCatalogueAttempts = 3

// preparedCapture is a capture ready to be written: the store's input,
// under the catalogue in.Catalogue, the view it was named with (nil for a
// plain signature prepared under the catalogue held), and what lifting did.
type preparedCapture struct {
	in CaptureInput
	// a is the analysis of in's code (lifted, when something was).
	a *signature.Analysis
	v *view
	// names are the names of in's signature (signature.Names against v's
	// catalogue; v nil: a plain signature, whose names the catalogue does
	// not change).
	names    []string
	lifted   []Lifted
	warnings []Warning
}

// prepareCapture prepares the capture of req, analysed as ca (its
// lifting applied unless req.NoLift), counted under key. A plain signature's
// name does not depend on the catalogue (signature.Names) and it names no
// procedure: it is prepared under the catalogue this instance read last,
// and nothing is read before the write (the write confirms that catalogue,
// and the answer is decorated with it: captureSuggestion). Any other signature is named, and its nested procedures read,
// before the write; so is every signature when reread (the store answered
// that the catalogue changed) or when no catalogue was read yet.
func (s *Service) prepareCapture(ctx context.Context, req *CaptureRequest, dialect signature.Dialect, ca *codeAnalysis,
	key string, reread bool) (*preparedCapture, error) {
	p := &preparedCapture{lifted: []Lifted{}, warnings: []Warning{}}
	a := ca.a
	cat := s.heldCatalogue()
	if !signature.Plain(a.Signature) || cat == nil || reread {
		v, err := s.newView(ctx, []*Procedure{{Signature: a.Signature}})
		if err != nil {
			return nil, err
		}
		p.v, cat = v, v.cat
	}
	code := req.Code
	var schema map[string]any
	if !req.NoLift {
		l, err := s.liftCapture(req, dialect, ca, cat)
		if err != nil {
			return nil, err
		}
		for _, w := range l.warnings {
			p.warnings = append(p.warnings, Warning{Line: w.Line, Column: w.Column, Message: w.Message})
		}
		if len(l.lifted) > 0 {
			a, code, p.lifted, schema = l.analysis, l.code, l.lifted, l.schema
		}
	}
	if schema == nil {
		var err error
		if schema, err = schemas.InputSchema(a.Parameters, req.ParamsSchema); err != nil {
			return nil, err
		}
	}
	warnings := make([]Warning, len(a.Warnings))
	for i, w := range a.Warnings {
		warnings[i] = Warning{Line: w.Line, Column: w.Column, Message: w.Message}
	}
	// The code as sent has its canonical hash kept (captureAnalyses);
	// lifted code is another text, hashed from scratch.
	var canonical string
	var err error
	if len(p.lifted) > 0 {
		canonical, err = CanonicalHashOf(code, string(dialect), cat)
	} else {
		canonical, err = s.analyses.canonicalHash(ca, cat)
	}
	if err != nil {
		return nil, CodeError(err)
	}
	var known func(string) bool
	if p.v != nil {
		known = p.v.cat.Has
	}
	p.a, p.names = a, signature.Names(a.Signature, known)
	p.in = CaptureInput{
		Signature: a.Signature,
		Version: Version{
			CodeHash:      a.CodeHash,
			CanonicalHash: canonical,
			Code:          code,
			Dialect:       string(dialect),
			Parameters:    jsonvalue.List(a.Parameters),
			InputSchema:   schema,
			Opaque:        a.Opaque,
			Warnings:      warnings,
			Summary:       req.Summary,
			Metadata:      req.Metadata,
			Status:        req.Status,
			CapturedAt:    s.now(),
		},
		Cause:     req.Cause,
		UsageKey:  key,
		At:        s.now(),
		Catalogue: cat,
	}
	return p, nil
}

// captureSuggestion is the Suggestion of the capture prep that stored res,
// and decorates res.Procedure for the answer — with prep's view, else the
// catalogue prep was prepared under, which the capture's write confirmed
// is the stored one (CaptureInput.Catalogue): nothing is read for it. A
// procedure is the only one of its signature, so a capture of one that
// already existed and is exposed is Suggest's exact match: itself, found
// with no page read. Otherwise, unless noneExposedWith rules every holder
// out, Suggest's choice except that procedure, on the page the store read
// with the write (res.PageRead, asked by CaptureInput.Page), else on the page
// read now. The capture is recorded, so a failure to find advice does not
// fail it.
func (s *Service) captureSuggestion(ctx context.Context, res CaptureResult, prep *preparedCapture) *reuse.Suggestion {
	s.auth.remember(res.Procedure)
	v := prep.v
	if v == nil {
		v = s.viewWithout(prep.in.Catalogue)
	}
	v.decorate(res.Procedure)
	if !res.Created && res.Procedure.Exposed {
		return sameSignature(res.Procedure.Name)
	}
	if noneExposedWith(res.Procedure.Signature, v.cat, s.opts.AllowMutatingAutorun) {
		return nil
	}
	// (Not exposed, or just created: never its own suggestion, and the
	// only procedure of its signature, so there is no exact match to seek.)
	if !res.PageRead {
		var err error
		if res.Page, res.PageTotal, _, err = s.suggestPage(ctx, res.Procedure.Signature); err != nil {
			return nil
		}
	}
	sg, _ := pickSuggestion(res.Page, res.PageTotal, res.Procedure.Signature, res.Procedure.Name)
	return sg
}

// pageNeeded reports whether the capture prep may need Suggest's page
// after its write, so that the store reads it with the write
// (CaptureInput.Page): unless noneExposedWith rules out every holder of
// its tools, or the procedure its signature is stored under was exposed
// when this service saw it last (its capture is then a use of it,
// answered with itself). Only a guess: captureSuggestion decides on what
// the write answered, and reads the page then when none was read with it.
func (s *Service) pageNeeded(prep *preparedCapture) bool {
	in := prep.in
	if noneExposedWith(in.Signature, in.Catalogue, s.opts.AllowMutatingAutorun) {
		return false
	}
	if len(prep.names) == 0 {
		return true
	}
	p := s.auth.get(prep.names[0])
	if p == nil || !slices.Equal(p.Signature, in.Signature) {
		return true
	}
	v := prep.v
	if v == nil {
		v = s.viewWithout(in.Catalogue)
	}
	v.decorate(p)
	return !p.Exposed
}

// captureNamed stores in under the name of its signature, names
// (preparedCapture.names). A procedure keeps the name it was created under: a
// signature whose name may depend on the catalogue or on the rule's history
// (any that is not signature.Plain) is first looked up under every name it
// can have been given — its Bamboo name (a long one created while all its
// tools were listed, or stored before the rule) and its hashed name. Else
// the names are tried in order, the next one only when a procedure of
// another signature holds one (the store writes nothing then).
func (s *Service) captureNamed(ctx context.Context, in CaptureInput, names []string) (CaptureResult, error) {
	if !signature.Plain(in.Signature) {
		held := []string{signature.ProcedureName(in.Signature), signature.HashedName(in.Signature)}
		stored, err := s.store.GetMany(ctx, held)
		if err != nil {
			return CaptureResult{}, err
		}
		for _, name := range held {
			if p := stored[name]; p != nil && slices.Equal(p.Signature, in.Signature) {
				names = []string{name}
				break
			}
		}
	}
	var err error
	for _, name := range names {
		in.Name = name
		var res CaptureResult
		if res, err = s.store.Capture(ctx, in); !isSignatureMismatch(err) {
			return res, err
		}
	}
	return CaptureResult{}, err
}

// isSignatureMismatch reports whether err is a capture refused because a
// procedure of another signature holds the name.
func isSignatureMismatch(err error) bool {
	var e *fault.Error
	return errors.As(err, &e) && e.Code == fault.CodeConflict && e.Details["reason"] == audit.ReasonSignatureMismatch
}

func (s *Service) captureUse(ctx context.Context, name, key string, req CaptureRequest) (CaptureOutcome, error) {
	cause := ""
	if req.Cause != nil {
		cause = req.Cause.Name
	}
	p, v, err := s.load(ctx, name)
	if fault.ErrorCode(err) == fault.CodeNotFound {
		return CaptureOutcome{}, unknownUse(name)
	}
	if err != nil {
		return CaptureOutcome{}, err
	}
	if req.Status == StatusFailed {
		// A failed use is knowledge about the run, not a use to count.
		return CaptureOutcome{Procedure: p, Use: true}, nil
	}
	res, err := s.store.RecordUse(ctx, UseInput{Name: name, UsageKey: key, Cause: cause, At: s.now()})
	if fault.ErrorCode(err) == fault.CodeNotFound {
		return CaptureOutcome{}, unknownUse(name)
	}
	if err != nil {
		return CaptureOutcome{}, err
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeCapture, Procedure: name})
	v.decorate(res.Procedure)
	return CaptureOutcome{Procedure: res.Procedure, Counted: res.Counted, Use: true}, nil
}

// CodeError turns an analysis rejection (a *signature.Error) into
// fault.CodeInvalidCode, or fault.CodeTooLarge for oversized code, with details line,
// column and feature. Any other error becomes fault.CodeInvalidCode without them.
func CodeError(err error) error {
	var se *signature.Error
	if !errors.As(err, &se) {
		return fault.Errorf(fault.CodeInvalidCode, "the code cannot be analysed")
	}
	code := fault.CodeInvalidCode
	if se.Feature == "code_size" {
		code = fault.CodeTooLarge
	}
	return (&fault.Error{Code: code, Message: se.Message}).
		WithDetails("line", se.Line).WithDetails("column", se.Column).WithDetails("feature", se.Feature)
}

func validateCapture(req *CaptureRequest) error {
	if strings.TrimSpace(req.Code) == "" {
		return fault.Errorf(fault.CodeInvalid, "code is required").WithDetails("field", "code")
	}
	if len(req.Code) > signature.MaxCodeBytes {
		return fault.Errorf(fault.CodeTooLarge, "code is %d bytes, at most %d are allowed", len(req.Code), signature.MaxCodeBytes).WithDetails("field", "code")
	}
	if req.Status == "" {
		req.Status = StatusSucceeded
	}
	if !req.Status.Valid() {
		return fault.Errorf(fault.CodeInvalid, "status %q is not succeeded or failed", req.Status).WithDetails("field", "status")
	}
	if err := fields.Summary.CheckString(req.Summary); err != nil {
		return err
	}
	if req.SessionID != "" {
		if err := usage.CheckSessionID(req.SessionID); err != nil {
			return err
		}
	}
	if err := usage.CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return err
	}
	if req.Cause != nil {
		req.Cause.Name = strings.TrimSpace(req.Cause.Name)
		if req.Cause.Name == "" {
			return fault.Errorf(fault.CodeInvalid, "cause.name is required when cause is given").WithDetails("field", "cause.name")
		}
		if err := fields.CauseName.CheckStringAt("cause.name", req.Cause.Name); err != nil {
			return err
		}
		if err := fields.CauseDesc.CheckStringAt("cause.description", req.Cause.Description); err != nil {
			return err
		}
	}
	return nil
}

// unknownUse is the answer to a block that only calls a procedure that does
// not exist.
func unknownUse(name string) error {
	return fault.Errorf(fault.CodeInvalidCode, "the block only calls %s, and no such procedure exists", name).
		WithDetails("feature", "unknown_procedure").WithDetails("line", 0).WithDetails("column", 0)
}
