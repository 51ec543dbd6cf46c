package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	ptext "github.com/procgraph/procgraph/internal/text"
)

// client talks to a procgraph server: PROCGRAPH_URL (default
// http://127.0.0.1:8474) with PROCGRAPH_TOKEN as the bearer token, else
// the operator token a serve on this machine registered for that URL
// (findCredential), sent only to a server that proves it is that serve.
type client struct {
	base  string
	token string
	// noToken says why no registered credential was used, for a 401.
	noToken error
	// procedure is the procedure a command names: a not_found answer
	// suggests the nearest one the server knows (procedureHint).
	procedure string
	http      *http.Client
}

func newClient(ctx context.Context) *client {
	return newClientAt(ctx, cmp.Or(getenv(ctx, "PROCGRAPH_URL"), defaultURL))
}

// newClientAt is newClient for the server at base.
func newClientAt(ctx context.Context, base string) *client {
	c := &client{base: strings.TrimRight(base, "/"), token: getenv(ctx, "PROCGRAPH_TOKEN"), http: &http.Client{Timeout: 2 * time.Minute}}
	if c.token == "" {
		var proven http.RoundTripper
		c.token, proven, c.noToken = findCredential(c.base)
		if proven != nil {
			c.http.Transport = proven
		}
	}
	return c
}

// defaultURL is where the client commands look for a server without
// PROCGRAPH_URL: serve's default --addr.
const defaultURL = "http://127.0.0.1:8474"

// envKey carries, in a context, settings that take the place of the
// environment's (withEnv).
type envKey struct{}

// withEnv returns ctx whose getenv answers name from env before the
// process environment: tests run commands against servers of their own
// without changing the process's environment (t.Setenv would serialize
// them).
func withEnv(ctx context.Context, env map[string]string) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// getenv is the environment variable name, or what withEnv set in its
// place.
func getenv(ctx context.Context, name string) string {
	if env, ok := ctx.Value(envKey{}).(map[string]string); ok {
		if v, ok := env[name]; ok {
			return v
		}
	}
	return os.Getenv(name)
}

// apiError is an error answer from the server; Body is the answer as sent.
type apiError struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	Body    []byte
	Hint    string // what the client adds (how to give a token)
}

// Error is the first line; detail lines follow, indented, for what a
// person needs next: the reason, the decision, the server's suggestion,
// where in the code. Every part the server sent is shown visibly
// (text.VisibleLine): it may quote what an agent wrote, and no part can
// start a line of its own.
func (e *apiError) Error() string {
	v := func(x any) string { return ptext.VisibleLine(fmt.Sprint(x)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s (HTTP %d): %s", v(e.Code), e.Status, v(e.Message))
	if r, ok := e.Details["reason"].(string); ok {
		fmt.Fprintf(&b, "\n  reason: %s", v(r))
	}
	d, _ := e.Details["decision"].(map[string]any)
	if d != nil {
		fmt.Fprintf(&b, "\n  decision: %s (%s)", v(d["id"]), v(d["reason"]))
	}
	suggestion, _ := e.Details["suggestion"].(string)
	if s, ok := d["suggestion"].(string); ok && suggestion == "" {
		suggestion = s
	}
	if suggestion == "" {
		suggestion = e.Hint
	}
	if suggestion != "" {
		fmt.Fprintf(&b, "\n  suggestion: %s", v(suggestion))
	}
	if l, ok := e.Details["line"]; ok {
		fmt.Fprintf(&b, "\n  at: line %s, column %s, feature %s", v(l), v(e.Details["column"]), v(e.Details["feature"]))
	}
	return b.String()
}

// do sends a request, decodes a JSON answer into out (when not nil) and
// returns the answer as sent.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body, out any) ([]byte, error) {
	resp, err := c.send(ctx, c.http, method, path, query, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("the server's answer is not JSON: %v", err)
		}
	}
	return data, nil
}

// stream sends a GET for an answer of any size (a backup, a dump) and
// returns the response, whose body the caller reads and closes. Unlike do
// it has no overall timeout: a large answer takes what it takes, and ctx
// ends it. Errors are do's.
func (c *client) stream(ctx context.Context, path string) (*http.Response, error) {
	hc := *c.http
	hc.Timeout = 0
	return c.send(ctx, &hc, "GET", path, nil, nil)
}

