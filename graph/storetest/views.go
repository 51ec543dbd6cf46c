package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// testViews checks what the Service derives at read time from the current
// catalogue (classification, exposure, description, typed parameters)
// through its caches: a change made by another instance is seen at the next
// read, and a read answered from the caches is byte for byte the answer of
// a service that has cached nothing.
func testViews(t *testing.T, newStore NewStore) {
	t.Run("CatalogueChangeSeenAtOnce", func(t *testing.T) { testViewCatalogueChange(t, newStore) })
	t.Run("CachedEqualsFresh", func(t *testing.T) { testViewCachedEqualsFresh(t, newStore) })
	t.Run("FindWithCatalogue", func(t *testing.T) { testFindWithCatalogue(t, newStore) })
	t.Run("GetWithCatalogue", func(t *testing.T) { testGetWithCatalogue(t, newStore) })
}

// viewTools is a catalogue in which get_jobs takes task_id typed typ and
// is read-only when jobsReadOnly; get_logs is there when withLogs.
func viewTools(jobsReadOnly bool, typ string, withLogs bool) []procedures.Tool {
	tools := []procedures.Tool{{Name: "get_jobs", ReadOnly: jobsReadOnly, InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": typ}},
	}}}
	if withLogs {
		tools = append(tools, procedures.Tool{Name: "get_logs", ReadOnly: true})
	}
	return tools
}

const viewCode = "a = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=a)\n"

func mustPutCatalogue(t *testing.T, svc *procedures.Service, tools []procedures.Tool) {
	t.Helper()
	if _, err := svc.PutCatalogue(context.Background(), tools, "tester"); err != nil {
		t.Fatal(err)
	}
}

func mustCaptureRequest(t *testing.T, svc *procedures.Service, req procedures.CaptureRequest) *procedures.Procedure {
	t.Helper()
	out, err := svc.Capture(context.Background(), req)
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return out.Procedure
}

// viewState is what a read shows of the procedure of viewCode.
type viewState struct {
	readOnly, exposed    bool
	stateChanging, unkn  []string
	taskType             string
	exposedToPlanners    bool
	descriptionHasCauseX bool
}

