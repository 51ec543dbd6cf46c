package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
	"github.com/procgraph/procgraph/signature"
)

// Base is the time the suite's fixtures start at. It is deliberately not in
// UTC and carries sub-millisecond digits: stores normalise times to UTC at
// millisecond precision.
var Base = time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("UTC+2", 2*3600))

// At returns Base plus n seconds.
func At(n int) time.Time { return Base.Add(time.Duration(n) * time.Second) }

// Ms returns t as a store returns it: UTC, truncated to milliseconds.
func Ms(t time.Time) time.Time { return t.Truncate(time.Millisecond).UTC() }

// NameOf returns the procedure name the suite uses for a signature.
func NameOf(sig ...string) string { return procedures.ProcPrefix + strings.Join(sig, "__") }

// CodeOf is the code of the suite's real captures of signature sig (sorted):
// a comment naming tag, then one call of each tool, so that what it calls is
// sig and its code hash is its own per tag.
func CodeOf(sig []string, tag string) string {
	var b strings.Builder
	b.WriteString("# " + tag + "\n")
	for _, t := range sig {
		b.WriteString("tools." + t + "()\n")
	}
	return b.String()
}

// HashOf is the code hash of CodeOf(sig, tag).
func HashOf(sig []string, tag string) string { return signature.CodeHash(CodeOf(sig, tag)) }

// Real is In with the code CodeOf(sig, tag) and its real code hash: a
// capture a dump can carry (import analyses every version's code again).
func Real(sig []string, tag, key string, at time.Time) procedures.CaptureInput {
	in := In(sig, HashOf(sig, tag), key, at)
	in.Version.Code = CodeOf(sig, tag)
	return in
}

// In returns a succeeded capture of the procedure with signature sig (named by
// NameOf), code hash hash, usage key key, at time at.
func In(sig []string, hash, key string, at time.Time) procedures.CaptureInput {
	return procedures.CaptureInput{
		Name:      NameOf(sig...),
		Signature: sig,
		Version: procedures.Version{
			CodeHash: hash,
			Code:     "# code " + hash + "\nreturn tools." + sig[0] + "()",
			Dialect:  "starlark",
			Status:   procedures.StatusSucceeded,
		},
		UsageKey: key,
		At:       at,
	}
}

// Failed returns in with a failed version status.
func Failed(in procedures.CaptureInput) procedures.CaptureInput {
	in.Version.Status = procedures.StatusFailed
	return in
}

// WithCause returns in naming the cause name with description desc.
func WithCause(in procedures.CaptureInput, name, desc string) procedures.CaptureInput {
	in.Cause = &procedures.CauseInput{Name: name, Description: desc}
	return in
}

// Decision returns a valid decision record of kind about procedure name at at.
func Decision(kind audit.DecisionKind, name, hash string, at time.Time) audit.Decision {
	return audit.Decision{
		ID:        audit.NewDecisionID(at),
		Kind:      kind,
		Procedure: name,
		CodeHash:  hash,
		Outcome:   audit.Allowed,
		Reason:    "test",
		Actor:     "tester",
		At:        at,
	}
}

// MustCapture captures in and fails the test on error.
func MustCapture(tb testing.TB, s procedures.Store, in procedures.CaptureInput) procedures.CaptureResult {
	tb.Helper()
	res, err := s.Capture(context.Background(), in)
	if err != nil {
		tb.Fatalf("Capture(%s, %s, key %q): %v", in.Name, in.Version.CodeHash, in.UsageKey, err)
	}
	if res.Procedure == nil {
		tb.Fatalf("Capture(%s): nil procedure in result", in.Name)
	}
	return res
}

// MustRecordUse records in and fails the test on error.
func MustRecordUse(tb testing.TB, s procedures.Store, in procedures.UseInput) procedures.UseResult {
	tb.Helper()
	res, err := s.RecordUse(context.Background(), in)
	if err != nil {
		tb.Fatalf("RecordUse(%s, key %q): %v", in.Name, in.UsageKey, err)
	}
	if res.Procedure == nil {
		tb.Fatalf("RecordUse(%s): nil procedure in result", in.Name)
	}
	return res
}