// send sends a request with hc (body JSON-encoded when not nil, the bearer
// token when set) and returns a successful response; an error answer is
// read and returned as an *apiError (code http_error, with the text as
// sent, when it is not the API's JSON error shape, as from a proxy).
func (c *client) send(ctx context.Context, hc *http.Client, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if np := (*notProvenError)(nil); errors.As(err, &np) {
			return nil, np
		}
		return nil, fmt.Errorf("cannot reach procgraph at %s: %v", c.base, err)
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var eb struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
		return nil, &apiError{Status: resp.StatusCode, Code: "http_error", Message: strings.TrimSpace(string(data)), Body: data}
	}
	ae := &apiError{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details, Body: data}
	if resp.StatusCode == http.StatusUnauthorized && c.token == "" {
		ae.Hint = "set PROCGRAPH_TOKEN (serve on this machine keeps the operator token in procgraph-operator.token beside its tokens file)"
		if c.noToken != nil {
			ae.Hint = c.noToken.Error() + "; " + ae.Hint
		}
	}
	return nil, ae
}

// pathSegment is s as one path segment of a request: escaped (a "/" as
// %2F), and a "." or ".." as %2E and %2E%2E, which a server or proxy
// would otherwise remove as a dot segment (a session or cause may be
// named "..").
func pathSegment(s string) string {
	if s == "." || s == ".." {
		return strings.Repeat("%2E", len(s))
	}
	return url.PathEscape(s)
}

// about returns c for commands that name procedure.
func (c *client) about(procedure string) *client {
	c.procedure = procedure
	return c
}

// call runs one request of a client command and prints its answer: with
// --json the server's JSON as it sent it (indented, keys in the API's
// order), else human's rendering of out. A failure prints the error on
// stderr (and, with --json, the server's error answer on stdout) and
// returns exit code 1.
func (c *client) call(ctx context.Context, cl *cmdline, s stdio, method, path string, query url.Values, body, out any, human func(w io.Writer)) int {
	raw, err := c.do(ctx, method, path, query, body, out)
	if err != nil {
		if c.procedure != "" {
			err = procedureHint(ctx, c, c.procedure, err)
		}
		return failAnswer(cl, s, err)
	}
	if cl.asJSON() {
		printRawJSON(s.out, raw)
		return 0
	}
	human(s.out)
	return 0
}

// failAnswer prints a failed command's error; with --json an error answer
// from the server also goes to stdout as it was sent.
func failAnswer(cl *cmdline, s stdio, err error) int {
	if ae, ok := err.(*apiError); ok && cl.asJSON() && ae.Body != nil {
		printRawJSON(s.out, ae.Body)
	}
	return fail(s.err, cl.fs.Name(), err)
}

// fail prints a command's error, visibly (an *apiError renders its parts
// itself), and returns exit code 1.
func fail(stderr io.Writer, cmd string, err error) int {
	msg := err.Error()
	if _, ok := err.(*apiError); !ok {
		msg = ptext.Visible(msg)
	}
	fmt.Fprintf(stderr, "procgraph %s: %s\n", cmd, msg)
	return 1
}

// printRawJSON indents JSON without reordering its keys.
func printRawJSON(w io.Writer, raw []byte) {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		w.Write(raw)
		return
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

// printJSON prints v as indented JSON (a struct's fields in their order).
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// The human renderings below show every value through text.Visible (a
// cell or a value: text.VisibleLine): values are what agents and tool
// servers wrote, and a person must read them as they are, not as a
// terminal would act on them.

// keyValues prints "key: value" lines, values aligned, each on its line;
// pairs alternate key and value.
func keyValues(w io.Writer, pairs ...string) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	_, color := display(w)
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(tw, "%s:\t%s\n", pairs[i], paint(ptext.VisibleLine(pairs[i+1]), color))
	}
	tw.Flush()
}

// block prints text of many lines (code, a run's output) after a blank
// line, ending in one newline.
func block(w io.Writer, s string) {
	fmt.Fprintf(w, "\n%s\n", ptext.Visible(strings.TrimRight(s, "\n")))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// compactJSON is v on one line, for a key: value field: `<`, `>` and `&`
// as they are (no HTML escapes, which the display escape would show as
// \u005cu003c); what a terminal would act on is shown visibly where the
// line is printed (keyValues).
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