func readView(t *testing.T, svc *procedures.Service, name string) (find, get viewState) {
	t.Helper()
	ctx := context.Background()
	page, _, err := svc.Find(ctx, procedures.FindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	planner, err := svc.Exposed(ctx, nil, 25)
	if err != nil {
		t.Fatal(err)
	}
	state := func(p *procedures.Procedure) viewState {
		props, _ := p.InputSchema["properties"].(map[string]any)
		task, _ := props["task_id"].(map[string]any)
		typ, _ := task["type"].(string)
		return viewState{readOnly: p.ReadOnly, exposed: p.Exposed, stateChanging: p.StateChangingTools, unkn: p.UnknownTools,
			taskType: typ, exposedToPlanners: slices.ContainsFunc(planner, func(q *procedures.Procedure) bool { return q.Name == name }),
			descriptionHasCauseX: strings.Contains(p.Description, "Addressed: cause x.")}
	}
	i := slices.IndexFunc(page, func(p *procedures.Procedure) bool { return p.Name == name })
	if i < 0 {
		t.Fatalf("%s not found", name)
	}
	g, err := svc.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return state(page[i]), state(g)
}

func testViewCatalogueChange(t *testing.T, newStore NewStore) {
	s := newStore(t)
	reader := procedures.NewService(s, procedures.Options{})
	other := procedures.NewService(s, procedures.Options{}) // another instance on the same store
	mustPutCatalogue(t, other, viewTools(true, "integer", true))
	name := mustCaptureRequest(t, other, procedures.CaptureRequest{Code: viewCode, SessionID: "s1"}).Name

	steps := []struct {
		name  string
		tools []procedures.Tool
		want  viewState
	}{
		{"read-only, typed integer", viewTools(true, "integer", true),
			viewState{readOnly: true, exposed: true, stateChanging: []string{}, unkn: []string{}, taskType: "integer", exposedToPlanners: true}},
		{"get_jobs changes state, typed string", viewTools(false, "string", true),
			viewState{stateChanging: []string{"get_jobs"}, unkn: []string{}, taskType: "string"}},
		{"read-only again", viewTools(true, "string", true),
			viewState{readOnly: true, exposed: true, stateChanging: []string{}, unkn: []string{}, taskType: "string", exposedToPlanners: true}},
		{"get_logs gone", viewTools(true, "boolean", false),
			viewState{stateChanging: []string{}, unkn: []string{"get_logs"}, taskType: "boolean"}},
		{"back to the first", viewTools(true, "integer", true),
			viewState{readOnly: true, exposed: true, stateChanging: []string{}, unkn: []string{}, taskType: "integer", exposedToPlanners: true}},
	}
	for i, st := range steps {
		if i > 0 {
			mustPutCatalogue(t, other, st.tools)
		}
		for read := 0; read < 2; read++ { // the second read is answered from the caches
			find, get := readView(t, reader, name)
			for what, got := range map[string]viewState{"find": find, "get": get} {
				if !viewStateEqual(got, st.want) {
					t.Fatalf("%s, read %d, %s: got %+v, want %+v", st.name, read, what, got, st.want)
				}
			}
		}
	}

	// A new cause changes the description at once.
	mustCaptureRequest(t, other, procedures.CaptureRequest{Code: viewCode, SessionID: "s2", Cause: &procedures.CauseInput{Name: "cause x"}})
	if find, get := readView(t, reader, name); !find.descriptionHasCauseX || !get.descriptionHasCauseX {
		t.Fatalf("description without the new cause: find %v, get %v", find.descriptionHasCauseX, get.descriptionHasCauseX)
	}
}

func viewStateEqual(a, b viewState) bool {
	return a.readOnly == b.readOnly && a.exposed == b.exposed && slices.Equal(a.stateChanging, b.stateChanging) &&
		slices.Equal(a.unkn, b.unkn) && a.taskType == b.taskType && a.exposedToPlanners == b.exposedToPlanners &&
		a.descriptionHasCauseX == b.descriptionHasCauseX
}

// testViewCachedEqualsFresh compares, after each of a series of changes,
// the JSON of every read of a service that keeps reading (its caches warm)
// with a new service's (nothing cached).
func testViewCachedEqualsFresh(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	warm := procedures.NewService(s, procedures.Options{})
	mustPutCatalogue(t, warm, append(viewTools(true, "integer", true), procedures.Tool{Name: "kill_job"}))
	a := mustCaptureRequest(t, warm, procedures.CaptureRequest{Code: viewCode, SessionID: "s1"}).Name
	b := mustCaptureRequest(t, warm, procedures.CaptureRequest{Code: "a = tools.get_jobs(task_id=task_id)\ntools.kill_job(panda_id=a)\n", SessionID: "s1"}).Name
	nested := mustCaptureRequest(t, warm, procedures.CaptureRequest{Code: "x = tools." + a + "(task_id=n)\nreturn tools.get_logs(jobs=x)\n", SessionID: "s1"}).Name

	compare := func(step string) {
		t.Helper()
		read := func(svc *procedures.Service) ([]byte, error) {
			page, total, err := svc.Find(ctx, procedures.FindRequest{})
			if err != nil {
				return nil, err
			}
			planner, err := svc.Exposed(ctx, nil, 25)
			if err != nil {
				return nil, err
			}
			var got []*procedures.Procedure
			for _, n := range []string{a, b, nested} {
				p, err := svc.Get(ctx, n)
				if err != nil {
					return nil, err
				}
				got = append(got, p)
			}
			return json.Marshal(map[string]any{"page": page, "total": total, "planner": planner, "get": got})
		}
		fresh, err := read(procedures.NewService(s, procedures.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		// Readers at once (the caches are shared), each read twice.
		var wg sync.WaitGroup
		cached, errs := make([][]byte, 4), make([]error, 4)
		for i := range cached {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, errs[i] = read(warm); errs[i] == nil {
					cached[i], errs[i] = read(warm)
				}
			}()
		}
		wg.Wait()
		for i, c := range cached {
			if errs[i] != nil {
				t.Fatalf("%s: %v", step, errs[i])
			}
			if string(c) != string(fresh) {
				t.Fatalf("%s: the cached read differs from a fresh one:\ncached %s\nfresh  %s", step, c, fresh)
			}
		}
	}
	compare("captured")
	mustCaptureRequest(t, warm, procedures.CaptureRequest{Code: viewCode, SessionID: "s2", Cause: &procedures.CauseInput{Name: "cause x"}})
	compare("new cause")
	mustCaptureRequest(t, warm, procedures.CaptureRequest{Code: viewCode + "# v2\n", SessionID: "s3", Summary: "second version"})
	compare("new version")
	if _, _, err := warm.SetAutoRun(ctx, procedures.AutoRunRequest{Name: a, Enabled: true, Reason: "safe", Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	compare("granted")
	mustPutCatalogue(t, warm, append(viewTools(false, "string", true), procedures.Tool{Name: "kill_job", ReadOnly: true}))
	compare("catalogue changed")
	if _, _, err := warm.SetRetired(ctx, procedures.RetireRequest{Name: a, Retired: true, Reason: "old", Actor: "tester"}); err != nil {
		t.Fatal(err)
	}
	compare("nested procedure retired")
}

// testFindWithCatalogue checks a store's CatalogueFinder (when it is one)
// against Find and Catalogue read apart.
func testFindWithCatalogue(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	cf, ok := s.(procedures.CatalogueFinder)
	if !ok {
		t.Skip("not a CatalogueFinder")
	}
	svc := procedures.NewService(s, procedures.Options{})
	for i, sig := range [][]string{{"get_jobs"}, {"get_jobs", "get_logs"}, {"kill_job"}, {"get_logs", "x_tool"}} {
		MustCapture(t, s, In(sig, "h", "k", At(i)))
	}
	exposed, readOnly := true, false
	queries := []procedures.Query{
		{Limit: 25}, {Limit: 2, Offset: 1}, {Limit: 25, Exposed: &exposed, SkipTotal: true},
		{Limit: 25, ReadOnly: &readOnly}, {Limit: 25, Tools: []string{"get_jobs"}}, {Limit: 25, Search: []string{"jobs"}},
	}
	for step, tools := range [][]procedures.Tool{nil, viewTools(true, "integer", true), viewTools(false, "string", false)} {
		if tools != nil {
			mustPutCatalogue(t, svc, tools)
		}
		for _, q := range queries {
			page, total, cat, err := cf.FindWithCatalogue(ctx, q)
			if err != nil {
				t.Fatalf("step %d, %+v: %v", step, q, err)
			}
			wantPage, wantTotal := MustFind(t, s, q)
			wantCat, err := s.Catalogue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(page), names(wantPage)) || total != wantTotal {
				t.Fatalf("step %d, %+v: FindWithCatalogue %v (%d), Find %v (%d)", step, q, names(page), total, names(wantPage), wantTotal)
			}
			if cat == nil || cat.Revision != wantCat.Revision || len(cat.Tools) != len(wantCat.Tools) {
				t.Fatalf("step %d, %+v: catalogue %+v, want revision %s", step, q, cat, wantCat.Revision)
			}
		}
	}
}

// testGetWithCatalogue checks a store's CatalogueGetter (when it is one)
// against Get and Catalogue read apart, across catalogue changes, and that
// a name no procedure has is not_found.
func testGetWithCatalogue(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	cg, ok := s.(procedures.CatalogueGetter)
	if !ok {
		t.Skip("not a CatalogueGetter")
	}
	svc := procedures.NewService(s, procedures.Options{})
	var procs []string
	for i, sig := range [][]string{{"get_jobs", "get_logs"}, {"kill_job"}} {
		procs = append(procs, MustCapture(t, s, In(sig, "h", "k", At(i))).Procedure.Name)
	}
	for step, tools := range [][]procedures.Tool{nil, viewTools(true, "integer", true), viewTools(false, "string", false)} {
		if tools != nil {
			mustPutCatalogue(t, svc, tools)
		}
		for _, name := range procs {
			p, cat, err := cg.GetWithCatalogue(ctx, name)
			if err != nil {
				t.Fatalf("step %d, %s: %v", step, name, err)
			}
			want := MustGet(t, s, name)
			wantCat, err := s.Catalogue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != want.Name || p.CodeHash != want.CodeHash || p.Frequency != want.Frequency || !slices.Equal(p.Signature, want.Signature) {
				t.Fatalf("step %d: GetWithCatalogue %+v, Get %+v", step, p, want)
			}
			if cat == nil || cat.Revision != wantCat.Revision || len(cat.Tools) != len(wantCat.Tools) {
				t.Fatalf("step %d, %s: catalogue %+v, want revision %s", step, name, cat, wantCat.Revision)
			}
		}
		if _, _, err := cg.GetWithCatalogue(ctx, "proc__nobody__here"); fault.ErrorCode(err) != fault.CodeNotFound {
			t.Fatalf("step %d: GetWithCatalogue of no procedure: %v, want not_found", step, err)
		}
	}
}
