package storetest

import (
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

var sigAB = []string{"tool_a", "tool_b"}

func testCapture(t *testing.T, newStore NewStore) {
	t.Run("new procedure is created", func(t *testing.T) {
		s := newStore(t)
		res := MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		if !res.Created || !res.VersionCreated || !res.Counted {
			t.Fatalf("result = %+v, want Created, VersionCreated and Counted", res)
		}
		p := res.Procedure
		if p.Name != NameOf(sigAB...) || p.CodeHash != "h1" || p.Status != procedures.StatusSucceeded {
			t.Errorf("procedure = %s %s %s", p.Name, p.CodeHash, p.Status)
		}
		requireEqual(t, "signature", p.Signature, sigAB)
		if p.Frequency != 1 || p.UseCount != 0 || p.LastUsedAt != nil || p.Grant != nil {
			t.Errorf("frequency %d, use count %d, last used %v, grant %v; want 1, 0, nil, nil", p.Frequency, p.UseCount, p.LastUsedAt, p.Grant)
		}
		requireEqual(t, "Get", MustGet(t, s, p.Name).CodeHash, "h1")
	})

	t.Run("new code hash creates a version only", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		if res.Created || !res.VersionCreated || !res.Counted {
			t.Fatalf("result = %+v, want VersionCreated and Counted only", res)
		}
		if _, total := MustFind(t, s, procedures.Query{}); total != 1 {
			t.Errorf("Find total = %d, want 1", total)
		}
	})

	t.Run("same code hash again creates nothing", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, In(sigAB, "h1", "k2", At(1)))
		if res.Created || res.VersionCreated {
			t.Fatalf("result = %+v, want neither Created nor VersionCreated", res)
		}
		if vs, err := s.Versions(ctx, NameOf(sigAB...)); err != nil || len(vs) != 1 {
			t.Errorf("Versions = %d, %v; want 1 version", len(vs), err)
		}
	})

	t.Run("first succeeded version stays current until promoted", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, In(sigAB, "h2", "k2", At(1)))
		if res.Procedure.CodeHash != "h1" {
			t.Fatalf("current = %s after a second succeeded version, want h1", res.Procedure.CodeHash)
		}
		name := NameOf(sigAB...)
		if _, err := s.Promote(ctx, name, "h2", Decision(audit.KindPromote, name, "h2", At(2))); err != nil {
			t.Fatalf("Promote: %v", err)
		}
		res = MustCapture(t, s, In(sigAB, "h3", "k3", At(3)))
		if res.Procedure.CodeHash != "h2" {
			t.Fatalf("current = %s after promote and a new version, want h2", res.Procedure.CodeHash)
		}
	})

	t.Run("failed first version is current until a version succeeds", func(t *testing.T) {
		s := newStore(t)
		res := MustCapture(t, s, Failed(In(sigAB, "h1", "k1", At(0))))
		p := res.Procedure
		if !res.Created || res.Counted || p.CodeHash != "h1" || p.Status != procedures.StatusFailed || p.Frequency != 0 {
			t.Fatalf("after failed capture: %+v, procedure %s %s freq %d; want created, not counted, h1 failed freq 0", res, p.CodeHash, p.Status, p.Frequency)
		}
		p = MustCapture(t, s, Failed(In(sigAB, "h2", "k2", At(1)))).Procedure
		if p.CodeHash != "h1" || p.Status != procedures.StatusFailed {
			t.Fatalf("after second failed capture: current %s %s, want h1 failed", p.CodeHash, p.Status)
		}
		res = MustCapture(t, s, In(sigAB, "h3", "k3", At(2)))
		p = res.Procedure
		if !res.Counted || p.CodeHash != "h3" || p.Status != procedures.StatusSucceeded || p.Frequency != 1 {
			t.Fatalf("after succeeded capture: current %s %s freq %d, want h3 succeeded 1", p.CodeHash, p.Status, p.Frequency)
		}
		p = MustCapture(t, s, In(sigAB, "h4", "k4", At(3))).Procedure
		if p.CodeHash != "h3" {
			t.Fatalf("after a later success: current %s, want h3", p.CodeHash)
		}
	})

	t.Run("failed version succeeds when its code is captured succeeded", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, Failed(In(sigAB, "h1", "k1", At(0))))
		res := MustCapture(t, s, In(sigAB, "h1", "k2", At(1)))
		p := res.Procedure
		if res.VersionCreated || p.CodeHash != "h1" || p.Status != procedures.StatusSucceeded || p.Frequency != 1 {
			t.Fatalf("current %s %s freq %d (%+v), want h1 succeeded freq 1", p.CodeHash, p.Status, p.Frequency, res)
		}
		if v := MustVersion(t, s, p.Name, "h1"); v.Status != procedures.StatusSucceeded || v.Frequency != 2 {
			t.Fatalf("version %s freq %d, want succeeded 2", v.Status, v.Frequency)
		}
	})

	t.Run("failed capture counts on its version alone", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, WithCause(Failed(In(sigAB, "h2", "k2", At(1))), "c1", "d"))
		p := res.Procedure
		if res.Counted || p.Frequency != 1 {
			t.Fatalf("Counted %v, frequency %d; want false, 1", res.Counted, p.Frequency)
		}
		if v := MustVersion(t, s, p.Name, "h2"); v.Frequency != 1 || v.Status != procedures.StatusFailed {
			t.Errorf("failed version frequency %d status %s, want 1 failed", v.Frequency, v.Status)
		}
		if f, ok := causeLink(p, "c1"); !ok || f != 0 {
			t.Errorf("cause link c1 = %d, %v; want linked with frequency 0", f, ok)
		}
		c, _ := MustCause(t, s, "c1")
		if c.Frequency != 0 || c.Procedures != 1 {
			t.Errorf("cause = %+v, want 1 procedure, frequency 0", c)
		}
	})

	t.Run("usage key counts once per procedure", func(t *testing.T) {
		s := newStore(t)
		steps := []struct {
			hash, key   string
			wantCounted bool
			wantFreq    int64
		}{
			{"h1", "k1", true, 1},
			{"h1", "k1", false, 1},
			{"h2", "k1", false, 1},
			{"h1", "k2", true, 2},
			{"h2", "k3", true, 3},
		}
		for i, st := range steps {
			res := MustCapture(t, s, In(sigAB, st.hash, st.key, At(i)))
			if res.Counted != st.wantCounted || res.Procedure.Frequency != st.wantFreq {
				t.Errorf("step %d (%s, %s): Counted %v freq %d, want %v %d", i, st.hash, st.key, res.Counted, res.Procedure.Frequency, st.wantCounted, st.wantFreq)
			}
		}
	})

	t.Run("usage key counts once per version", func(t *testing.T) {
		s := newStore(t)
		name := NameOf(sigAB...)
		for i, c := range []struct{ hash, key string }{{"h1", "k1"}, {"h1", "k1"}, {"h2", "k1"}, {"h2", "k2"}, {"h2", "k2"}, {"h2", "k3"}} {
			MustCapture(t, s, In(sigAB, c.hash, c.key, At(i)))
		}
		if v := MustVersion(t, s, name, "h1"); v.Frequency != 1 {
			t.Errorf("h1 frequency = %d, want 1", v.Frequency)
		}
		if v := MustVersion(t, s, name, "h2"); v.Frequency != 3 {
			t.Errorf("h2 frequency = %d, want 3", v.Frequency)
		}
		if p := MustGet(t, s, name); p.Frequency != 3 {
			t.Errorf("procedure frequency = %d, want 3", p.Frequency)
		}
	})

	t.Run("key of a failed capture counts when a capture succeeds", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, Failed(In(sigAB, "h1", "k1", At(0))))
		res := MustCapture(t, s, In(sigAB, "h2", "k1", At(1)))
		if !res.Counted || res.Procedure.Frequency != 1 {
			t.Fatalf("Counted %v freq %d, want true 1", res.Counted, res.Procedure.Frequency)
		}
	})

	t.Run("cause is upserted and its edge counts distinct usage keys", func(t *testing.T) {
		s := newStore(t)
		sigC := []string{"tool_c", "tool_d"}
		steps := []struct {
			sig              []string
			key, desc        string
			wantDesc         string
			wantEdge         int64
			wantCauseFreq    int64
			wantProcsOfCause int64
		}{
			{sigAB, "k1", "", "", 1, 1, 1},
			{sigAB, "k2", "first", "first", 2, 2, 1},
			{sigAB, "k3", "second", "first", 3, 3, 1},
			{sigAB, "k3", "", "first", 3, 3, 1},
			{sigC, "k3", "", "first", 1, 4, 2},
		}
		for i, st := range steps {
			p := MustCapture(t, s, WithCause(In(st.sig, "h1", st.key, At(i)), "c1", st.desc)).Procedure
			if f, ok := causeLink(p, "c1"); !ok || f != st.wantEdge {
				t.Errorf("step %d: edge frequency %d (linked %v), want %d", i, f, ok, st.wantEdge)
			}
			c, _ := MustCause(t, s, "c1")
			if c.Description != st.wantDesc || c.Frequency != st.wantCauseFreq || c.Procedures != st.wantProcsOfCause {
				t.Errorf("step %d: cause %+v, want description %q frequency %d procedures %d", i, c, st.wantDesc, st.wantCauseFreq, st.wantProcsOfCause)
			}
		}
	})

	t.Run("cause edge counts keys independently of the procedure", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		res := MustCapture(t, s, WithCause(In(sigAB, "h1", "k1", At(1)), "c1", ""))
		if res.Counted || res.Procedure.Frequency != 1 {
			t.Fatalf("Counted %v freq %d, want false 1", res.Counted, res.Procedure.Frequency)
		}
		if f, ok := causeLink(res.Procedure, "c1"); !ok || f != 1 {
			t.Fatalf("edge frequency %d (linked %v), want 1", f, ok)
		}
	})

	t.Run("summary is kept when the procedure has none", func(t *testing.T) {
		s := newStore(t)
		for i, st := range []struct{ hash, summary, want string }{
			{"h1", "", ""}, {"h2", "second", "second"}, {"h3", "third", "second"}, {"h1", "again", "second"},
		} {
			in := In(sigAB, st.hash, "k", At(i))
			in.Version.Summary = st.summary
			if got := MustCapture(t, s, in).Procedure.Summary; got != st.want {
				t.Errorf("step %d: summary %q, want %q", i, got, st.want)
			}
		}
	})

	t.Run("fields round trip", func(t *testing.T) { testCaptureRoundTrip(t, newStore(t)) })
	t.Run("times round trip in UTC at millisecond precision", func(t *testing.T) { testCaptureTimes(t, newStore(t)) })
	t.Run("invalid input is rejected", func(t *testing.T) { testCaptureInvalid(t, newStore(t)) })
}

