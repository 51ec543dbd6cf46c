package api

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
)

// urlParam is the route parameter key, unescaped. chi routes on the raw
// path when it has escapes the decoded path loses (a name with "/" sent as
// %2F), and then hands the parameter over still escaped: without this, a
// cause or procedure whose name holds "/" could not be read.
func urlParam(r *http.Request, key string) string {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
