package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/tokens"
)

// The token commands (docs/design.md "Tokens in the store"): create, list,
// rotate and revoke the store's tokens, through the running server
// (--server: the admin scope, /v1/tokens) or offline against a store
// (--store embedded|neo4j, --data, the NEO4J_* environment), each change
// audited. A token is printed once, on stdout; never logged.

// tokenAnswer is the API's answer of a token made (create, rotate).
type tokenAnswer struct {
	Token  string        `json:"token,omitempty"`
	Record api.TokenView `json:"record"`
}

// tokenTarget is where a token command acts: the server, or a store.
type tokenTarget struct {
	server *bool
	store  *string
	data   *string
}

// tokenTargetFlags registers --server, --store and --data on cl.
func tokenTargetFlags(cl *cmdline) tokenTarget {
	return tokenTarget{
		server: cl.fs.Bool("server", false, "act through the running server at PROCGRAPH_URL (the admin scope; PROCGRAPH_TOKEN or the operator token serve registered) instead of opening the store"),
		store:  cl.fs.String("store", "", "embedded or neo4j (default neo4j when NEO4J_URI is set, else embedded)"),
		data:   cl.fs.String("data", "", "the embedded store file (env PROCGRAPH_DATA, default ./procgraph.db)"),
	}
}

// manager opens the store the flags name and returns its token manager
// (closed with the returned function), recording as the person running
// the command (operator()).
func (t tokenTarget) manager(ctx context.Context) (*tokens.Manager, func(), error) {
	cfg := &serveConfig{Store: *t.store, Data: cmp.Or(*t.data, os.Getenv("PROCGRAPH_DATA"), "./procgraph.db"),
		Neo4jURI: os.Getenv("NEO4J_URI"), Neo4jUsername: os.Getenv("NEO4J_USERNAME"),
		Neo4jPassword: os.Getenv("NEO4J_PASSWORD"), Neo4jDatabase: os.Getenv("NEO4J_DATABASE")}
	if cfg.Store != "" && cfg.Store != "embedded" && cfg.Store != "neo4j" {
		return nil, nil, fmt.Errorf("--store: %q is not embedded or neo4j", cfg.Store)
	}
	if err := cfg.resolveStore(); err != nil {
		return nil, nil, err
	}
	s, err := openStore(ctx, cfg, zerolog.Nop())
	var locked *storeLockedError
	if errors.As(err, &locked) {
		return nil, nil, fmt.Errorf("%v; while it serves, act through it: add --server (PROCGRAPH_URL naming that server; the admin scope)", err)
	}
	if err != nil {
		return nil, nil, err
	}
	ts, ok := s.(tokens.Store)
	if !ok {
		_ = s.Close()
		return nil, nil, fmt.Errorf("the %s store keeps no tokens", cfg.Store)
	}
	return tokens.NewManager(ts, procedures.NewRecorder(s, procedures.RecorderOptions{})), func() { _ = s.Close() }, nil
}

// parseExpires parses --expires: a number of days ("30d") or weeks
// ("2w"), or a Go duration ("12h"); "" is never.
func parseExpires(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[v[len(v)-1]]
	var d time.Duration
	if unit != 0 {
		n, err := strconv.Atoi(v[:len(v)-1])
		if err != nil || n <= 0 || n > 10*366 {
			return 0, fmt.Errorf("--expires %q: want a number of days (30d), weeks (2w) or a duration (12h)", v)
		}
		d = time.Duration(n) * unit
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < time.Second {
			return 0, fmt.Errorf("--expires %q: want a number of days (30d), weeks (2w) or a duration of at least 1s (12h)", v)
		}
	}
	if d > time.Duration(tokenMaxLifetime)*time.Second {
		return 0, fmt.Errorf("--expires %q: at most ten years", v)
	}
	return d, nil
}

// tokenMaxLifetime is the longest --expires, in seconds (the API's
// expires_in_s bound).
const tokenMaxLifetime = 10 * 366 * 24 * 3600

// expiresIn is the API's expires_in_s of d (nil: never).
func expiresIn(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return int64(d / time.Second)
}