func testCaptureRoundTrip(t *testing.T, s procedures.Store) {
	sig := []string{"proc__x__y", "tool_a", "tool_b"}
	in := In(sig, "h1", "k1", At(0))
	schema := map[string]any{
		"type":     "object",
		"required": []any{"task_id", "limit"},
		"properties": map[string]any{
			"task_id": map[string]any{"type": "string", "minLength": 3},
			"limit":   map[string]any{"type": "integer", "default": 10, "maximum": 2.5e3},
			"ratio":   map[string]any{"type": "number", "multipleOf": 0.25, "enum": []any{0.5, 1, nil, true, "x"}},
		},
	}
	meta := map[string]any{"agent": "bamboo", "nested": map[string]any{"n": 1, "list": []any{1, "two"}}}
	in.Version = procedures.Version{
		CodeHash:    "h1",
		Code:        "x = tools.tool_a(task_id=task_id)\n  # comment ü\nreturn tools.tool_b(x=x)\n",
		Dialect:     "python-async",
		Parameters:  []string{"task_id", "limit"},
		InputSchema: schema,
		Opaque:      true,
		Warnings:    []procedures.Warning{{Line: 1, Column: 5, Message: "tools aliased"}, {Line: 3, Column: 1, Message: "second"}},
		Summary:     "does a then b",
		Metadata:    meta,
		Status:      procedures.StatusSucceeded,
	}
	res := MustCapture(t, s, in)
	wantSchema := JSONValue(t, schema)
	check := func(where string, p *procedures.Procedure) {
		t.Helper()
		requireEqual(t, where+" signature", p.Signature, sig)
		requireEqual(t, where+" code", p.Code, in.Version.Code)
		requireEqual(t, where+" dialect", p.Dialect, "python-async")
		requireEqual(t, where+" parameters", p.Parameters, []string{"task_id", "limit"})
		requireEqual(t, where+" input schema", any(p.InputSchema), wantSchema)
		requireEqual(t, where+" opaque", p.Opaque, true)
		requireEqual(t, where+" warnings", p.Warnings, in.Version.Warnings)
		requireEqual(t, where+" summary", p.Summary, "does a then b")
	}
	check("Capture", res.Procedure)
	check("Get", MustGet(t, s, in.Name))
	v := MustVersion(t, s, in.Name, "h1")
	requireEqual(t, "version code", v.Code, in.Version.Code)
	requireEqual(t, "version dialect", v.Dialect, "python-async")
	requireEqual(t, "version parameters", v.Parameters, []string{"task_id", "limit"})
	requireEqual(t, "version input schema", any(v.InputSchema), wantSchema)
	requireEqual(t, "version metadata", any(v.Metadata), JSONValue(t, meta))
	requireEqual(t, "version opaque", v.Opaque, true)
	requireEqual(t, "version warnings", v.Warnings, in.Version.Warnings)
	requireEqual(t, "version summary", v.Summary, "does a then b")
	requireEqual(t, "version current", v.Current, true)

	// A nil schema stays empty.
	p := MustCapture(t, s, In([]string{"tool_z"}, "hz", "k1", At(0))).Procedure
	if len(p.InputSchema) != 0 || len(p.Parameters) != 0 || len(p.Warnings) != 0 || p.Opaque {
		t.Errorf("empty fields came back as schema %v parameters %v warnings %v opaque %v", p.InputSchema, p.Parameters, p.Warnings, p.Opaque)
	}
}

