package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"

	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"

	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/buildinfo"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/mcpdispatch"
)

// A doctor check's outcome.
const (
	checkOK   = "ok"
	checkWarn = "warn" // worth knowing; serve works
	checkFail = "FAIL" // serve would not start, or does not work
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// doctorTimeout bounds each network check.
const doctorTimeout = 5 * time.Second

// cmdDoctor checks the server at PROCGRAPH_URL (default: --addr) over its
// API when one answers (doctorServed), else a setup as serve would run it
// (serve's flags and environment twins): the settings, the store (and who
// holds its lock), auth and the tokens file, the catalogue, the upstream.
// Exit 1 when a check failed.
func cmdDoctor(ctx context.Context, args []string, s stdio) int {
	var cfg serveConfig
	st := cfg.serveFlags(newFlagSet("doctor"))
	asJSON := st.fs.Bool("json", false, "print the checks as JSON for scripts")
	err := st.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(s.out, "usage: procgraph doctor [serve's flags] [--json]\n\nWhen a procgraph answers at PROCGRAPH_URL (default: --addr), checks that server over its API with PROCGRAPH_TOKEN (or the operator token serve registered): its store, auth (the token's holder and scopes), its catalogue, each upstream server (GET /v1/upstreams; /readyz's states without the admin scope), its MCP endpoints /mcp and /mcp/interactive, and its version against this CLI's; the flags given here are not checked. When none answers, checks this machine's setup as serve would run it with the same flags and environment: the settings; the store (reachable, and the process holding an embedded store's lock); auth and the tokens file; the catalogue; the upstream; Neo4j authentication. The first line says which it did (--json: \"mode\"). Exit 1 when a check failed.\n\nflags:\n")
		printFlags(s.out, st.fs)
		return 0
	}
	var checks []check
	add := func(name, status, format string, a ...any) {
		checks = append(checks, check{Name: name, Status: status, Detail: ptext.VisibleLine(fmt.Sprintf(format, a...))})
	}
	if err == nil && st.fs.NArg() > 0 {
		err = fmt.Errorf("doctor takes no arguments, got %q", st.fs.Args())
	}
	if err == nil {
		cfg.Neo4jURI, cfg.Neo4jUsername = getenv(ctx, "NEO4J_URI"), getenv(ctx, "NEO4J_USERNAME")
		cfg.Neo4jPassword, cfg.Neo4jDatabase = getenv(ctx, "NEO4J_PASSWORD"), getenv(ctx, "NEO4J_DATABASE")
		err = cfg.resolve()
	}
	if err != nil {
		add("settings", checkFail, "%v", err)
		return reportChecks(s, checks, *asJSON, doctorOffline)
	}

	c := newClient(ctx)
	if getenv(ctx, "PROCGRAPH_URL") == "" {
		host, port, _ := net.SplitHostPort(cfg.Addr)
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		c = newClientAt(ctx, "http://"+net.JoinHostPort(host, port))
	}
	serverUp, serverErr := doctorServer(ctx, c)
	if serverUp {
		// A server answers: it is checked over its API (its store, auth,
		// catalogue, upstreams, MCP and version), not serve's settings
		// given here, which are not the ones it runs with.
		add("server", checkOK, "%s answers: checked over its API, not this machine's settings; console %s/ui/", c.base, c.base)
		checks = append(checks, doctorServed(ctx, c)...)
		return reportChecks(s, checks, *asJSON, doctorServerMode)
	}
	add("settings", checkOK, "store %s, address %s, build %s", storeText(&cfg), cfg.Addr, buildinfo.Read())
	switch {
	case serverErr != nil:
		add("server", checkFail, "%s: %v", c.base, serverErr)
	default:
		add("server", checkWarn, "no procgraph answers at %s (not running; PROCGRAPH_URL names another): checked this machine's settings (offline)", c.base)
	}
	checks = append(checks, doctorStore(ctx, &cfg, c.base))
	checks = append(checks, doctorAuth(&cfg))
	checks = append(checks, doctorCatalogue(&cfg))
	checks = append(checks, doctorUpstream(ctx, &cfg))
	return reportChecks(s, checks, *asJSON, doctorOffline)
}

// What doctor checked (--json "mode").
const (
	doctorServerMode = "server"  // a running server, over its API
	doctorOffline    = "offline" // this machine's settings: no server answered
)

