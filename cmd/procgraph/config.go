package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/peterbourgon/ff/v3"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/notify"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/sandbox"
)

// serveConfig is `procgraph serve`'s configuration: flags, each with an
// environment twin (PROCGRAPH_ and the flag's name in capitals, - as _); a
// flag wins over its twin. The NEO4J_* settings are environment only.
type serveConfig struct {
	Addr               string
	Store              string // embedded or neo4j, "" until resolved
	Data               string
	Neo4jURI           string
	Neo4jUsername      string
	Neo4jPassword      string
	Neo4jDatabase      string
	ToolsFile          string
	UpstreamHTTP       string
	UpstreamMCP        string
	UpstreamMCPCommand []string
	// UpstreamsFile is the upstreams file (mcpdispatch.ParseUpstreams):
	// several named MCP servers, exclusive with the --upstream-* flags.
	UpstreamsFile string
	// CatalogueRefresh is how often the servers of UpstreamsFile are
	// listed for the catalogue (0: at start, on tools/list_changed and on
	// reconnection only).
	CatalogueRefresh time.Duration
	// Auth is "tokens" (the default) or "off" (loopback only: docs/design.md
	// "Secure by default"). With tokens, TokensFile is the file in effect,
	// absolute (see tokensFilePath), and TokensDefault says it is the one
	// next to the data file, which serve creates when it is missing.
	Auth                 string
	TokensFile           string
	TokensDefault        bool
	AllowMutatingAutorun bool
	// DemoteAfter is the failures counting toward demotion of a current
	// version, from two callers, that demote its procedure (0: never;
	// health.DemotedAfter).
	DemoteAfter int
	// RecordResponses keeps recordings of successful runs,
	// RecordingsPerVersion of them per version.
	RecordResponses      bool
	RecordingsPerVersion int
	LogLevel             string
	// LogFormat is "text" (zerolog's ConsoleWriter, for people), "json",
	// or "" until resolved against stderr: text on a terminal, else JSON.
	LogFormat        string
	SandboxWorkers   int
	InProcessSandbox bool
	// Admission and memory bounds (docs/design.md "Admission and deadlines").
	MaxConcurrentReplays int           // 0 until resolved: 4×SandboxWorkers
	ReplayQueue          int           // -1 until resolved: 2×MaxConcurrentReplays
	MaxReplaysPerToken   int           // -1 until resolved (see admissionConfig); 0: no cap
	ReplayTimeout        time.Duration // each invoke's deadline, from its arrival
	MaxInflightBytes     int64
	MaxCallBytes         int64
	// HeapFloor is the least the heap may grow between two collections
	// (internal/heapfloor; 0: the Go runtime's pacing alone). GOGC in the
	// environment turns it off.
	HeapFloor int64
	// MCP sessions open at once: in total and per token holder.
	MCPMaxSessions         int
	MCPMaxSessionsPerToken int
	// The turn gate (docs/design.md "The turn gate"): pending approvals at
	// once (in total and per requester), and each approval's deadline from
	// its turn's arrival.
	MaxPendingApprovals    int
	MaxPendingPerRequester int // 0 until resolved: min(8, MaxPendingApprovals)
	ApprovalTimeout        time.Duration
	ReviewDefault          string
	// Long polls (wait_s, await_approval) held at once, and relevance
	// searches (q) running at once, by this server.
	MaxWaiters            int
	MaxConcurrentSearches int           // 0 until resolved: 2×cores
	AuditRetention        time.Duration // 0: the audit log is kept forever
	AuditArchiveDir       string
	// NotifyWebhooks are where approvals are posted (notify); NotifySecret
	// the HMAC key read from NotifySecretFile; NotifyFormat json or slack;
	// PublicURL where people reach this server (the console links).
	NotifyWebhooks   []string
	NotifySecretFile string
	NotifyFormat     string
	PublicURL        string
	// lockTimeout is how long opening the embedded store waits for
	// another process's lock (0: embedded.DefaultLockTimeout); not a
	// setting: doctor asks once.
	lockTimeout time.Duration
	// runGrace is the turn gate's gate.Options.RunGrace (0:
	// gate.DefaultRunGrace); not a setting: a test shortens it to see a
	// lost run ended (it must cover every instance's replay timeout).
	runGrace time.Duration
}

