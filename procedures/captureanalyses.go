package procedures

import (
	"sync/atomic"

	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/signature"
)

// maxCaptureAnalysisBytes bounds the capture analysis cache by the code of
// its keys and the source of its analyses (least recently used entries go).
const maxCaptureAnalysisBytes = 4 << 20

// captureAnalyses keeps what a capture derives from its code as sent alone,
// by dialect and the very code: its analysis (signature.AnalyzeLift's,
// a function of those two alone), and the canonical hash of that code
// under the last catalogue revision it was prepared under (what
// CanonicalHashOf gives under that catalogue: a function of the code, its
// dialect and the catalogue's classification, which its revision names).
// A capture of code captured before is not parsed again; code that
// differs by a byte, or another dialect, is a miss. Errors are not kept.
type captureAnalyses struct {
	m *cache.Cache[string, *keptAnalysis]
	// parses counts the code analysed (AnalyzeLift).
	parses atomic.Int64
}

// keptAnalysis is a captureAnalyses entry: the analysis, and the canonical
// hash of the code as written under catalogue revision ("" when none was
// made).
type keptAnalysis struct {
	a                   *signature.Analysis
	revision, canonical string
}

// newCaptureAnalyses returns an empty captureAnalyses.
func newCaptureAnalyses() *captureAnalyses {
	return &captureAnalyses{m: cache.NewWeighted(maxCaptureAnalysisBytes, func(k string, e *keptAnalysis) int {
		return len(k) + len(e.a.Source) + 512
	})}
}

// captureAnalysisKey is the key of code in dialect.
func captureAnalysisKey(code string, dialect signature.Dialect) string {
	return string(dialect) + "\x00" + code
}

// codeAnalysis is a capture's analysis of its code as sent, through the
// cache: the analysis (the capture's own copy), the entry it is kept as
// (nil without a cache), and the lifting plan, made when first needed
// when the analysis came from the cache.
type codeAnalysis struct {
	from    *captureAnalyses
	code    string
	dialect signature.Dialect
	key     string
	a       *signature.Analysis
	kept    *keptAnalysis
	plan    *signature.LiftPlan
}

// analyse returns the analysis of code in dialect (kept, or
// signature.AnalyzeLift's, kept then).
func (c *captureAnalyses) analyse(code string, dialect signature.Dialect) (*codeAnalysis, error) {
	ca := &codeAnalysis{from: c, code: code, dialect: dialect, key: captureAnalysisKey(code, dialect)}
	if c != nil {
		if e, ok := c.m.Get(ca.key); ok {
			ca.a, ca.kept = e.a.Clone(), e
			return ca, nil
		}
	}
	a, err := ca.analyzeLift()
	if err != nil {
		return nil, err
	}
	ca.a = a
	if c != nil {
		ca.kept = &keptAnalysis{a: a.Clone()}
		c.m.Add(ca.key, ca.kept)
	}
	return ca, nil
}

// liftPlan returns the lifting plan of the code (analysed again when the
// analysis was kept).
func (ca *codeAnalysis) liftPlan() (*signature.LiftPlan, error) {
	if ca.plan == nil {
		if _, err := ca.analyzeLift(); err != nil {
			return nil, err
		}
	}
	return ca.plan, nil
}

// analyzeLift analyses the code (signature.AnalyzeLift), keeping its plan.
func (ca *codeAnalysis) analyzeLift() (*signature.Analysis, error) {
	if ca.from != nil {
		ca.from.parses.Add(1)
	}
	a, plan, err := signature.AnalyzeLift(ca.code, ca.dialect)
	if err != nil {
		return nil, err
	}
	ca.plan = plan
	return a, nil
}

// canonicalHash is CanonicalHashOf the code as written under cat: kept
// for cat's revision, else made from the plan's analysis (canonicalHashOfPlan)
// and kept for it, in c (nil: not kept).
func (c *captureAnalyses) canonicalHash(ca *codeAnalysis, cat *Catalogue) (string, error) {
	revision := ""
	if cat != nil {
		revision = cat.Revision
	}
	if k := ca.kept; k != nil && revision != "" && k.revision == revision {
		return k.canonical, nil
	}
	plan, err := ca.liftPlan()
	if err != nil {
		return "", err
	}
	hash := canonicalHashOfPlan(plan, cat)
	if c != nil && ca.kept != nil && revision != "" {
		c.m.Add(ca.key, &keptAnalysis{a: ca.kept.a, revision: revision, canonical: hash})
	}
	return hash, nil
}
