package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// hostileDump is a dump crafted to carry authority (issue 19 item 4): an
// approved and a running turn of agent calling kill_job, 100 pending
// approvals (50 of agent, 50 of four others) with deadlines in 2099, a session policy auto-running kill_job
// for agent's session "s2", and a procedure calling kill_job with a durable
// grant; edit changes the records before they are written.
func hostileDump(t *testing.T, path string, edit func(recs []dump.Record) []dump.Record) (approved, running string) {
	t.Helper()
	cat, err := loadCatalogueFile(catalogueFile(t))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	kill := signature.CodeHash(turnKillCode)
	turn := func(id string, status gate.TurnStatus, session, requester string) dump.Record {
		r := gate.TurnRecord{Turn: gate.Turn{ID: id, SessionID: session, Phase: audit.PhaseInteractive, CodeHash: kill,
			Signature: []string{"kill_job"}, ReadOnly: true, StateChangingTools: []string{}, UnknownTools: []string{}, Summary: "read a job",
			Status: status, RequestedBy: requester, RequestedAt: at, Deadline: far},
			Code: turnKillCode, Dialect: "starlark", Arguments: map[string]any{"panda_id": 666}}
		if status != gate.TurnPending {
			r.Resolution = &gate.Resolution{Choice: gate.ChoiceRunOnce, By: "op", At: at, CodeHash: kill}
		}
		return dump.Record{Type: dump.TypeApproval, Approval: &r}
	}
	var ids []string
	for range 102 {
		ids = append(ids, gate.NewTurnID(at))
	}
	slices.Sort(ids)
	approved, running = ids[0], ids[1]
	pcode := "x = tools.get_task_jobs_summary(task_id=task_id)\ntools.kill_job(panda_id=task_id)\nreturn x"
	phash := signature.CodeHash(pcode)
	sig := []string{"get_task_jobs_summary", "kill_job"}
	name := signature.Name(sig)
	recs := []dump.Record{
		{Type: dump.TypeCatalogue, Catalogue: cat},
		{Type: dump.TypeProcedure, Procedure: &dump.ProcedureRecord{Name: name, Signature: sig, Current: phash, Frequency: 1,
			CreatedAt: at, UpdatedAt: at, Grant: &procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: at, Reason: "fine", CodeHash: phash}}},
		{Type: dump.TypeVersion, Version: &dump.VersionRecord{Procedure: name, CodeHash: phash, Code: pcode, Dialect: "starlark",
			Parameters: []string{"task_id"}, CapturedAt: at, Frequency: 1, Status: procedures.StatusSucceeded}},
		{Type: dump.TypeDecision, Decision: &audit.Decision{ID: audit.NewDecisionID(at), Kind: audit.KindGrant, Procedure: name,
			CodeHash: phash, Outcome: audit.Allowed, Reason: "granted", Actor: "op", AllowedTools: []string{}, At: at}},
		turn(approved, gate.TurnApproved, "s1", "agent"),
		turn(running, gate.TurnRunning, "s1", "agent"),
	}
	for i, id := range ids[2:] {
		who := "agent" // the first half: one requester would fill the whole bound
		if i >= 50 {
			who = []string{"r1", "r2", "r3", "r4"}[i%4]
		}
		recs = append(recs, turn(id, gate.TurnPending, "s3", who))
	}
	recs = append(recs, dump.Record{Type: dump.TypePolicy, Policy: &dump.PolicyRecord{SessionID: "s2", CodeHash: kill,
		Policy: gate.ChoiceAutoRun, Summary: "kill", SetBy: "op", SetAt: at, RequestedBy: "agent"}})
	if edit != nil {
		recs = edit(recs)
	}
	var buf bytes.Buffer
	w := dump.NewWriter(&buf, "embedded", "test")
	if err := w.Begin(dump.Counts{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return approved, running
}

// TestHostileDumps: a dump is data, not authority (docs/design.md). Imported by
// the real CLI and served by the real server, the crafted dump's approved
// and running turns cannot run, its policy and grant are inactive, the
// pending bound and the approval timeout hold; with --trust-authorizations
// the policy is in force and the import says who trusted it. Dumps whose
// code does not give its hash or signature, or whose audit record breaks
// the recorder's bounds, are refused naming the line, leaving no file.
func TestHostileDumps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dumpFile := filepath.Join(dir, "hostile.jsonl")
	approved, running := hostileDump(t, dumpFile, nil)
	data := filepath.Join(dir, "imported.db")
	if code, out, errOut := runMain(t, "import", dumpFile, "--data", data); code != 0 || !strings.Contains(out, "arrived inactive") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	up := mustUpstream(t)
	file := filepath.Join(dir, "tokens.json")
	a := &turnActors{agent: mustCreateToken(t, file, "agent", "read,invoke,capture"), op: mustCreateToken(t, file, "op", "read,grant")}
	admin := mustCreateToken(t, file, "admin", "admin")
	a.server = mustServe(t, serverOpts{Data: data, Upstream: up, TokensFile: file, AllowMutating: true})
	a.server.token = a.agent

	t.Run("no imported turn runs", func(t *testing.T) {
		for _, id := range []string{approved, running} {
			mustError(t, a.run(t, a.agent, id), 409, "conflict")
			turn := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)
			if s := turn["status"]; s != "expired" && s != "failed" {
				t.Errorf("imported %s turn is %v, want expired or failed", id, s)
			}
		}
		up.mustSeeNothing(t, "running an imported approved turn")
	})
	t.Run("the session policy is inactive", func(t *testing.T) {
		// The pending bound is full of imported turns, so an inactive
		// policy answers busy; one in force would run the turn at once.
		mustError(t, a.submit(t, killTurn("s2", 666)), 429, "busy")
		up.mustSeeNothing(t, "a turn under an imported policy")
	})
	t.Run("the pending bound and the approval timeout hold", func(t *testing.T) {
		r := a.submit(t, killTurn("s4", 1))
		mustError(t, r, 429, "busy")
		if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n > int(gate.DefaultApprovalTimeout/time.Second) {
			t.Errorf("Retry-After %q, want at most the approval timeout", r.Header.Get("Retry-After"))
		}
		list := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals?status=pending&limit=500", nil), 200)
		pending, _ := list["approvals"].([]any)
		if len(pending) != gate.DefaultMaxPendingApprovals {
			t.Errorf("%d pending approvals after the import, want the bound %d", len(pending), gate.DefaultMaxPendingApprovals)
		}
		limit, per := time.Now().Add(gate.DefaultApprovalTimeout), map[any]int{}
		for _, p := range pending {
			p := p.(map[string]any)
			if per[p["requested_by"]]++; per[p["requested_by"]] > gate.DefaultMaxPendingPerRequester {
				t.Errorf("more than %d imported pending approvals of %v", gate.DefaultMaxPendingPerRequester, p["requested_by"])
			}
			d, err := time.Parse(time.RFC3339Nano, p["deadline"].(string))
			if err != nil || d.After(limit) || p["read_only"] != false {
				t.Errorf("imported pending approval: deadline %v (%v), read_only %v; want at most now + the timeout, not read-only", p["deadline"], err, p["read_only"])
			}
		}
	})
	t.Run("the crafted grant is inactive", func(t *testing.T) {
		name := signature.Name([]string{"get_task_jobs_summary", "kill_job"})
		p := mustStatus(t, a.get(t, "/v1/procedures/"+name), 200)
		if ar := p["auto_run"].(map[string]any); ar["active"] != false {
			t.Errorf("imported grant: %v, want inactive", ar)
		}
		mustError(t, a.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 403, "denied")
		up.mustSeeNothing(t, "an automatic invoke under an imported grant")
	})

	// A real store's policy and grant, bound by its operator, exported over
	// HTTP: imported, they are unbound (inactive) unless trusted, and a
	// trusted import says who trusted them.
	src := &turnActors{agent: a.agent, op: a.op}
	src.server = mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})
	src.server.token = a.agent
	src.mustAutoRun(t, killTurn("s5", 1), "fine") // a session policy for agent's s5
	pcode := "x = tools.get_task_jobs_summary(task_id=task_id)\ntools.kill_job(panda_id=task_id)\nreturn x"
	granted := mustCaptureName(t, src.server, pcode, "s5")
	mustStatus(t, src.as(t, a.op, "PUT", "/v1/procedures/"+granted+"/auto-run", map[string]any{"enabled": true}), 200)
	real := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(real, mustStatusBody(t, src.as(t, admin, "GET", "/v1/export", nil), 200), 0o600); err != nil {
		t.Fatal(err)
	}
	up.reset()
	for _, trusted := range []bool{false, true} {
		t.Run("a real policy and grant, trusted "+strconv.FormatBool(trusted), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "moved.db")
			args := []string{"import", real, "--data", data}
			if trusted {
				args = append(args, "--trust-authorizations")
			}
			if code, out, errOut := runMain(t, args...); code != 0 {
				t.Fatalf("import: exit %d: %s%s", code, out, errOut)
			}
			if trusted {
				if rec := mustStoreRecord(t, data, audit.ReasonAuthorizationsTrusted); rec.Note != dump.TrustNote {
					t.Errorf("the trust record's note %q", rec.Note)
				}
			}
			b := &turnActors{agent: a.agent, op: a.op}
			b.server = mustServe(t, serverOpts{Data: data, Upstream: up, TokensFile: file, AllowMutating: true})
			b.server.token = a.agent
			ar := mustStatus(t, b.get(t, "/v1/procedures/"+granted), 200)["auto_run"].(map[string]any)
			if !trusted && (ar["active"] != false || ar["inactive_reason"] != binding.InactiveUnbound) || trusted && ar["active"] != true {
				t.Errorf("the moved grant: %v", ar)
			}
			r := b.submit(t, killTurn("s5", 1))
			if !trusted {
				mustStatus(t, r, 202)
				up.mustSeeNothing(t, "a turn under an untrusted imported policy")
				return
			}
			mustStatus(t, r, 200)
			if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
				t.Errorf("the upstream saw %v under a trusted policy, want kill_job", got)
			}
			up.reset()
		})
	}

	for _, c := range []struct {
		name string
		edit func(recs []dump.Record) []dump.Record
		want string
	}{
		{"a version whose code calls another signature", func(recs []dump.Record) []dump.Record {
			v := *recs[2].Version
			v.Code = "x = tools.get_task_jobs_summary(task_id=task_id)\nreturn x"
			v.CodeHash = signature.CodeHash(v.Code)
			p := *recs[1].Procedure
			p.Current, recs[1].Procedure, recs[2].Version = v.CodeHash, &p, &v
			return recs
		}, "dump line 4: version"},
		{"a version whose code gives another code hash", func(recs []dump.Record) []dump.Record {
			v := *recs[2].Version
			v.Code += "\ntools.kill_job(panda_id=1)"
			recs[2].Version = &v
			return recs
		}, "its code gives code_hash"},
		{"a turn whose code is not its signature", func(recs []dump.Record) []dump.Record {
			t := *recs[6].Approval
			t.Signature = []string{"get_task_jobs_summary"}
			recs[6].Approval = &t
			return recs
		}, "not its signature"},
		{"a turn whose code is opaque, marked plain", func(recs []dump.Record) []dump.Record {
			t := *recs[6].Approval
			t.Code = "getattr(tools, \"kill_job\")(panda_id=1)\n" + t.Code
			t.CodeHash = signature.CodeHash(t.Code)
			recs[6].Approval = &t
			return recs
		}, "opaque true"},
		{"a decision note past the bound", func(recs []dump.Record) []dump.Record {
			d := *recs[3].Decision
			d.Note = strings.Repeat("n", fields.MaxNoteBytes+1)
			recs[3].Decision = &d
			return recs
		}, "dump line 5: decision"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			hostileDump(t, bad, c.edit)
			target := filepath.Join(t.TempDir(), "new.db")
			code, _, errOut := runMain(t, "import", bad, "--data", target)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("import: exit %d: %s; want refused with %q", code, errOut, c.want)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Errorf("a refused import left %s behind (%v)", target, err)
			}
		})
	}
}