// envPrefix prefixes every flag's environment twin.
const envPrefix = "PROCGRAPH"

// defaultTokensFile is the tokens file next to the embedded data file that
// serve imports into the store when it exists and none is configured
// (docs/design.md "Tokens in the store").
const defaultTokensFile = "procgraph-tokens.json"

// The --log-format values.
const (
	logText = "text"
	logJSON = "json"
)

// The --auth values.
const (
	authTokens = "tokens"
	authOff    = "off"
)

// serveFlags registers every serve setting on fs, with its default.
func (c *serveConfig) serveFlags(fs *flag.FlagSet) *settings {
	s := &settings{fs: fs}
	s.add(&text{&c.Addr, validHostPort}, "addr", "127.0.0.1:8474", "listen address")
	s.add(&text{&c.Store, oneOf("embedded", "neo4j")}, "store", "", "embedded or neo4j (default neo4j when NEO4J_URI is set, else embedded)")
	s.add(&text{&c.Data, nonBlank}, "data", "./procgraph.db", "embedded store file")
	s.add(&text{&c.ToolsFile, nil}, "tools", "", "catalogue file loaded at start; replaces the stored catalogue")
	s.add(&text{&c.UpstreamHTTP, httpURL}, "upstream-http", "", "where replayed tool calls go (POST {\"tool\", \"arguments\"})")
	s.add(&text{&c.UpstreamMCP, httpURL}, "upstream-mcp", "", "streamable HTTP MCP server where replayed tool calls go")
	s.add((*argv)(&c.UpstreamMCPCommand), "upstream-mcp-command", "", "MCP server command (\"CMD ARGS\") started and spoken to over stdio")
	s.add(urlList{&c.NotifyWebhooks}, "notify-webhook", "", "a URL (http or https) posted on each new pending approval, its resolution and its expiry (repeatable; in the environment, URLs separated by spaces); never code, arguments or tokens")
	s.add(&text{&c.NotifySecretFile, nonBlank}, "notify-secret-file", "", "a file holding the HMAC-SHA256 key the webhook posts are signed with (Procgraph-Signature over Procgraph-Timestamp, '.', the body)")
	s.add(&text{&c.NotifyFormat, oneOf(notify.FormatJSON, notify.FormatSlack)}, "notify-format", notify.FormatJSON, "json (the event) or slack (text and blocks, as Slack's incoming webhooks take)")
	s.add(&text{&c.PublicURL, httpURL}, "public-url", "", "where people reach this server (http or https), for the console links of notifications; default the listen address")
	s.add(&text{&c.UpstreamsFile, nonBlank}, "upstreams", "", "upstreams file: several MCP servers as an mcpServers object (the Claude Desktop / Cursor / Claude Code format); a server's tool T is PREFIX__T; exclusive with --upstream-*")
	s.add(&duration{&c.CatalogueRefresh, 0, 24 * time.Hour}, "catalogue-refresh", mcpdispatch.DefaultRefreshInterval.String(), "how often the catalogue follows what the --upstreams servers list (also at start, on their tools/list_changed and when one reconnects); 0: only then; else at least 1s")
	s.add(&text{&c.Auth, oneOf(authTokens, authOff)}, "auth", authTokens, "tokens (bearer tokens, the default) or off (every caller anonymous with every scope but MCP's grant; loopback only)")
	s.add(&text{&c.TokensFile, nil}, "tokens-file", "", "a bearer tokens file (hashes and scopes) imported into the store at start (holders the store does not know); a relative path is resolved against the data file's directory; default "+defaultTokensFile+" next to the data file when it exists; absolute with --store neo4j")
	s.add((*strictBool)(&c.AllowMutatingAutorun), "allow-mutating-autorun", "false", "true or false: expose and grant state-changing procedures (interactive phase only)")
	s.add(&count{&c.DemoteAfter, 0, health.MaxDemoteAfter}, "demote-after", strconv.Itoa(health.DefaultDemoteAfter), "failures of a procedure's current version since its last success, from two callers or more (outages and timeouts not counted), that demote it: not exposed, its grant inactive (unhealthy), still invokable interactively, until a passing verification, a promote or procgraph undemote; 0 never demotes")
	s.add((*strictBool)(&c.RecordResponses), "record-responses", "true", "true or false: keep recordings of successful runs (their tool calls and answers) for verification; false deletes the stored ones at start")
	s.add(&count{&c.RecordingsPerVersion, 1, recording.MaxRecordingsPerVersion}, "recordings-per-version", strconv.Itoa(recording.DefaultRecordingsPerVersion), "recordings kept per version, one per distinct argument set, the newest")
	s.add(&text{&c.LogLevel, oneOf("debug", "info", "warn", "error")}, "log-level", "info", "debug, info, warn or error")
	s.add(&text{&c.LogFormat, oneOf(logText, logJSON)}, "log-format", "", "text (one readable line per record) or json (one object per line); default text when stderr is a terminal, else json")
	s.add(&count{&c.SandboxWorkers, 1, 64}, "sandbox-workers", "2", "warm sandbox worker processes")
	s.add((*strictBool)(&c.InProcessSandbox), "sandbox-in-process", "false", "true runs replays in the server process (tests and benchmarks only: no memory limit)")
	c.ReplayQueue, c.MaxReplaysPerToken = -1, -1
	s.add(&count{&c.MaxConcurrentReplays, 1, 1024}, "max-concurrent-replays", "", "replays run at once (sandbox workers busy); default 4×sandbox-workers")
	s.add(&count{&c.ReplayQueue, 0, 100000}, "replay-queue", "", "replays that may wait for a worker; more are refused with 429 busy; default 2×max-concurrent-replays")
	s.add(&count{&c.MaxReplaysPerToken, 0, 100000}, "max-replays-per-token", "", "replays one token holder may have running or waiting (0: no cap); default max-concurrent-replays with tokens, no cap without")
	s.add(&duration{&c.ReplayTimeout, 100 * time.Millisecond, 4 * time.Minute}, "replay-timeout", "30s", "each invoke's deadline from its arrival: the wait for a worker counts (at most 4m, under the 5-minute write timeout)")
	s.add(&byteSize{&c.MaxInflightBytes, 16 << 20, 64 << 30}, "max-inflight-bytes", "256MiB", "bytes of tool-call arguments and results the server holds at once, across replays")
	s.add(&byteSize{&c.HeapFloor, 0, 16 << 30}, "heap-floor", "64MiB", "the least the Go heap grows between two collections (0 to 16GiB; 0: the runtime's own pacing); a live heap above it is collected as GOGC=100 would; off when GOGC is set")
	s.add(&byteSize{&c.MaxCallBytes, 64 << 10, 60 << 20}, "max-call-bytes", "4MiB", "bytes of one tool call's arguments or result, as JSON")
	s.add(&count{&c.MCPMaxSessions, 1, 1 << 20}, "mcp-max-sessions", "1024", "MCP sessions open at once (/mcp and /mcp/interactive); a new one past it is refused with 429 busy")
	s.add(&count{&c.MCPMaxSessionsPerToken, 1, 1 << 20}, "mcp-max-sessions-per-token", "64", "MCP sessions one token holder may have open; a new one past it is refused with 429 busy")
	s.add(&count{&c.MaxPendingApprovals, 1, 1 << 20}, "max-pending-approvals", "32", "turns awaiting an operator at once; a new one past it is refused with 429 busy")
	s.add(&count{&c.MaxPendingPerRequester, 1, 1 << 20}, "max-pending-per-requester", "", "pending approvals one requester (token holder) may hold, at most max-pending-approvals; a new one past it is refused with 429 busy; default 8 (or max-pending-approvals when lower)")
	s.add(&count{&c.MaxWaiters, 1, 1 << 20}, "max-waiters", "1024", "long polls (wait_s, await_approval) held at once; one past it is refused with 429 busy")
	s.add(&count{&c.MaxConcurrentSearches, 1, 1 << 16}, "max-concurrent-searches", "", "relevance searches (q) running at once; one past it is refused with 429 busy; default 2×cores")
	s.add(&duration{&c.AuditRetention, 0, 100 * 365 * 24 * time.Hour}, "audit-retention", "0s", "keep audit records this long (0: forever); older ones are pruned after the whole store is archived into --audit-archive-dir")
	s.add(&text{&c.AuditArchiveDir, nil}, "audit-archive-dir", "", "where --audit-retention writes its archives (full dumps, importable)")
	s.add(&duration{&c.ApprovalTimeout, time.Second, 24 * time.Hour}, "approval-timeout", "330s", "each approval's one deadline from its turn's arrival: the wait, the resolution and the run's start (at least 1s)")
	s.add(&text{&c.ReviewDefault, oneOf(string(gate.ReviewBlock), string(gate.ReviewAtCall))}, "review-default", "block", "how a turn submitted without review is reviewed: block (the whole block before it runs) or at_call (each state-changing call as the run reaches it)")
	return s
}

