package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/procgraph/procgraph/ui"
)

// mountUI serves the console (package ui) at /ui/. Its files need no
// token (the page asks for one and sends it with each API call); the
// Host/Origin protections wrap it like every route.
func mountUI(r chi.Router) {
	h := http.StripPrefix("/ui", ui.Handler())
	r.Get("/ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
	})
	r.Handle("/ui/*", h)
}