func testCaptureTimes(t *testing.T, s procedures.Store) {
	name := NameOf(sigAB...)
	in := In(sigAB, "h1", "k1", At(0))
	in.Version.CapturedAt = At(-5)
	p := MustCapture(t, s, in).Procedure
	RequireTime(t, "CreatedAt", p.CreatedAt, At(0))
	RequireTime(t, "UpdatedAt", p.UpdatedAt, At(0))
	RequireTime(t, "CapturedAt", MustVersion(t, s, name, "h1").CapturedAt, At(-5))

	later := At(10).Add(999 * time.Microsecond)
	MustCapture(t, s, In(sigAB, "h2", "k2", later)) // CapturedAt zero: defaults to At
	p = MustGet(t, s, name)
	RequireTime(t, "CreatedAt after a second capture", p.CreatedAt, At(0))
	RequireTime(t, "UpdatedAt after a second capture", p.UpdatedAt, later)
	RequireTime(t, "CapturedAt defaulted", MustVersion(t, s, name, "h2").CapturedAt, later)
	vs, err := s.Versions(ctx, name)
	if err != nil || len(vs) != 2 {
		t.Fatalf("Versions = %v, %v", vs, err)
	}
	RequireTime(t, "Versions CapturedAt", vs[0].CapturedAt, At(-5))
}