// parseServeConfig reads flags, then their environment twins, then the
// NEO4J_* environment. An invalid value is an error naming the setting,
// never a silent default; flag.ErrHelp asks for the usage.
func parseServeConfig(args []string) (*serveConfig, error) {
	return parseServeConfigEnv(args, os.Getenv)
}

// parseServeConfigEnv is parseServeConfig reading the NEO4J_* settings
// through getenv.
func parseServeConfigEnv(args []string, getenv func(string) string) (*serveConfig, error) {
	var c serveConfig
	s := c.serveFlags(newFlagSet("serve"))
	if err := s.parse(args); err != nil {
		return nil, err
	}
	if s.fs.NArg() > 0 {
		return nil, fmt.Errorf("serve takes no arguments, got %q", s.fs.Args())
	}
	c.Neo4jURI, c.Neo4jUsername = getenv("NEO4J_URI"), getenv("NEO4J_USERNAME")
	c.Neo4jPassword, c.Neo4jDatabase = getenv("NEO4J_PASSWORD"), getenv("NEO4J_DATABASE")
	return &c, c.resolve()
}

// resolve checks what spans settings and fills the defaults that depend on
// others.
func (c *serveConfig) resolve() error {
	if err := c.resolveStore(); err != nil {
		return err
	}
	if c.CatalogueRefresh > 0 && c.CatalogueRefresh < time.Second {
		return fmt.Errorf("--catalogue-refresh / PROCGRAPH_CATALOGUE_REFRESH: %s is under 1s (0 turns the timer off)", c.CatalogueRefresh)
	}
	if c.AuditRetention > 0 && c.AuditArchiveDir == "" {
		return fmt.Errorf("--audit-retention needs --audit-archive-dir: the store is archived before anything is pruned")
	}
	upstreams := 0
	for _, set := range []bool{c.UpstreamHTTP != "", c.UpstreamMCP != "", len(c.UpstreamMCPCommand) > 0, c.UpstreamsFile != ""} {
		if set {
			upstreams++
		}
	}
	if upstreams > 1 {
		// Exclusive rather than combined: the flags' one server has no key,
		// and its bare tool names could collide with a file's.
		return fmt.Errorf("--upstream-http, --upstream-mcp, --upstream-mcp-command and --upstreams are exclusive: set at most one")
	}
	switch {
	case c.MaxPendingPerRequester == 0:
		c.MaxPendingPerRequester = gate.PendingBounds{Total: c.MaxPendingApprovals}.OrDefaults().PerRequester
	case c.MaxPendingPerRequester > c.MaxPendingApprovals:
		return fmt.Errorf("--max-pending-per-requester / PROCGRAPH_MAX_PENDING_PER_REQUESTER (%d) must not exceed --max-pending-approvals / PROCGRAPH_MAX_PENDING_APPROVALS (%d)",
			c.MaxPendingPerRequester, c.MaxPendingApprovals)
	}
	if c.MaxConcurrentSearches == 0 {
		c.MaxConcurrentSearches = 2 * runtime.NumCPU()
	}
	if c.MaxConcurrentReplays == 0 {
		c.MaxConcurrentReplays = 4 * c.SandboxWorkers
	}
	if c.ReplayQueue < 0 {
		c.ReplayQueue = 2 * c.MaxConcurrentReplays
	}
	if c.MaxCallBytes*sandbox.ArgsCopies > c.MaxInflightBytes {
		return fmt.Errorf("--max-call-bytes / PROCGRAPH_MAX_CALL_BYTES (%s) times %d must fit in --max-inflight-bytes / PROCGRAPH_MAX_INFLIGHT_BYTES (%s): no call of the largest size could run",
			humanize.IBytes(uint64(c.MaxCallBytes)), sandbox.ArgsCopies, humanize.IBytes(uint64(c.MaxInflightBytes)))
	}
	return c.resolveAuth()
}