// MustGet returns the procedure named name and fails the test on error.
func MustGet(tb testing.TB, s procedures.Store, name string) *procedures.Procedure {
	tb.Helper()
	p, err := s.Get(context.Background(), name)
	if err != nil {
		tb.Fatalf("Get(%s): %v", name, err)
	}
	return p
}

// MustFind runs q and fails the test on error.
func MustFind(tb testing.TB, s procedures.Store, q procedures.Query) ([]*procedures.Procedure, int) {
	tb.Helper()
	ps, total, err := s.Find(context.Background(), q)
	if err != nil {
		tb.Fatalf("Find(%+v): %v", q, err)
	}
	return ps, total
}

// MustGranted returns the procedures holding a grant and fails the test on
// error.
func MustGranted(tb testing.TB, s procedures.Store) []*procedures.Procedure {
	tb.Helper()
	ps, err := s.Granted(context.Background())
	if err != nil {
		tb.Fatalf("Granted: %v", err)
	}
	return ps
}

// MustSearchNames returns the names of the procedures q finds in s (first
// page, in rank order) and fails the test on error.
func MustSearchNames(tb testing.TB, s procedures.Store, q string) []string {
	tb.Helper()
	terms, err := search.Terms(q)
	if err != nil {
		tb.Fatalf("SearchTerms(%q): %v", q, err)
	}
	ps, _ := MustFind(tb, s, procedures.Query{Search: terms})
	return names(ps)
}

// MustVersion returns one version and fails the test on error.
func MustVersion(tb testing.TB, s procedures.Store, name, hash string) *procedures.Version {
	tb.Helper()
	v, err := s.Version(context.Background(), name, hash)
	if err != nil {
		tb.Fatalf("Version(%s, %s): %v", name, hash, err)
	}
	return v
}

// MustDecisions lists decisions and fails the test on error.
func MustDecisions(tb testing.TB, s procedures.Store, f audit.DecisionFilter) []audit.Decision {
	tb.Helper()
	ds, err := s.ListDecisions(context.Background(), f)
	if err != nil {
		tb.Fatalf("ListDecisions(%+v): %v", f, err)
	}
	return ds
}

// MustCause returns one cause with its procedures and fails the test on error.
func MustCause(tb testing.TB, s procedures.Store, name string) (*procedures.Cause, []procedures.CauseProcedure) {
	tb.Helper()
	c, ps, err := s.Cause(context.Background(), name)
	if err != nil {
		tb.Fatalf("Cause(%s): %v", name, err)
	}
	return c, ps
}

// RequireCode fails the test unless err is a *fault.Error with code.
func RequireCode(tb testing.TB, err error, code fault.Code) *fault.Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("error = nil, want code %s", code)
	}
	var e *fault.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %v (%T) is not a *fault.Error, want code %s", err, err, code)
	}
	if got := fault.ErrorCode(err); got != code {
		tb.Fatalf("error code = %s (%v), want %s", got, err, code)
	}
	return e
}

// RequireTime fails the test unless got is want at millisecond precision, in UTC.
func RequireTime(tb testing.TB, what string, got, want time.Time) {
	tb.Helper()
	if !got.Equal(Ms(want)) {
		tb.Errorf("%s = %v, want %v (UTC, truncated to ms)", what, got, Ms(want))
	}
	if got.Location() != time.UTC {
		tb.Errorf("%s location = %v, want UTC", what, got.Location())
	}
}

// JSONValue returns v as encoding/json decodes it into an any: the form
// stores return JSON-like maps in (numbers are float64).
func JSONValue(tb testing.TB, v any) any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// requireEqual fails the test unless got and want are deeply equal, treating
// nil and empty slices and maps alike.
func requireEqual(tb testing.TB, what string, got, want any) {
	tb.Helper()
	if !reflect.DeepEqual(emptyToNil(got), emptyToNil(want)) {
		tb.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func emptyToNil(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		if rv.Len() == 0 {
			return nil
		}
	}
	return v
}

// names returns the names of ps in order.
func names(ps []*procedures.Procedure) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// causeLink returns the frequency of p's link to cause and whether it exists.
func causeLink(p *procedures.Procedure, cause string) (int64, bool) {
	for _, c := range p.Causes {
		if c.Name == cause {
			return c.Frequency, true
		}
	}
	return 0, false
}

func ptr[T any](v T) *T { return &v }

var ctx = context.Background()
