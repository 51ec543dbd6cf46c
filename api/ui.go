package api

import (
	"net/http"
	"strings"

	"github.com/procgraph/procgraph/ui"
)

// uiHandler serves the console's files with /ui stripped.
var uiHandler = http.StripPrefix("/ui", ui.Handler())

// serveUI serves the console (package ui) at /ui/ and reports whether r was
// its. The console is static files, not an operation of the API: it is
// outside the route table (and so OpenAPI), needs no token (the page asks
// for one and sends it with each API call), and Protect's Host/Origin
// guards wrap it like every route.
func serveUI(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case r.URL.Path == "/ui":
		ui.SetHeaders(w.Header())
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
	case strings.HasPrefix(r.URL.Path, "/ui/"):
		uiHandler.ServeHTTP(w, r)
	default:
		return false
	}
	return true
}
