package mcpdispatch

import (
	"fmt"
	"io"
	"net/http"
)

// responseLimit is the most NewHTTP reads of one HTTP response: a result
// of MaxResultBytes may come twice (structured content and its JSON text),
// plus the envelope.
func responseLimit(maxResult int64) int64 { return 2*maxResult + 1<<20 }

// limitTransport bounds every response body it returns: reading past max
// bytes fails, so an upstream cannot make procgraph hold an answer of any
// size before the result bound is checked. Every response answers one
// request, but the standalone SSE stream of a server whose tools/list_changed
// is listened to (Options.OnToolsChanged), which carries notifications only
// and is bounded alike: past the bound it ends, and the SDK opens it again.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// limitedBody fails once more than max bytes were read.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly max from a longer one.
		// Whatever the probe read, nothing past max reaches the caller.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("upstream MCP answer is larger than %d bytes", b.max)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