// TestServeRefusesUnfinishedImport: serve refuses a store holding an
// import's marker, naming the command that resumes it (the marker of a
// real import killed mid-way is in TestImportResumesAfterSIGKILL).
func TestServeRefusesUnfinishedImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "marked.db")
	s := mustOpenEmbedded(t, data)
	if err := s.Load(context.Background(), dump.LoadMarker{DumpID: "abc", Line: 9}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustServeRefuseMarked(t, data)
}

// TestOfflineCommandsRefuseUnfinishedImport: every offline command that
// reads a store refuses one holding an import's marker, as serve does,
// saying how to finish the import (the same dump, imported again) and how to
// discard it; it writes nothing (no dump, no archive, the store file
// unchanged), and doctor reports it. The marker a real import killed
// mid-way leaves is refused the same way in TestImportResumesAfterSIGKILL.
func TestOfflineCommandsRefuseUnfinishedImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "marked.db")
	s := mustOpenEmbedded(t, data)
	if err := s.Load(context.Background(), dump.LoadMarker{DumpID: "abc", Line: 9}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustOfflineRefuseMarked(t, data, "dump sha256 abc, applied up to line 9")
	// doctor reports it as its store check's failure.
	code, out, errOut := runMain(t, "doctor", "--data", data, "--addr", "127.0.0.1:1", "--tokens-file", filepath.Join(dir, "tokens.json"))
	if code == 0 || !strings.Contains(out, "unfinished import (dump sha256 abc, applied up to line 9)") || !strings.Contains(out, "procgraph import DUMP --store embedded --data "+data) {
		t.Errorf("doctor of a marked store: exit %d: %s%s", code, out, errOut)
	}
}

