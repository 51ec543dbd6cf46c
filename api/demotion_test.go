package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// TestLiftDemotionRoute: DELETE /v1/procedures/{name}/demotion lifts a
// demoted procedure's demotion, answering it exposed again with a health
// decision (reason health_restored, the caller as actor, the reason as
// note); a procedure that is not demoted is 409 not_demoted, an unknown
// one 404, a bad body 400, and none of them records anything.
func TestLiftDemotionRoute(t *testing.T) {
	e := mustEnv(t, envOpts{})
	ctx := context.Background()
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	name := out.Procedure.Name
	path := "/v1/procedures/" + name + "/demotion"
	c := http.DefaultClient
	if code, body := e.do(t, c, "DELETE", path, nil); code != http.StatusConflict || !strings.Contains(string(body), `"reason":"not_demoted"`) {
		t.Fatalf("lifting a procedure that is not demoted: %d %s", code, body)
	}
	for _, caller := range []string{"a", "b"} {
		if _, err := e.store.RecordUse(ctx, procedures.UseInput{Name: name, UsageKey: "k", At: time.Now(), DemoteAfter: 2,
			Run: &health.Run{Failure: health.FailureToolError, At: time.Now(), Caller: caller}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []struct {
		path string
		body any
		code int
	}{
		{path, map[string]any{"reason": strings.Repeat("x", 2049)}, 400},
		{path, map[string]any{"reason": "r", "demoted": false}, 400},
		{"/v1/procedures/proc__nothing__here/demotion", nil, 404},
	} {
		if code, body := e.do(t, c, "DELETE", bad.path, bad.body); code != bad.code {
			t.Fatalf("DELETE %s %v: %d %s, want %d", bad.path, bad.body, code, body, bad.code)
		}
	}
	if code, body := e.do(t, c, "GET", "/v1/decisions?kind=health", nil); code != 200 || strings.Contains(string(body), `"kind":"health"`) {
		t.Fatalf("refused liftings recorded: %d %s", code, body)
	}
	code, body := e.do(t, c, "DELETE", path, map[string]any{"reason": "upstream fixed"})
	if code != 200 || !strings.Contains(string(body), `"demoted":false`) || !strings.Contains(string(body), `"exposed":true`) ||
		!strings.Contains(string(body), `"reason":"health_restored"`) || !strings.Contains(string(body), `"note":"upstream fixed"`) ||
		!strings.Contains(string(body), `"kind":"health"`) {
		t.Fatalf("DELETE demotion: %d %s", code, body)
	}
	if code, body := e.do(t, c, "POST", "/v1/procedures/"+name+"/invoke", map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}); code != 200 {
		t.Fatalf("an automatic invoke after the lifting: %d %s", code, body)
	}
}
