package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/answer"
)

// TestServiceErrorsAnswered: whatever the service answers an error with,
// the route answers its status (internal/answer) with the JSON error body
// of docs/api.md ("Errors": code and message, details an object), as JSON
// (nosniff is api.Protect's, around the server: TestProtect); an error that is not a fault.Error is internal and its
// text is not shown.
func TestServiceErrorsAnswered(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code fault.Code
	}{
		{"not found", fault.Errorf(fault.CodeNotFound, "procedure %q not found", "x"), fault.CodeNotFound},
		{"conflict", fault.Errorf(fault.CodeConflict, "changed meanwhile"), fault.CodeConflict},
		{"unavailable", fault.Errorf(fault.CodeUnavailable, "the store cannot be reached"), fault.CodeUnavailable},
		{"too large", fault.Errorf(fault.CodeTooLarge, "over the bound"), fault.CodeTooLarge},
		{"busy", fault.Errorf(fault.CodeBusy, "every slot is taken"), fault.CodeBusy},
		{"not a fault", errSecret{}, fault.CodeInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, f := mustFakeEnv(t, nil)
			f.svc.Err = c.err
			resp, err := http.Get(e.http.URL + "/v1/procedures/proc__x__y")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Code    string         `json:"code"`
					Message string         `json:"message"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != answer.Status(c.code) || body.Error.Code != string(c.code) || body.Error.Message == "" || body.Error.Details == nil {
				t.Fatalf("%d %+v; want %d %s with a message and details", resp.StatusCode, body, answer.Status(c.code), c.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			if body.Error.Message == (errSecret{}).Error() {
				t.Fatalf("an internal error's text is shown: %q", body.Error.Message)
			}
			if calls := f.calls(); len(calls) != 1 || calls[0] != "Get" {
				t.Fatalf("calls %v, want one Get", calls)
			}
		})
	}
}

// errSecret is an error that is not a fault.Error, with text a caller must
// not see.
type errSecret struct{}

func (errSecret) Error() string { return "driver: password=hunter2" }