// mustOfflineRefuseMarked requires every offline command that reads a
// store (export, audit prune, compact, restore of it) to refuse the store
// file data, naming its marker (marker: "dump sha256 …, applied up to line
// …") and how to finish and discard its import, and to leave its import as
// it was.
func mustOfflineRefuseMarked(t *testing.T, data, marker string) {
	t.Helper()
	dir := t.TempDir()
	before, err := embedded.LoadStateOf(data, time.Second)
	if err != nil || before == nil {
		t.Fatalf("the marker of %s: %v, %v", data, before, err)
	}
	out := filepath.Join(dir, "out")
	finish := "procgraph import DUMP --store embedded --data " + data
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"export to stdout", []string{"export", "--data", data}, []string{"procgraph export does not read it", finish, "to discard it, remove " + data}},
		{"export to a file", []string{"export", "--data", data, "-o", out}, []string{"procgraph export does not read it", finish}},
		{"audit prune", []string{"audit", "prune", "--data", data, "--before", "2030-01-01", "-o", out}, []string{"procgraph audit prune does not read it", finish}},
		{"compact", []string{"compact", "--data", data}, []string{"procgraph compact does not rewrite it", finish}},
		{"restore of it", []string{"restore", data, "--data", filepath.Join(dir, "restored.db")}, []string{"unfinished import", "to discard it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, errOut := runMain(t, c.args...)
			if code == 0 || stdout != "" {
				t.Fatalf("exit %d, stdout %.200q; want refused with nothing written", code, stdout)
			}
			for _, w := range append([]string{"unfinished import", marker}, c.want...) {
				if !strings.Contains(errOut, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, errOut)
				}
			}
			for _, p := range []string{out, filepath.Join(dir, "restored.db")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the refused command left %s (%v)", p, err)
				}
			}
			if m, err := embedded.LoadStateOf(data, time.Second); err != nil || m == nil || *m != *before {
				t.Errorf("after the refused command, the marker of %s is %v (%v); want %v", data, m, err, before)
			}
		})
	}
}