// reportChecks prints the checks and returns 1 when one failed.
func reportChecks(s stdio, checks []check, asJSON bool, mode string) int {
	failed := false
	for _, ch := range checks {
		failed = failed || ch.Status == checkFail
	}
	if asJSON {
		printJSON(s.out, map[string]any{"ok": !failed, "mode": mode, "checks": checks})
	} else {
		for _, ch := range checks {
			fmt.Fprintf(s.out, "%-4s  %-9s  %s\n", ch.Status, ch.Name, ch.Detail)
		}
	}
	if failed {
		fmt.Fprintln(s.err, "procgraph doctor: a check failed")
		return 1
	}
	return 0
}

func storeText(cfg *serveConfig) string {
	if cfg.Store == "neo4j" {
		return "neo4j at " + cfg.Neo4jURI
	}
	return "embedded at " + cfg.Data
}

// doctorServer reports whether a procgraph answers at c's URL (healthz);
// an error when something answers, and not as procgraph does.
func doctorServer(ctx context.Context, c *client) (up bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	var h struct {
		Status string `json:"status"`
	}
	if _, err := c.do(ctx, "GET", "/healthz", nil, nil, &h); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return false, err // something answers, and not as procgraph does
		}
		return false, nil
	}
	return true, nil
}

// doctorStore opens the store as serve would. An embedded store file that
// another process holds is named with that process: a failure, since no
// procgraph answers at base (the holder is not a server this machine can
// use, and serve cannot start on it).
func doctorStore(ctx context.Context, cfg *serveConfig, base string) check {
	name := "store"
	if cfg.Store == "neo4j" {
		name = "neo4j"
	} else {
		if _, err := os.Stat(cfg.Data); errors.Is(err, fs.ErrNotExist) {
			return check{name, checkOK, fmt.Sprintf("%s does not exist yet: serve creates it", cfg.Data)}
		}
		if _, _, locked := lockHolder(cfg.Data); locked {
			return check{name, checkFail, fmt.Sprintf("%s is in use by %s, and no procgraph answers at %s: serve cannot open it until that process stops", cfg.Data, lockHolderText(cfg.Data), base)}
		}
		index := embedded.SearchIndexPath(cfg.Data)
		if _, err := os.Stat(index); errors.Is(err, fs.ErrNotExist) {
			defer os.RemoveAll(index) // opening builds it; doctor leaves what it found
		}
	}
	oc := *cfg
	oc.lockTimeout = 100 * time.Millisecond
	octx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	store, err := openStore(octx, &oc, zerolog.Nop())
	if err != nil {
		return check{name, checkFail, err.Error()}
	}
	err = refuseUnfinishedImport(octx, store, cfg, "it is not served")
	_ = store.Close()
	if err != nil {
		return check{name, checkFail, err.Error()}
	}
	return check{name, checkOK, storeText(cfg) + " opens and answers"}
}

// doctorAuth loads the tokens file in effect.
func doctorAuth(cfg *serveConfig) check {
	if cfg.Auth == authOff {
		return check{"auth", checkWarn, "auth is off (--auth off): every caller on this machine is anonymous with every scope; loopback only"}
	}
	if cfg.TokensFile == "" {
		return check{"auth", checkOK, "auth is on: the tokens are the store's (procgraph token list); a store's first serve creates an operator and an agent token"}
	}
	if _, err := os.Stat(cfg.TokensFile); cfg.TokensDefault && errors.Is(err, fs.ErrNotExist) {
		return check{"auth", checkOK, "auth is on: the tokens are the store's (procgraph token list); a store's first serve creates an operator and an agent token"}
	}
	f, err := auth.ReadTokensFile(cfg.TokensFile)
	if err == nil && len(f.Tokens) == 0 {
		_, err = auth.LoadTokensFile(cfg.TokensFile)
	}
	if err != nil {
		return check{"auth", checkFail, "--tokens-file / PROCGRAPH_TOKENS_FILE: " + err.Error()}
	}
	return check{"auth", checkOK, fmt.Sprintf("auth is on: %d tokens in %s, imported into the store at start", len(f.Tokens), cfg.TokensFile)}
}

// doctorCatalogue loads the --tools file (no server answers).
func doctorCatalogue(cfg *serveConfig) check {
	if cfg.ToolsFile == "" {
		return check{"catalogue", checkWarn, "no --tools file: serve keeps the catalogue its store holds"}
	}
	cat, err := loadCatalogueFile(cfg.ToolsFile)
	if err != nil {
		return check{"catalogue", checkFail, "--tools / PROCGRAPH_TOOLS: " + err.Error()}
	}
	return check{"catalogue", checkOK, fmt.Sprintf("%s: %d tools, revision %s", cfg.ToolsFile, len(cat.Tools), cat.Revision)}
}

