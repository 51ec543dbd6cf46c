package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/procgraph/procgraph/mcpdispatch"
)

// serveConfig is `procgraph serve`'s configuration: flags, each with an
// environment twin; a flag wins over its twin.
type serveConfig struct {
	Addr                 string
	Store                string
	Data                 string
	Neo4jURI             string
	Neo4jUsername        string
	Neo4jPassword        string
	Neo4jDatabase        string
	ToolsFile            string
	UpstreamHTTP         string
	UpstreamMCP          string
	UpstreamMCPCommand   []string
	TokensFile           string
	AllowMutatingAutorun bool
	LogLevel             string
	SandboxWorkers       int
	InProcessSandbox     bool
}

// setting is one configurable value.
type setting struct {
	flag, env, def, usage string
	dst                   *string
}

// parseServeConfig reads flags then environment; invalid values are errors
// naming the setting, never silent defaults.
func parseServeConfig(args []string, getenv func(string) string, stderr io.Writer) (*serveConfig, error) {
	var c serveConfig
	var store, allowMutating, workers, inProcess, mcpCommand string
	settings := []setting{
		{"addr", "PROCGRAPH_ADDR", "127.0.0.1:8474", "listen address", &c.Addr},
		{"store", "PROCGRAPH_STORE", "", "embedded or neo4j (default neo4j when NEO4J_URI is set, else embedded)", &store},
		{"data", "PROCGRAPH_DATA", "./procgraph.db", "embedded store file", &c.Data},
		{"tools", "PROCGRAPH_TOOLS", "", "catalogue file loaded at start; replaces the stored catalogue", &c.ToolsFile},
		{"upstream-http", "PROCGRAPH_UPSTREAM_HTTP", "", "where replayed tool calls go", &c.UpstreamHTTP},
		{"upstream-mcp", "PROCGRAPH_UPSTREAM_MCP", "", "streamable HTTP MCP server where replayed tool calls go", &c.UpstreamMCP},
		{"upstream-mcp-command", "PROCGRAPH_UPSTREAM_MCP_COMMAND", "", "MCP server command (\"CMD ARGS\") started and spoken to over stdio", &mcpCommand},
		{"tokens-file", "PROCGRAPH_TOKENS_FILE", "", "bearer tokens file (hashes and scopes); default ./procgraph-tokens.json when it exists", &c.TokensFile},
		{"allow-mutating-autorun", "PROCGRAPH_ALLOW_MUTATING_AUTORUN", "false", "true or false: expose and grant state-changing procedures (interactive phase only)", &allowMutating},
		{"log-level", "PROCGRAPH_LOG_LEVEL", "info", "debug, info, warn or error", &c.LogLevel},
		{"sandbox-workers", "PROCGRAPH_SANDBOX_WORKERS", "2", "warm sandbox worker processes", &workers},
		{"sandbox-in-process", "PROCGRAPH_SANDBOX_IN_PROCESS", "false", "true runs replays in the server process (tests and benchmarks only: no memory limit)", &inProcess},
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, s := range settings {
		fs.StringVar(s.dst, s.flag, "", fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def))
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	for _, s := range settings {
		if *s.dst == "" {
			*s.dst = getenv(s.env)
		}
		if *s.dst == "" {
			*s.dst = s.def
		}
	}
	c.Neo4jURI, c.Neo4jUsername = getenv("NEO4J_URI"), getenv("NEO4J_USERNAME")
	c.Neo4jPassword, c.Neo4jDatabase = getenv("NEO4J_PASSWORD"), getenv("NEO4J_DATABASE")
	switch store {
	case "":
		c.Store = "embedded"
		if c.Neo4jURI != "" {
			c.Store = "neo4j"
		}
	case "embedded", "neo4j":
		c.Store = store
	default:
		return nil, fmt.Errorf("--store / PROCGRAPH_STORE: %q is not embedded or neo4j", store)
	}
	if c.Store == "neo4j" {
		if c.Neo4jURI == "" {
			return nil, fmt.Errorf("--store neo4j needs NEO4J_URI")
		}
		if !(strings.HasPrefix(c.Neo4jURI, "bolt://") || strings.HasPrefix(c.Neo4jURI, "neo4j://") ||
			strings.HasPrefix(c.Neo4jURI, "bolt+s://") || strings.HasPrefix(c.Neo4jURI, "neo4j+s://") ||
			strings.HasPrefix(c.Neo4jURI, "bolt+ssc://") || strings.HasPrefix(c.Neo4jURI, "neo4j+ssc://")) {
			return nil, fmt.Errorf("NEO4J_URI: %q must start with bolt:// or neo4j:// (or their +s/+ssc forms)", c.Neo4jURI)
		}
	}
	var err error
	if c.AllowMutatingAutorun, err = strictBool(allowMutating); err != nil {
		return nil, fmt.Errorf("--allow-mutating-autorun / PROCGRAPH_ALLOW_MUTATING_AUTORUN: %v", err)
	}
	if c.InProcessSandbox, err = strictBool(inProcess); err != nil {
		return nil, fmt.Errorf("--sandbox-in-process / PROCGRAPH_SANDBOX_IN_PROCESS: %v", err)
	}
	if c.SandboxWorkers, err = strconv.Atoi(workers); err != nil || c.SandboxWorkers < 1 || c.SandboxWorkers > 64 {
		return nil, fmt.Errorf("--sandbox-workers / PROCGRAPH_SANDBOX_WORKERS: %q must be a whole number from 1 to 64", workers)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return nil, fmt.Errorf("--log-level / PROCGRAPH_LOG_LEVEL: %q is not debug, info, warn or error", c.LogLevel)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return nil, fmt.Errorf("--addr / PROCGRAPH_ADDR: %q is not host:port: %v", c.Addr, err)
	}
	if c.Store == "embedded" && strings.TrimSpace(c.Data) == "" {
		return nil, fmt.Errorf("--data / PROCGRAPH_DATA must name a file")
	}
	if c.UpstreamHTTP != "" && !(strings.HasPrefix(c.UpstreamHTTP, "http://") || strings.HasPrefix(c.UpstreamHTTP, "https://")) {
		return nil, fmt.Errorf("--upstream-http / PROCGRAPH_UPSTREAM_HTTP: %q must be an http:// or https:// URL", c.UpstreamHTTP)
	}
	if c.UpstreamMCP != "" && !(strings.HasPrefix(c.UpstreamMCP, "http://") || strings.HasPrefix(c.UpstreamMCP, "https://")) {
		return nil, fmt.Errorf("--upstream-mcp / PROCGRAPH_UPSTREAM_MCP: %q must be an http:// or https:// URL", c.UpstreamMCP)
	}
	if mcpCommand != "" {
		argv, err := mcpdispatch.SplitCommand(mcpCommand)
		if err != nil {
			return nil, fmt.Errorf("--upstream-mcp-command / PROCGRAPH_UPSTREAM_MCP_COMMAND: %v", err)
		}
		c.UpstreamMCPCommand = argv
	}
	upstreams := 0
	for _, set := range []bool{c.UpstreamHTTP != "", c.UpstreamMCP != "", mcpCommand != ""} {
		if set {
			upstreams++
		}
	}
	if upstreams > 1 {
		return nil, fmt.Errorf("--upstream-http, --upstream-mcp and --upstream-mcp-command are exclusive: set at most one")
	}
	if c.TokensFile == "" {
		// Fail closed: tokens made with `procgraph token create` and its
		// default file are not silently ignored.
		if _, err := os.Stat(defaultTokensFile); err == nil {
			c.TokensFile = defaultTokensFile
		}
	}
	return &c, nil
}

// defaultTokensFile is where `token create` stores hashes by default, and
// what serve reads when it exists and no tokens file is configured.
const defaultTokensFile = "procgraph-tokens.json"

// strictBool accepts exactly "true" or "false".
func strictBool(v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", v)
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
