package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/procgraph/procgraph/fault"
)

func TestCheckQuery(t *testing.T) {
	allowedOf := func(ps []queryParam) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[p.name] = true
		}
		return m
	}
	cases := []struct {
		name   string
		params []queryParam
		query  string
		field  string // "" valid
	}{
		{"empty", findParams, "", ""},
		{"every find parameter", findParams, "limit=500&offset=0&cause=a&cause=b&tool=t&min_tools=2&read_only=true&exposed=false&status=failed", ""},
		{"unknown", findParams, "sort=name", "sort"},
		{"repeated limit", findParams, "limit=1&limit=1", "limit"},
		{"limit not an integer", findParams, "limit=1.5", "limit"},
		{"limit over the max", findParams, "limit=501", "limit"},
		{"limit under the min", findParams, "limit=0", "limit"},
		{"limit with a sign", findParams, "limit=%2B5", ""},
		{"limit overflow", findParams, "limit=99999999999999999999", "limit"},
		{"empty limit", findParams, "limit=", "limit"},
		{"boolean", findParams, "read_only=1", "read_only"},
		{"status", findParams, "status=SUCCEEDED", "status"},
		{"empty cause", findParams, "cause=", "cause"},
		{"long value", findParams, "cause=" + strings.Repeat("c", 513), "cause"},
		{"invalid UTF-8", findParams, "cause=%ff", "cause"},
		{"51 tools", findParams, strings.TrimSuffix(strings.Repeat("tool=a&", 51), "&"), "tool"},
		{"malformed escape", findParams, "cause=%zz", "(query)"},
		{"semicolon", findParams, "limit=1;offset=2", "(query)"},
		{"decisions kind", decisionParams, "kind=grant&limit=1000", ""},
		{"decisions limit", decisionParams, "limit=1001", "limit"},
		{"decisions repeated procedure", decisionParams, "procedure=a&procedure=b", "procedure"},
		{"graph depth", graphParams, "depth=0", "depth"},
		{"no parameters at all", nil, "x=1", "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
			err := checkQuery(r, tc.params, allowedOf(tc.params))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("checkQuery = %v", err)
				}
				return
			}
			var pe *fault.Error
			if !errors.As(err, &pe) || pe.Code != fault.CodeInvalid || pe.Details["field"] != tc.field {
				t.Fatalf("checkQuery = %#v, want invalid_request on %s", err, tc.field)
			}
		})
	}
}

func TestSchemaErrorsNameFields(t *testing.T) {
	s := mustServer(t)
	cases := []struct {
		name, schema, body string
		code               fault.Code
		field              string // details.field; "" none
		message            string // part of the message
	}{
		{"missing code", "CaptureRequest", `{}`, fault.CodeInvalid, "code", "required"},
		{"empty code", "CaptureRequest", `{"code": ""}`, fault.CodeInvalid, "code", ""},
		{"unknown field", "CaptureRequest", `{"code": "x", "colour": 1}`, fault.CodeInvalid, "colour", "unknown field"},
		{"two unknown fields", "CaptureRequest", `{"code": "x", "a": 1, "b": 2}`, fault.CodeInvalid, "(body)", "unknown field"},
		{"nested unknown", "CaptureRequest", `{"code": "x", "cause": {"name": "n", "x": 1}}`, fault.CodeInvalid, "cause.x", ""},
		{"nested missing", "CaptureRequest", `{"code": "x", "cause": {}}`, fault.CodeInvalid, "cause.name", ""},
		{"wrong type", "CaptureRequest", `{"code": ["x"]}`, fault.CodeInvalid, "code", "string"},
		{"bad enum", "CaptureRequest", `{"code": "x", "dialect": "python"}`, fault.CodeInvalid, "dialect", ""},
		{"too long", "CaptureRequest", `{"code": "x", "summary": "` + strings.Repeat("s", 4097) + `"}`, fault.CodeInvalid, "summary", ""},
		{"array item", "ToolsPut", `{"tools": [{"name": "a"}, {"name": 2}]}`, fault.CodeInvalid, "tools.1.name", ""},
		{"missing phase", "InvokeRequest", `{"arguments": {}}`, fault.CodeInvalid, "phase", "phase"},
		{"arguments not an object", "InvokeRequest", `{"phase": "automatic", "arguments": [1]}`, fault.CodeInvalid, "arguments", ""},
		{"enabled missing", "AutoRunPut", `{"reason": "x"}`, fault.CodeInvalid, "enabled", ""},
		{"duplicate key", "AutoRunPut", `{"enabled": true, "enabled": false}`, fault.CodeInvalid, "enabled", "twice"},
		{"duplicate nested key", "InvokeRequest", `{"phase": "automatic", "arguments": {"a": {"b": 1, "b": 2}}}`, fault.CodeInvalid, "arguments.a.b", "twice"},
		{"syntax error", "ReasonBody", `{"reason": }`, fault.CodeInvalid, "", "byte"},
		{"empty", "ReasonBody", ``, fault.CodeInvalid, "", "empty"},
		{"trailing", "ReasonBody", `{} {}`, fault.CodeInvalid, "", "more than one"},
		{"too large", "ReasonBody", `{"reason": "` + strings.Repeat("r", 9000) + `"}`, fault.CodeTooLarge, "", ""},
		{"paired surrogates are fine", "CaptureRequest", `{"code": "\ud83d\ude00"}`, "", "", ""},
		{"escaped backslash before u", "CaptureRequest", `{"code": "\\ud800"}`, "", "", ""},
		{"lone low surrogate", "CaptureRequest", `{"code": "\udc00"}`, fault.CodeInvalid, "", "surrogate"},
		{"high surrogate then text", "CaptureRequest", `{"code": "\ud800abcdef"}`, fault.CodeInvalid, "", "surrogate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := map[string]any{}
			err := s.decodeBody(strings.NewReader(tc.body), tc.schema, 8192, &dst)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("decodeBody = %v", err)
				}
				return
			}
			var pe *fault.Error
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("decodeBody = %v, want %s", err, tc.code)
			}
			if tc.field != "" && pe.Details["field"] != tc.field {
				t.Fatalf("details.field = %v, want %s (%v)", pe.Details["field"], tc.field, pe)
			}
			if tc.field != "" && tc.field != "(body)" && !strings.Contains(pe.Message, tc.field) {
				t.Fatalf("message %q does not name %s", pe.Message, tc.field)
			}
			if !strings.Contains(pe.Message, tc.message) {
				t.Fatalf("message %q lacks %q", pe.Message, tc.message)
			}
		})
	}
}

func mustServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestRoutesInOpenAPI walks the chi router and checks that every route and
// method is in the OpenAPI document, and every documented one is routed.
func TestRoutesInOpenAPI(t *testing.T) {
	s := mustServer(t)
	raw, err := json.Marshal(s.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	routed := map[string]bool{}
	err = chi.Walk(s.Router(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routed[method+" "+route] = true
		item, ok := paths[route].(map[string]any)
		if !ok {
			t.Errorf("%s %s is routed but not in the document", method, route)
			return nil
		}
		if item[strings.ToLower(method)] == nil {
			t.Errorf("%s %s: the method is not in the document", method, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routed) < 19 {
		t.Fatalf("only %d routes", len(routed))
	}
	ids := map[string]bool{}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			if !routed[strings.ToUpper(method)+" "+path] {
				t.Errorf("%s %s is documented but not routed", method, path)
			}
			id := op.(map[string]any)["operationId"].(string)
			if ids[id] {
				t.Errorf("operationId %s twice", id)
			}
			ids[id] = true
		}
	}
	// The document is JSON, and its $refs resolve.
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, m := range regexp.MustCompile(`"\$ref":"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(string(b), -1) {
		if schemas[m[1]] == nil {
			t.Errorf("$ref %s does not resolve", m[1])
		}
	}
}

// TestUnavailableStore closes the store under a running server: /readyz
// answers 503 and a request that needs the store 503 unavailable.
func TestUnavailableStore(t *testing.T) {
	e := mustEnv(t, envOpts{})
	c := e.http.Client()
	if st, _ := e.do(t, c, "GET", "/readyz", nil); st != 200 {
		t.Fatalf("/readyz %d", st)
	}
	_ = e.store.Close()
	cases := []struct {
		name, method, path string
		body               any
	}{
		{"find", "GET", "/v1/procedures", nil},
		{"capture", "POST", "/v1/procedures", map[string]any{"code": readOnlyCode}},
		{"decisions", "GET", "/v1/decisions", nil},
		{"tools", "GET", "/v1/tools", nil},
	}
	if st, body := e.do(t, c, "GET", "/readyz", nil); st != 503 || !strings.Contains(string(body), "unavailable") {
		t.Fatalf("/readyz after close: %d %s", st, body)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.do(t, c, tc.method, tc.path, tc.body)
			var eb struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &eb)
			if st != 503 || eb.Error.Code != "unavailable" {
				t.Fatalf("%d %s", st, body)
			}
		})
	}
	if st, _ := e.do(t, c, "GET", "/healthz", nil); st != 200 {
		t.Fatalf("/healthz %d", st)
	}
}

var _ = slices.Equal[[]string]
var _ = context.Background