// resolveStore resolves and checks which store the configuration names
// (embedded unless NEO4J_URI is set): all that an offline command, which
// serves nothing and so needs no tokens, resolves.
func (c *serveConfig) resolveStore() error {
	if c.Store == "" {
		c.Store = "embedded"
		if c.Neo4jURI != "" {
			c.Store = "neo4j"
		}
	}
	if c.Store == "neo4j" {
		if c.Neo4jURI == "" {
			return fmt.Errorf("--store neo4j needs NEO4J_URI")
		}
		u, err := url.Parse(c.Neo4jURI)
		if err != nil || !oneOfSchemes(u.Scheme, "bolt", "neo4j", "bolt+s", "neo4j+s", "bolt+ssc", "neo4j+ssc") {
			return fmt.Errorf("NEO4J_URI: %q must start with bolt:// or neo4j:// (or their +s/+ssc forms)", c.Neo4jURI)
		}
	}
	return nil
}

// resolveAuth checks --auth against --addr and --tokens-file and resolves
// the tokens file in effect (docs/design.md "Secure by default").
func (c *serveConfig) resolveAuth() error {
	if c.Auth == authOff {
		if c.TokensFile != "" {
			return fmt.Errorf("--auth off and --tokens-file / PROCGRAPH_TOKENS_FILE are exclusive: give at most one")
		}
		if !isLoopback(c.Addr) {
			return fmt.Errorf("--addr %s is not a loopback address: refusing to serve with --auth off / PROCGRAPH_AUTH=off (serve with tokens, the default, to listen elsewhere)", c.Addr)
		}
		return nil
	}
	path, isDefault, err := tokensFilePath(c.TokensFile, c.Store, c.Data)
	if err != nil {
		return err
	}
	c.TokensFile, c.TokensDefault = path, isDefault
	return nil
}

