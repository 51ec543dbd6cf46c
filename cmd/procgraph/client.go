package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// client talks to a procgraph server: PROCGRAPH_URL (default
// http://127.0.0.1:8474) with PROCGRAPH_TOKEN as the bearer token.
type client struct {
	base  string
	token string
	http  *http.Client
}

func newClient() *client {
	base := os.Getenv("PROCGRAPH_URL")
	if base == "" {
		base = "http://127.0.0.1:8474"
	}
	return &client{base: strings.TrimRight(base, "/"), token: os.Getenv("PROCGRAPH_TOKEN"), http: &http.Client{Timeout: 2 * time.Minute}}
}

// apiError is an error answer from the server.
type apiError struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
	if r, ok := e.Details["reason"].(string); ok {
		msg += " [reason: " + r + "]"
	}
	if d, ok := e.Details["decision"].(map[string]any); ok {
		msg += fmt.Sprintf(" [decision %v: %v]", d["id"], d["reason"])
	}
	if l, ok := e.Details["line"]; ok {
		msg += fmt.Sprintf(" [line %v, column %v, feature %v]", l, e.Details["column"], e.Details["feature"])
	}
	return msg
}

// do sends a request and decodes a JSON answer into out.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body any, headers map[string]string, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach procgraph at %s: %v", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 400 {
		var eb struct {
			Error struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return resp.StatusCode, &apiError{Status: resp.StatusCode, Code: "http_error", Message: strings.TrimSpace(string(data))}
		}
		return resp.StatusCode, &apiError{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("the server's answer is not JSON: %v", err)
		}
	}
	return resp.StatusCode, nil
}

// repeated is a flag that may be given many times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// parseInterleaved parses flags that may stand before, between or after
// positional arguments, and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// output prints v as JSON with --json, else through the table printer.
func output(stdout io.Writer, asJSON bool, v any, table func(io.Writer)) {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return
	}
	table(stdout)
}

// fail prints a client error and returns the exit code: 1 for server
// answers and transport errors.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "procgraph %s: %v\n", cmd, err)
	return 1
}
