package api

import (
	"net/http/httptest"
	"testing"

	"github.com/procgraph/procgraph/fault"
)

// FuzzCheckQuery: any query string against every route's parameters is
// either accepted or refused as invalid_request naming a field; never a
// panic.
func FuzzCheckQuery(f *testing.F) {
	for _, q := range []string{"limit=25&offset=0", "cause=a&cause=b&tool=x", "read_only=true&exposed=false",
		"limit=-1", "limit=501", "limit=1e3", "depth=9", "kind=catalogue&before=pgd_1", "%zz", "a=%00", "limit=25&limit=26",
		"procedure=" + string(make([]byte, 600)), "state=down&state=ok&server=fs", "state=any"} {
		f.Add(q)
	}
	tables := [][]queryParam{findParams, plannerParams, graphParams, decisionParams, upstreamParams}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, params := range tables {
			allowed := map[string]bool{}
			for _, p := range params {
				allowed[p.name] = true
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.URL.RawQuery = raw
			err := checkQuery(r, params, allowed)
			if err == nil {
				continue
			}
			pe, ok := err.(*fault.Error)
			if !ok || pe.Code != fault.CodeInvalid || pe.Details["field"] == nil {
				t.Fatalf("checkQuery(%q) = %v, want invalid_request naming a field", raw, err)
			}
		}
	})
}
