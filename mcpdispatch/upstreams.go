package mcpdispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/strictjson"
	"github.com/procgraph/procgraph/procedures"
)

// The bounds of an upstreams file.
const (
	// MaxUpstreamsFileBytes bounds the file.
	MaxUpstreamsFileBytes = 1 << 20
	// MaxUpstreams bounds the servers of one file.
	MaxUpstreams = 64
	// maxUpstreamItems bounds a server's args, env and headers (each).
	maxUpstreamItems = 256
	// maxUpstreamString bounds one string of the file (a command, an
	// argument, a URL, a variable's or a header's value).
	maxUpstreamString = 16 << 10
	// maxPrefixBytes bounds a server's prefix.
	maxPrefixBytes = 64
	// MaxConcurrencyLimit bounds a server's max_concurrency.
	MaxConcurrencyLimit = 1024
	// MinUpstreamTimeout and MaxUpstreamTimeout bound a server's timeout.
	MinUpstreamTimeout = time.Second
	MaxUpstreamTimeout = 10 * time.Minute
)

// Upstream is one server of an upstreams file: reached by Command (argv,
// over stdio, with Env added to its environment) or by URL (streamable
// HTTP, with Headers on every request).
type Upstream struct {
	// Key is the server's key in the file: what its catalogue tools name
	// as their server (procedures.CheckServerKey).
	Key     string
	Command []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Prefix is the prefix of its tools' names (ToolName): its key, or
	// the file's "prefix" ("" keeps the tools' own names).
	Prefix string
	// TrustAnnotations takes read_only and external_access from the
	// tools' annotations at import (see CatalogueOf).
	TrustAnnotations bool
	// Timeout bounds one call (0: DefaultCallTimeout).
	Timeout time.Duration
	// MaxConcurrency bounds the calls in flight on the server (0: no bound
	// but the replays' admission).
	MaxConcurrency int
	// ProtocolVersion is the MCP revision offered first ("": the newest
	// the SDK speaks).
	ProtocolVersion string
}

// ReadUpstreams reads and parses the upstreams file at path (see
// ParseUpstreams); a file over MaxUpstreamsFileBytes is refused unread.
func ReadUpstreams(path string) ([]Upstream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxUpstreamsFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxUpstreamsFileBytes {
		return nil, fmt.Errorf("the upstreams file is larger than %d bytes", MaxUpstreamsFileBytes)
	}
	return ParseUpstreams(data)
}

// ParseUpstreams parses an upstreams file: the "mcpServers" object of
// Claude Desktop, Cursor and Claude Code,
//
//	{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "..."], "env": {"K": "V"}},
//	                "remote": {"url": "https://…/mcp", "headers": {"Authorization": "…"}}}}
//
// with, per server, "type" ("stdio", "http" or "streamable-http"; "sse" is
// refused) and procgraph's own keys: "prefix" (string; default the key),
// "trust_annotations" (boolean), "timeout" (a duration such as "45s", 1s
// to 10m), "max_concurrency" (1 to 1024) and "protocol_version" (an MCP
// revision the SDK speaks). It is strict: an unknown or repeated key, a
// value of the wrong type, a server with both or neither of command and
// url, a key procedures.CheckServerKey refuses, a prefix whose names would
// start with proc__ — each is an error with its line and column. Values
// are taken as written: no variable is expanded. The servers are returned
// by key.
func ParseUpstreams(data []byte) ([]Upstream, error) {
	p := &upstreamsParser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	ups, err := p.file()
	if err != nil {
		return nil, err
	}
	if err := strictjson.Check(data); err != nil { // an unpaired surrogate escape
		return nil, errors.New(fault.ErrorMessage(err))
	}
	return ups, nil
}

// upstreamsParser walks the file token by token, so that every error
// knows where it is.
type upstreamsParser struct {
	data []byte
	dec  *json.Decoder
}

// errAt is an error at byte offset off of the file.
func (p *upstreamsParser) errAt(off int64, format string, args ...any) error {
	line, col := strictjson.LineColumn(p.data, off)
	return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

// skipSpace is the offset of the first byte from off that is not white
// space or a separator (where the next token starts).
func (p *upstreamsParser) skipSpace(off int64) int64 {
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

// next reads a token and returns it with the offset where it starts.
func (p *upstreamsParser) next() (json.Token, int64, error) {
	off := p.skipSpace(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			at := syntax.Offset - 1 // the byte that broke the syntax, past white space
			for at >= 0 && at < int64(len(p.data)) && strings.IndexByte(" \t\r\n", p.data[at]) >= 0 {
				at++
			}
			return nil, off, p.errAt(at, "not JSON: %v", err)
		}
		if errors.Is(err, io.EOF) {
			return nil, off, p.errAt(off, "the file ends early")
		}
		return nil, off, p.errAt(off, "not JSON: %v", err)
	}
	return tok, off, nil
}

// object reads an object, calling field for each key (the value not yet
// read); a repeated key is an error.
func (p *upstreamsParser) object(path string, field func(key string, off int64) error) error {
	tok, off, err := p.next()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return p.errAt(off, "%s: must be an object", path)
	}
	seen := map[string]bool{}
	for p.dec.More() {
		kt, koff, err := p.next()
		if err != nil {
			return err
		}
		k := kt.(string) // json.Decoder only gives strings as keys
		if seen[k] {
			return p.errAt(koff, "%s: the key %q appears twice", path, k)
		}
		seen[k] = true
		if err := field(k, koff); err != nil {
			return err
		}
	}
	_, _, err = p.next() // '}'
	return err
}

