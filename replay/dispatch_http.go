package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/sandbox"
)

// HTTP dispatcher defaults.
const (
	DefaultHTTPTimeout          = 30 * time.Second
	DefaultMaxResponseBytes     = 4 << 20
	maxUpstreamErrorMessageSize = 512
)

// HTTPOptions configure NewHTTPDispatcher. Zero fields take defaults.
type HTTPOptions struct {
	// Timeout bounds one call, connection to last byte; default 30s.
	Timeout time.Duration
	// MaxResponseBytes bounds a response body; default 4 MiB.
	MaxResponseBytes int64
	// Client sends the requests; a fresh http.Client when nil. Its own
	// Timeout, if any, also applies.
	Client *http.Client
}

// HTTPDispatcher dispatches tool calls to an upstream tool server (docs/api.md's
// --upstream-http contract): POST {"tool", "arguments"} as JSON, answered by
// 200 {"result": …} or 200 {"error": {"message": …}}.
type HTTPDispatcher struct {
	url    string
	opts   HTTPOptions
	client *http.Client
}

// NewHTTPDispatcher returns a dispatcher posting to rawURL, which must be an
// absolute http or https URL.
func NewHTTPDispatcher(rawURL string, opts HTTPOptions) (*HTTPDispatcher, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream URL %q is not an absolute http(s) URL", rawURL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultHTTPTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	c := opts.Client
	if c == nil {
		c = &http.Client{}
	}
	return &HTTPDispatcher{url: u.String(), opts: opts, client: c}, nil
}

type upstreamRequest struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

type upstreamResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Dispatch posts one call and returns its result decoded as JSON (numbers
// as json.Number, so integers stay exact). Every failure is an error whose
// message names the tool and the kind of failure, never the response body
// (except the upstream's own error message, bounded to 512 bytes); a
// server that cannot be reached, drops the connection or is answered for
// by a proxy's 502, 503 or 504 is a *sandbox.Error upstream_unavailable,
// the call's own timeout one of code timeout.
func (d *HTTPDispatcher) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	body, err := json.Marshal(upstreamRequest{Tool: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("tool %s: arguments do not encode as JSON: %v", tool, err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tool %s: building the upstream request: %v", tool, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, transportError(parent, ctx, tool, d.opts.Timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		msg := fmt.Sprintf("tool %s: upstream answered HTTP %d", tool, resp.StatusCode)
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			// A proxy's "the server behind me is not there": an outage.
			return nil, &sandbox.CallFailure{Code: sandbox.UpstreamUnavailable, Message: msg}
		}
		return nil, errors.New(msg)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, d.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, transportError(parent, ctx, tool, d.opts.Timeout, err)
	}
	if int64(len(raw)) > d.opts.MaxResponseBytes {
		return nil, fmt.Errorf("tool %s: upstream response is larger than %d bytes", tool, d.opts.MaxResponseBytes)
	}
	var ur upstreamResponse
	if err := json.Unmarshal(raw, &ur); err != nil {
		return nil, fmt.Errorf("tool %s: upstream response is not the expected JSON object", tool)
	}
	if ur.Error != nil {
		return nil, fmt.Errorf("tool %s failed upstream: %s", tool, text.Bounded(ur.Error.Message, maxUpstreamErrorMessageSize))
	}
	if ur.Result == nil {
		return nil, fmt.Errorf("tool %s: upstream response has neither result nor error", tool)
	}
	result, err := jsonvalue.DecodeNumbers(ur.Result)
	if err != nil {
		return nil, fmt.Errorf("tool %s: upstream result is not JSON", tool)
	}
	return result, nil
}

// transportError explains a failed round trip without leaking internals,
// with its failure class (a sandbox code): the call's own timeout is
// timeout, a server that could not be reached or dropped the connection
// upstream_unavailable. parent is the caller's context, ctx the one
// bounded by the timeout.
func transportError(parent, ctx context.Context, tool string, timeout time.Duration, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("tool %s: call abandoned: %w", tool, parent.Err())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &sandbox.CallFailure{Code: sandbox.Timeout, Message: fmt.Sprintf("tool %s: upstream did not answer within %s", tool, timeout), Cause: context.DeadlineExceeded}
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return &sandbox.CallFailure{Code: sandbox.Timeout, Message: fmt.Sprintf("tool %s: upstream timed out", tool), Cause: context.DeadlineExceeded}
	}
	return &sandbox.CallFailure{Code: sandbox.UpstreamUnavailable, Message: fmt.Sprintf("tool %s: upstream unreachable", tool)}
}