// doctorUpstream checks that the upstream accepts connections (HTTP and
// MCP over HTTP) or that its command exists.
func doctorUpstream(ctx context.Context, cfg *serveConfig) check {
	switch {
	case cfg.UpstreamHTTP != "":
		if err := dialURL(ctx, cfg.UpstreamHTTP); err != nil {
			return check{"upstream", checkFail, fmt.Sprintf("--upstream-http %s is unreachable: %v (replays that call a tool fail with upstream_unavailable)", redactURL(cfg.UpstreamHTTP), err)}
		}
		return check{"upstream", checkOK, fmt.Sprintf("--upstream-http %s accepts connections", redactURL(cfg.UpstreamHTTP))}
	case cfg.UpstreamMCP != "":
		if err := dialURL(ctx, cfg.UpstreamMCP); err != nil {
			return check{"upstream", checkFail, fmt.Sprintf("--upstream-mcp %s is unreachable: %v (serve refuses to start)", redactURL(cfg.UpstreamMCP), err)}
		}
		return check{"upstream", checkOK, fmt.Sprintf("--upstream-mcp %s accepts connections", redactURL(cfg.UpstreamMCP))}
	case len(cfg.UpstreamMCPCommand) > 0:
		path, err := exec.LookPath(cfg.UpstreamMCPCommand[0])
		if err != nil {
			return check{"upstream", checkFail, fmt.Sprintf("--upstream-mcp-command: %v", err)}
		}
		return check{"upstream", checkOK, "--upstream-mcp-command runs " + path}
	case cfg.UpstreamsFile != "":
		return doctorUpstreams(cfg.UpstreamsFile)
	}
	return check{"upstream", checkWarn, "no upstream (--upstream-http, --upstream-mcp, --upstream-mcp-command or --upstreams): replays that call a tool fail"}
}

// doctorUpstreams checks that the upstreams file parses and that each
// command server's command exists (serve refuses to start otherwise).
func doctorUpstreams(file string) check {
	ups, err := mcpdispatch.ReadUpstreams(file)
	if err != nil {
		return check{"upstream", checkFail, fmt.Sprintf("--upstreams %s: %v (serve refuses to start)", file, err)}
	}
	for _, u := range ups {
		if len(u.Command) > 0 {
			if _, err := exec.LookPath(u.Command[0]); err != nil {
				return check{"upstream", checkFail, fmt.Sprintf("--upstreams: server %q: %v (serve refuses to start)", u.Key, err)}
			}
		}
	}
	return check{"upstream", checkOK, fmt.Sprintf("--upstreams %s: %d servers", file, len(ups))}
}

// redactURL is u without its user information.
func redactURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

// dialURL opens (and closes) a TCP connection to rawURL's host and port.
func dialURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	dctx, cancel := context.WithTimeout(ctx, upstreamDialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", host)
	if err != nil {
		return err
	}
	return conn.Close()
}

// doctorMCP opens an MCP session at path with c's token and lists its
// tools; it returns the server's version (serverInfo), "" when unknown.
func doctorMCP(ctx context.Context, c *client, path string) (check, string) {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{token: c.token, next: c.http.Transport}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "procgraph-doctor", Version: buildinfo.Version()}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.base + path, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		hint := ""
		if c.token == "" {
			hint = " (no token: set PROCGRAPH_TOKEN)"
		}
		return check{"mcp", checkFail, fmt.Sprintf("%s: %v%s", path, err, hint)}, ""
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return check{"mcp", checkFail, fmt.Sprintf("%s: tools/list: %v", path, err)}, ""
	}
	res := cs.InitializeResult()
	version := ""
	if res.ServerInfo != nil {
		version = ptext.VisibleLine(res.ServerInfo.Version)
	}
	what := "automatic phase: read-only replays only"
	if path == "/mcp/interactive" {
		what = "interactive phase: approvals in the client or by await_approval"
	}
	return check{"mcp", checkOK, fmt.Sprintf("%s (%s): %d tools; procgraph %s, protocol %s", path, what, len(tools.Tools), cmp.Or(version, "?"), cmp.Or(res.ProtocolVersion, "?"))}, version
}

// bearerTransport adds the bearer token to each request and sends it with
// next: the client's transport, which proves the server before it sends a
// credential it found (provenTransport); nil is http.DefaultTransport.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	if t.next != nil {
		return t.next.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}