// value reads one value of any kind, returning it and its offset.
func (p *upstreamsParser) value() (json.Token, int64, error) {
	tok, off, err := p.next()
	if err != nil {
		return nil, off, err
	}
	if d, ok := tok.(json.Delim); ok {
		// Skip a compound value, to report its kind.
		depth := 1
		for depth > 0 {
			t, _, err := p.next()
			if err != nil {
				return nil, off, err
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
		}
		return d, off, nil
	}
	return tok, off, nil
}

// str reads a string of at most maxUpstreamString bytes without control
// characters.
func (p *upstreamsParser) str(path string) (string, int64, error) {
	tok, off, err := p.value()
	if err != nil {
		return "", off, err
	}
	s, ok := tok.(string)
	if !ok {
		return "", off, p.errAt(off, "%s: must be a string", path)
	}
	if len(s) > maxUpstreamString {
		return "", off, p.errAt(off, "%s: longer than %d bytes", path, maxUpstreamString)
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", off, p.errAt(off, "%s: holds a control character or is not UTF-8", path)
	}
	return s, off, nil
}

// file reads the whole file.
func (p *upstreamsParser) file() ([]Upstream, error) {
	var ups []Upstream
	found := false
	err := p.object("the file", func(key string, off int64) error {
		if key != "mcpServers" {
			return p.errAt(off, "unknown key %q: an upstreams file holds \"mcpServers\" only", key)
		}
		found = true
		return p.object("mcpServers", func(key string, off int64) error {
			if len(ups) == MaxUpstreams {
				return p.errAt(off, "mcpServers: more than %d servers", MaxUpstreams)
			}
			if err := procedures.CheckServerKey(key); err != nil {
				return p.errAt(off, "mcpServers: %s", fault.ErrorMessage(err))
			}
			u, err := p.server(key, off)
			if err != nil {
				return err
			}
			ups = append(ups, u)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if off := p.skipSpace(p.dec.InputOffset()); off < int64(len(p.data)) {
		return nil, p.errAt(off, "something follows the object")
	}
	if !found {
		return nil, p.errAt(0, "no \"mcpServers\" object")
	}
	if len(ups) == 0 {
		return nil, p.errAt(0, "mcpServers: no server")
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].Key < ups[j].Key })
	return ups, nil
}

// server reads one server's object, at off.
func (p *upstreamsParser) server(key string, at int64) (Upstream, error) {
	u := Upstream{Key: key, Prefix: key}
	path := "mcpServers." + key
	var command string
	var args []string
	var kind string
	var argsAt, envAt, headersAt int64 = -1, -1, -1
	err := p.object(path, func(field string, off int64) error {
		fp := path + "." + field
		switch field {
		case "command":
			s, _, err := p.str(fp)
			if err == nil && strings.TrimSpace(s) == "" {
				err = p.errAt(off, "%s: empty", fp)
			}
			command = s
			return err
		case "args":
			argsAt = off
			return p.list(fp, func(s string) { args = append(args, s) })
		case "env":
			envAt = off
			u.Env = map[string]string{}
			return p.stringMap(fp, u.Env, func(k string) bool { return k != "" && !strings.ContainsAny(k, "=\x00") })
		case "url":
			s, soff, err := p.str(fp)
			if err != nil {
				return err
			}
			pu, perr := url.Parse(s)
			if perr != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return p.errAt(soff, "%s: not an absolute http(s) URL", fp)
			}
			u.URL = s
			return nil
		case "headers":
			headersAt = off
			u.Headers = map[string]string{}
			return p.stringMap(fp, u.Headers, headerName)
		case "type":
			s, soff, err := p.str(fp)
			if err != nil {
				return err
			}
			switch s {
			case "stdio", "http", "streamable-http":
				kind = s
				return nil
			case "sse":
				return p.errAt(soff, "%s: the SSE transport is not supported; give the server's streamable HTTP URL with \"type\": \"http\"", fp)
			}
			return p.errAt(soff, "%s: %q is not stdio, http or streamable-http", fp, s)
		case "prefix":
			s, soff, err := p.str(fp)
			if err != nil {
				return err
			}
			if len(s) > maxPrefixBytes {
				return p.errAt(soff, "%s: longer than %d bytes", fp, maxPrefixBytes)
			}
			u.Prefix = s
			return nil
		case "trust_annotations":
			tok, voff, err := p.value()
			if err != nil {
				return err
			}
			b, ok := tok.(bool)
			if !ok {
				return p.errAt(voff, "%s: must be true or false", fp)
			}
			u.TrustAnnotations = b
			return nil
		case "timeout":
			s, soff, err := p.str(fp)
			if err != nil {
				return err
			}
			d, derr := time.ParseDuration(s)
			if derr != nil || d < MinUpstreamTimeout || d > MaxUpstreamTimeout {
				return p.errAt(soff, "%s: %q is not a duration from %s to %s (such as \"45s\")", fp, s, MinUpstreamTimeout, MaxUpstreamTimeout)
			}
			u.Timeout = d
			return nil
		case "max_concurrency":
			tok, voff, err := p.value()
			if err != nil {
				return err
			}
			n, ok := tok.(json.Number)
			i, ierr := n.Int64()
			if !ok || ierr != nil || i < 1 || i > MaxConcurrencyLimit {
				return p.errAt(voff, "%s: must be an integer from 1 to %d", fp, MaxConcurrencyLimit)
			}
			u.MaxConcurrency = int(i)
			return nil
		case "protocol_version":
			s, soff, err := p.str(fp)
			if err != nil {
				return err
			}
			if !slices.Contains(mcp.SupportedProtocolVersions(), s) {
				return p.errAt(soff, "%s: %q is not one of %s", fp, s, strings.Join(mcp.SupportedProtocolVersions(), ", "))
			}
			u.ProtocolVersion = s
			return nil
		}
		return p.errAt(off, "%s: unknown key %q (known: command, args, env, url, headers, type, prefix, trust_annotations, timeout, max_concurrency, protocol_version)", path, field)
	})
	if err != nil {
		return u, err
	}
	switch {
	case command != "" && u.URL != "":
		return u, p.errAt(at, "%s: give a command or a url, not both", path)
	case command == "" && u.URL == "":
		return u, p.errAt(at, "%s: give a command (stdio) or a url (streamable HTTP)", path)
	case command != "" && headersAt >= 0:
		return u, p.errAt(headersAt, "%s.headers: only with a url", path)
	case u.URL != "" && argsAt >= 0:
		return u, p.errAt(argsAt, "%s.args: only with a command", path)
	case u.URL != "" && envAt >= 0:
		return u, p.errAt(envAt, "%s.env: only with a command", path)
	case kind == "stdio" && command == "", (kind == "http" || kind == "streamable-http") && u.URL == "":
		return u, p.errAt(at, "%s: \"type\": %q does not match how the server is reached", path, kind)
	}
	if command != "" {
		u.Command = append([]string{command}, args...)
	}
	if _, err := ToolName(u.Prefix, "t"); err != nil {
		return u, p.errAt(at, "%s: the prefix %q would give every tool a name starting with %q; set another \"prefix\"", path, u.Prefix, procedures.ProcPrefix)
	}
	return u, nil
}

// list reads an array of strings.
func (p *upstreamsParser) list(path string, each func(string)) error {
	tok, off, err := p.next()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return p.errAt(off, "%s: must be an array of strings", path)
	}
	for i := 0; p.dec.More(); i++ {
		if i == maxUpstreamItems {
			return p.errAt(off, "%s: more than %d items", path, maxUpstreamItems)
		}
		s, _, err := p.str(fmt.Sprintf("%s.%d", path, i))
		if err != nil {
			return err
		}
		each(s)
	}
	_, _, err = p.next() // ']'
	return err
}

// stringMap reads an object of strings into m; validKey checks each key.
func (p *upstreamsParser) stringMap(path string, m map[string]string, validKey func(string) bool) error {
	return p.object(path, func(k string, off int64) error {
		if len(m) == maxUpstreamItems {
			return p.errAt(off, "%s: more than %d entries", path, maxUpstreamItems)
		}
		if !validKey(k) {
			return p.errAt(off, "%s: %q is not a valid name", path, k)
		}
		s, _, err := p.str(path + "." + k)
		if err != nil {
			return err
		}
		m[k] = s
		return nil
	})
}

// source is how to reach u, with opts as the base of its options.
func (u Upstream) source(opts Options) Source {
	opts.Server = u.Key
	if u.Timeout > 0 {
		opts.CallTimeout = u.Timeout
	}
	opts.MaxConcurrency = u.MaxConcurrency
	opts.ProtocolVersion = u.ProtocolVersion
	if len(u.Headers) > 0 {
		opts.Header = http.Header{}
		for k, v := range u.Headers {
			opts.Header.Set(k, v)
		}
	}
	if len(u.Command) > 0 && len(u.Env) > 0 {
		base := opts.Env
		if base == nil {
			base = childEnv(os.Environ())
		}
		opts.Env = withEnv(base, u.Env)
	}
	return Source{URL: u.URL, Command: u.Command, Options: opts}
}

// withEnv is env with the variables of add set (replacing any of the same
// name), sorted for a stable environment.
func withEnv(env []string, add map[string]string) []string {
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := add[name]; !replaced {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}

// headerName reports whether k is an HTTP header name (an RFC 9110 token).
func headerName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