// tokensFilePath is the tokens file in effect for a configured one (given,
// "" when none) and a store: given, or defaultTokensFile next to the
// embedded data file when none is given. A relative path is resolved
// against the data file's directory, never the working directory, so a
// store finds its tokens whatever directory serve starts in; the Neo4j
// store has no data file, so a tokens file is given as an absolute path,
// or none ("": the store's tokens only). isDefault reports the default
// file. The path returned is absolute.
func tokensFilePath(given, store, data string) (path string, isDefault bool, err error) {
	if store == "neo4j" {
		switch {
		case given == "":
			return "", false, nil // the store's tokens only
		case !filepath.IsAbs(given):
			return "", false, fmt.Errorf("--tokens-file / PROCGRAPH_TOKENS_FILE: %q must be an absolute path with --store neo4j (there is no data file to resolve it against)", given)
		}
		return filepath.Clean(given), false, nil
	}
	dir, err := filepath.Abs(filepath.Dir(data))
	if err != nil {
		return "", false, fmt.Errorf("--data / PROCGRAPH_DATA: %v", err)
	}
	if given == "" {
		return filepath.Join(dir, defaultTokensFile), true, nil
	}
	if filepath.IsAbs(given) {
		return filepath.Clean(given), false, nil
	}
	return filepath.Join(dir, given), false, nil
}