// mustServeRefuseMarked requires serve to refuse the store file data,
// naming `procgraph import`.
func mustServeRefuseMarked(t *testing.T, data string) {
	t.Helper()
	_, err := startMain(t, serverOpts{Data: data, NoCatalogue: true}.args(t))
	if err == nil || !strings.Contains(err.Error(), "unfinished import") || !strings.Contains(err.Error(), "procgraph import DUMP --store embedded --data "+data) {
		t.Fatalf("serve of a marked store: %v; want refused naming procgraph import", err)
	}
}

// mustStatusBody requires r's status and returns its body as it is.
func mustStatusBody(tb testing.TB, r reply, status int) []byte {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r.Body
}

// TestImportRefusesOversizedFields: a dump's fields are bounded as the API
// bounds them (docs/dumps.md "Bounds"). The real procgraph import refuses
// a dump whose procedure summary is 60 MiB (the API caps it at 4 KiB; such
// a dump once imported, and listing it took a server to 2 GB), or whose
// turn's arguments or cause's description are past their bounds, naming
// the line and the field: into a new file it leaves none, merged into a
// store the store holds what it held.
func TestImportRefusesOversizedFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := mustFilledStoreFile(t, dir, 3)
	exported := func() []string {
		t.Helper()
		code, out, errOut := runMain(t, "export", "--data", existing)
		if code != 0 {
			t.Fatalf("export: exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[1 : len(lines)-1] // the records: the header and trailer hold times
	}
	before := exported()
	for _, c := range []struct {
		name string
		edit func(recs []dump.Record) []dump.Record
		want string
	}{
		{"a 60 MiB procedure summary", func(recs []dump.Record) []dump.Record {
			p := *recs[1].Procedure
			p.Summary = strings.Repeat("s", 60<<20)
			recs[1].Procedure = &p
			return recs
		}, "dump line 3: procedure.summary is longer than 4096 bytes"},
		{"a turn's arguments past the body bound", func(recs []dump.Record) []dump.Record {
			t := *recs[4].Approval
			t.Arguments = map[string]any{"panda_id": strings.Repeat("a", 2<<20)}
			recs[4].Approval = &t
			return recs
		}, "dump line 6: approval.arguments is longer than"},
		{"a policy's summary past the bound", func(recs []dump.Record) []dump.Record {
			last := len(recs) - 1
			p := *recs[last].Policy
			p.Summary = strings.Repeat("p", 2<<10+1)
			recs[last].Policy = &p
			return recs
		}, "policy.summary is longer than 2048 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			hostileDump(t, bad, c.edit)
			target := filepath.Join(t.TempDir(), "new.db")
			code, _, errOut := runMain(t, "import", bad, "--data", target)
			if code != 1 || !strings.Contains(errOut, c.want) || len(errOut) > 4<<10 {
				t.Errorf("import: exit %d: %.500s; want refused with %q, the value not quoted", code, errOut, c.want)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Errorf("a refused import left %s behind (%v)", target, err)
			}
			code, _, errOut = runMain(t, "import", bad, "--merge", "--data", existing)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("import --merge: exit %d: %.500s; want refused with %q", code, errOut, c.want)
			}
			if after := exported(); !slices.Equal(after, before) {
				t.Errorf("a refused merge changed the store: %d records, had %d", len(after), len(before))
			}
		})
	}
}