// expiresAt is the expiry of a token made now that lives d (zero: never).
func expiresAt(d time.Duration) time.Time {
	if d == 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// printMade prints a token made: the token alone on stdout (once), what it
// is on stderr; with --json the API's answer on stdout.
func printMade(s stdio, cl *cmdline, what string, a tokenAnswer) int {
	if cl.asJSON() {
		printJSON(s.out, a)
		return 0
	}
	fmt.Fprintln(s.out, a.Token)
	exp := "never expires"
	if a.Record.ExpiresAt != nil {
		exp = "expires " + a.Record.ExpiresAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(s.err, "token %s for %s (%s), %s; only its hash is stored: it is shown only once\n",
		what, a.Record.Holder, strings.Join(a.Record.Scopes, ","), exp)
	return 0
}

// cmdTokenCreate implements `procgraph token create`: it prints a new
// token once and stores only its hash, in the store (the server's with
// --server) or, with --tokens-file, in that file as before.
func cmdTokenCreate(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("token create", "token create --name NAME --scopes read,capture,invoke,grant,admin [--expires 30d] [--server | --store embedded|neo4j [--data F] | --tokens-file F] [--json]",
		"Print a new bearer token once; only its sha256 is stored: in the store (offline, or through the running server with --server and the admin scope), where every instance sharing it accepts it within a second, audited; or, with --tokens-file, in that 0600 file, which serve imports into the store at its next start.", true)
	name := cl.fs.String("name", "", "the token's holder (the audit actor; required)")
	scopes := cl.fs.String("scopes", "", "comma-separated scopes: read, capture, invoke, grant, admin (required)")
	expires := cl.fs.String("expires", "", "the token expires after this long: 30d, 2w, 12h (default: never)")
	file := cl.fs.String("tokens-file", "", "write the hash to this tokens file instead of the store (a relative path is resolved against the data file's directory, as serve does)")
	target := tokenTargetFlags(cl)
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *name == "" || *scopes == "" {
		return cl.fail(s, "--name and --scopes are required")
	}
	var list []string
	for _, sc := range strings.Split(*scopes, ",") {
		sc = strings.TrimSpace(sc)
		if _, err := auth.ParseScope(sc); err != nil {
			return cl.fail(s, err.Error())
		}
		list = append(list, sc)
	}
	life, err := parseExpires(*expires)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	switch {
	case *file != "" && (*target.server || *target.store != ""):
		return cl.fail(s, "--tokens-file writes a file: it takes neither --server nor --store")
	case *file != "" && life != 0:
		return cl.fail(s, "a tokens file keeps no expiry: --expires needs the store")
	case *file != "":
		return tokenCreateInFile(s, *name, list, *file, *target.data)
	case *target.server:
		var out tokenAnswer
		body := map[string]any{"holder": *name, "scopes": list}
		if e := expiresIn(life); e != nil {
			body["expires_in_s"] = e
		}
		if _, err := newClient(ctx).do(ctx, "POST", "/v1/tokens", nil, body, &out); err != nil {
			return failAnswer(cl, s, err)
		}
		return printMade(s, cl, "created", out)
	}
	m, done, err := target.manager(ctx)
	if err != nil {
		return fail(s.err, cl.fs.Name(), err)
	}
	defer done()
	c, err := m.Create(ctx, tokens.CreateRequest{Holder: *name, Scopes: list, ExpiresAt: expiresAt(life), Actor: operator()})
	if err != nil {
		return fail(s.err, cl.fs.Name(), err)
	}
	return printMade(s, cl, "created", tokenAnswer{Token: c.Token, Record: api.TokenViewOf(c.Record, time.Now())})
}

// tokenCreateInFile is `token create --tokens-file F`: the hash goes into
// the tokens file (created 0600 when missing).
func tokenCreateInFile(s stdio, name string, scopes []string, given, data string) int {
	path, _, err := tokensFilePath(given, "embedded", cmp.Or(data, os.Getenv("PROCGRAPH_DATA"), "./procgraph.db"))
	if err != nil {
		return fail(s.err, "token create", err)
	}
	tf := &auth.TokensFile{}
	if existing, err := auth.ReadTokensFile(path); err == nil {
		tf = existing
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(s.err, "token create", err)
	}
	token, err := auth.NewToken()
	if err != nil {
		return fail(s.err, "token create", err)
	}
	tf.Tokens = append(tf.Tokens, auth.TokenEntry{Name: name, SHA256: auth.HashToken(token), Scopes: scopes})
	if err := tf.Validate(); err != nil {
		return fail(s.err, "token create", err)
	}
	if err := writeFileAtomic(path, tf); err != nil {
		return fail(s.err, "token create", err)
	}
	fmt.Fprintln(s.out, token)
	fmt.Fprintf(s.err, "token for %s (%s) stored as a hash in %s; it is shown only once\n", name, strings.Join(scopes, ","), path)
	return 0
}

// cmdTokenList implements `procgraph token list`.
func cmdTokenList(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("token list", "token list [--server | --store embedded|neo4j [--data F]] [--json]",
		"The store's tokens: holder, scopes, status (live, expired, revoked), creation, last use (written at most once a minute) and expiry; never a token or its hash.", true)
	target := tokenTargetFlags(cl)
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	var out struct {
		Tokens []api.TokenView `json:"tokens"`
	}
	if *target.server {
		if _, err := newClient(ctx).do(ctx, "GET", "/v1/tokens", nil, nil, &out); err != nil {
			return failAnswer(cl, s, err)
		}
	} else {
		m, done, err := target.manager(ctx)
		if err != nil {
			return fail(s.err, cl.fs.Name(), err)
		}
		defer done()
		recs, err := m.List(ctx)
		if err != nil {
			return fail(s.err, cl.fs.Name(), err)
		}
		out.Tokens = []api.TokenView{}
		for _, r := range recs {
			out.Tokens = append(out.Tokens, api.TokenViewOf(r, time.Now()))
		}
	}
	if cl.asJSON() {
		printJSON(s.out, out)
		return 0
	}
	rows := make([][]string, 0, len(out.Tokens))
	for _, t := range out.Tokens {
		rows = append(rows, []string{t.Holder, strings.Join(t.Scopes, ","), t.Status, stamp(&t.CreatedAt), stamp(t.LastUsedAt), stamp(t.ExpiresAt)})
	}
	table(s.out, "HOLDER\tSCOPES\tSTATUS\tCREATED\tLAST USED\tEXPIRES", rows)
	return 0
}

// stamp is t to the second, "-" for none.
func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// cmdTokenRevoke implements `procgraph token revoke HOLDER`.
func cmdTokenRevoke(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("token revoke", "token revoke HOLDER [--server | --store embedded|neo4j [--data F]] [--json]",
		"Revoke a holder's token: every instance sharing the store refuses it within a second, without a restart; audited.", true)
	target := tokenTargetFlags(cl)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	var out tokenAnswer
	if *target.server {
		if _, err := newClient(ctx).do(ctx, "DELETE", "/v1/tokens/"+pathSegment(pos[0]), nil, nil, &out); err != nil {
			return failAnswer(cl, s, err)
		}
	} else {
		m, done, err := target.manager(ctx)
		if err != nil {
			return fail(s.err, cl.fs.Name(), err)
		}
		defer done()
		rec, err := m.Revoke(ctx, pos[0], operator())
		if err != nil {
			return fail(s.err, cl.fs.Name(), err)
		}
		out.Record = api.TokenViewOf(rec, time.Now())
	}
	if cl.asJSON() {
		printJSON(s.out, out)
		return 0
	}
	fmt.Fprintf(s.out, "revoked the token of %s: every instance refuses it within a second\n", out.Record.Holder)
	return 0
}

// cmdTokenRotate implements `procgraph token rotate HOLDER`.
func cmdTokenRotate(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("token rotate", "token rotate HOLDER [--expires 30d] [--server | --store embedded|neo4j [--data F]] [--json]",
		"Give a holder a new token with the same scopes, printed once; the old one is refused on every instance within a second; audited.", true)
	expires := cl.fs.String("expires", "", "the new token expires after this long: 30d, 2w, 12h (default: the old token's expiry)")
	target := tokenTargetFlags(cl)
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	life, err := parseExpires(*expires)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	if *target.server {
		var out tokenAnswer
		var body any
		if e := expiresIn(life); e != nil {
			body = map[string]any{"expires_in_s": e}
		}
		if _, err := newClient(ctx).do(ctx, "POST", "/v1/tokens/"+pathSegment(pos[0])+"/rotate", nil, body, &out); err != nil {
			return failAnswer(cl, s, err)
		}
		return printMade(s, cl, "rotated", out)
	}
	m, closeStore, err := target.manager(ctx)
	if err != nil {
		return fail(s.err, cl.fs.Name(), err)
	}
	defer closeStore()
	c, err := m.Rotate(ctx, pos[0], expiresAt(life), operator())
	if err != nil {
		return fail(s.err, cl.fs.Name(), err)
	}
	return printMade(s, cl, "rotated", tokenAnswer{Token: c.Token, Record: api.TokenViewOf(c.Record, time.Now())})
}

// writeFileAtomic writes v as JSON to path through a temporary file, mode
// 0600 (writeSecretFile).
func writeFileAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeSecretFile(path, append(b, '\n'))
}