func testCaptureInvalid(t *testing.T, s procedures.Store) {
	cases := []struct {
		name   string
		mutate func(in *procedures.CaptureInput)
	}{
		{"empty name", func(in *procedures.CaptureInput) { in.Name = "" }},
		{"empty signature", func(in *procedures.CaptureInput) { in.Signature = nil }},
		{"empty code hash", func(in *procedures.CaptureInput) { in.Version.CodeHash = "" }},
		{"unknown status", func(in *procedures.CaptureInput) { in.Version.Status = "maybe" }},
		{"empty status", func(in *procedures.CaptureInput) { in.Version.Status = "" }},
		{"empty usage key", func(in *procedures.CaptureInput) { in.UsageKey = "" }},
		{"zero time", func(in *procedures.CaptureInput) { in.At = time.Time{} }},
		{"cause without name", func(in *procedures.CaptureInput) { in.Cause = &procedures.CauseInput{Description: "d"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := WithCause(In(sigAB, "h1", "k1", At(0)), "c1", "")
			c.mutate(&in)
			_, err := s.Capture(ctx, in)
			RequireCode(t, err, fault.CodeInvalid)
		})
	}
	if _, total := MustFind(t, s, procedures.Query{}); total != 0 {
		t.Errorf("rejected captures wrote %d procedures", total)
	}
	if cs, err := s.Causes(ctx); err != nil || len(cs) != 0 {
		t.Errorf("rejected captures wrote causes %v (%v)", cs, err)
	}
}