func oneOfSchemes(scheme string, schemes ...string) bool {
	for _, s := range schemes {
		if scheme == s {
			return true
		}
	}
	return false
}

// isLoopback reports whether addr's host only listens on loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ---- settings: flags with environment twins, through ff ---------------------

// settings is a flag set whose flags each have an environment twin. An
// invalid value, from a flag or its twin, is reported as one error naming
// both ("--x / PROCGRAPH_X: why").
type settings struct {
	fs  *flag.FlagSet
	bad error // the first invalid value
}

// newFlagSet is a flag set that prints nothing itself: commands print
// their usage on flag.ErrHelp and the error otherwise.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// envName is the environment twin of a flag, as ff derives it.
func envName(flagName string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// add registers v under name with its default (set through v, so that an
// invalid default is a programming error caught by every test).
func (s *settings) add(v flag.Value, name, def, usage string) {
	if def != "" {
		if err := v.Set(def); err != nil {
			panic(fmt.Sprintf("--%s: default %q: %v", name, def, err))
		}
	}
	usage = fmt.Sprintf("%s (env %s)", usage, envName(name))
	s.fs.Var(&named{Value: v, name: name, bad: &s.bad}, name, usage)
}

// parse reads args, then the environment twins of the flags not given. A
// flag given twice is an error (singleValued).
func (s *settings) parse(args []string) error {
	repeat := singleValued(s.fs)
	err := ff.Parse(s.fs, args, ff.WithEnvVarPrefix(envPrefix))
	if errors.Is(err, flag.ErrHelp) {
		return flag.ErrHelp
	}
	if *repeat != nil {
		return *repeat
	}
	if s.bad != nil {
		return s.bad
	}
	if err != nil {
		// An unknown flag or a missing value: the flag package's words,
		// without ff's "error parsing commandline arguments" preamble, and
		// the flag meant when it is a near miss.
		err = errors.Unwrap(err)
		if hint := flagSuggestion(s.fs, err); hint != "" {
			return fmt.Errorf("%w%s", err, hint)
		}
		return err
	}
	return nil
}

// urlList is a repeatable setting of webhook URLs: each value is one or
// more http(s) URLs separated by white space (the environment twin lists
// several that way).
type urlList struct{ p *[]string }

func (u urlList) String() string {
	if u.p == nil {
		return ""
	}
	return strings.Join(*u.p, " ")
}

func (u urlList) Set(v string) error {
	urls := strings.Fields(v)
	if len(urls) == 0 {
		return fmt.Errorf("no URL given")
	}
	for _, raw := range urls {
		if err := notify.CheckURL(raw); err != nil {
			return err
		}
	}
	*u.p = append(*u.p, urls...)
	return nil
}

// named records the first invalid value with the setting's two names.
type named struct {
	flag.Value
	name string
	bad  *error
}

func (n *named) Set(v string) error {
	err := n.Value.Set(v)
	if err != nil && *n.bad == nil {
		*n.bad = fmt.Errorf("--%s / %s: %v", n.name, envName(n.name), err)
	}
	return err
}
