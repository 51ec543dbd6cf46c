package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/internal/privfile"
	"github.com/procgraph/procgraph/tokens"
)

// The first tokens (docs/design.md "Secure by default", "Tokens in the
// store"): the first serve of a store that has never held a token (and
// was given no tokens file) creates an operator token (every scope) and an
// agent token (read, capture, invoke) in the store, hashed
// (tokens.Manager.First). Each token itself is kept in a 0600 file,
// named by credentialFile, in Main.credentialDir (beside the embedded
// data file; on Neo4j the working directory): the operator's so that the
// CLI on the same machine finds it (see registerCredential and
// findCredential), the agent's so that an agent can be configured from it
// at any time (a token printed only once would be lost with the terminal,
// and printed at every start it would land in whatever keeps serve's
// output).
const (
	operatorHolder = "operator"
	agentHolder    = "agent"
)

// agentScopes are the agent token's scopes: everything but grant and admin,
// so an agent can never approve its own code.
var agentScopes = []auth.Scope{auth.ScopeRead, auth.ScopeCapture, auth.ScopeInvoke}

// firstHolders are the first tokens of a store.
var firstHolders = []tokens.FirstHolder{{Holder: operatorHolder, Scopes: auth.AllScopes}, {Holder: agentHolder, Scopes: agentScopes}}

// credentialFile is the 0600 file in dir that keeps holder's token:
// procgraph-operator.token, procgraph-agent.token.
func credentialFile(dir, holder string) string {
	return filepath.Join(dir, "procgraph-"+holder+".token")
}

// writeSecretFile writes data to path, mode 0600, through a temporary
// file renamed into place (replacing what was there: a link at path is
// replaced, never followed).
func writeSecretFile(path string, data []byte) error {
	tmp, made, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return privfile.Rename(tmp, made, path)
}

// writeTemp writes data to a new private file beside path (privfile.Create:
// exclusively, 0600), synced, and returns its name and what it is.
func writeTemp(path string, data []byte) (string, os.FileInfo, error) {
	f, made, err := privfile.Create(filepath.Dir(path), ".procgraph-*", 0o600)
	if err != nil {
		return "", nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", nil, err
	}
	return f.Name(), made, nil
}

// readSecretFile reads a token from a credential file, which must be a
// regular file of this user's that only its owner may read or write (as
// ssh requires of a private key), opened without following a link: a
// token others can read, or a file another user put or pointed there, is
// not used.
func readSecretFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return "", fmt.Errorf("%s is a link: a credential file is read only as serve wrote it", path)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s belongs to another user (uid %d)", path, sys.Uid)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return tok, nil
}

// ---- the CLI's credential on the same machine -------------------------------

// A serve whose operator credential file exists registers it in the
// user's config directory, keyed by the address it serves
// (credentialsDir/HOST_PORT.json holds {"url", "token_file", "pid",
// "proof_key"}: where the token is, never the token), and removes the
// entry when it stops. A client command given no PROCGRAPH_TOKEN looks its
// PROCGRAPH_URL up there and sends the token from that file, only on
// connections whose server proved it holds the entry's proof key
// (proof.go): the config directory is the user's own, so another user's
// server cannot plant an entry, and the entry of a serve that died (a
// kill -9 leaves it) hands nothing to whatever listens on its port next.

// credentialEntry is one registered server: where it serves, where its
// operator token is, the serve process (an entry whose process no longer
// runs as the client's own user is not used) and the proof key of that
// start of serve, which the server must prove it holds before the token
// is sent (provenTransport).
type credentialEntry struct {
	URL       string `json:"url"`
	TokenFile string `json:"token_file"`
	PID       int    `json:"pid"`
	ProofKey  string `json:"proof_key"`
}

// credentialsDir is where servers register: $XDG_CONFIG_HOME/procgraph/servers
// (os.UserConfigDir).
func credentialsDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "procgraph", "servers"), nil
}

// credentialKey is the entry name for a server's host and port: loopback
// names and unspecified addresses (a serve on 0.0.0.0 answers on
// 127.0.0.1) are one key, 127.0.0.1_PORT.
func credentialKey(host, port string) string {
	ip := net.ParseIP(host)
	if strings.EqualFold(host, "localhost") || (ip != nil && (ip.IsUnspecified() || ip.Equal(net.IPv4(127, 0, 0, 1)))) {
		host = "127.0.0.1"
	}
	return strings.NewReplacer(":", "_", "%", "_").Replace(host) + "_" + port
}

// registerCredential records tokenFile as the operator credential of the
// server listening at addr, which answers challenges with proofKey; it
// returns the function that removes the entry again (when it still names
// tokenFile).
func registerCredential(addr, serverURL, tokenFile, proofKey string) (unregister func() error, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dir, err := credentialsDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, credentialKey(host, port)+".json")
	b, err := json.Marshal(credentialEntry{URL: serverURL, TokenFile: tokenFile, PID: os.Getpid(), ProofKey: proofKey})
	if err != nil {
		return nil, err
	}
	if err := writeSecretFile(path, append(b, '\n')); err != nil {
		return nil, err
	}
	return func() error {
		if e, err := readCredentialEntry(path); err != nil || e.TokenFile != tokenFile {
			return nil // another serve took the entry over
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}, nil
}

func readCredentialEntry(path string) (credentialEntry, error) {
	var e credentialEntry
	b, err := os.ReadFile(path)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%s: %v", path, err)
	}
	return e, nil
}

// findCredential returns the operator token a serve on this machine
// registered for base (PROCGRAPH_URL) with the transport that sends it
// only to that serve (provenTransport), or "" with the reason when there
// is none to use (no entry is not an error: the reason is "").
func findCredential(base string) (token string, tr http.RoundTripper, why error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", nil, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	dir, err := credentialsDir()
	if err != nil {
		return "", nil, nil
	}
	path := filepath.Join(dir, credentialKey(u.Hostname(), port)+".json")
	e, err := readCredentialEntry(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if !ownProcess(e.PID) {
		return "", nil, fmt.Errorf("the serve that registered %s (pid %d) no longer runs", base, e.PID)
	}
	if u.Scheme != "http" {
		return "", nil, fmt.Errorf("the serve registered for %s serves http, not %s", base, u.Scheme)
	}
	proven, err := provenTransport(e.ProofKey, path)
	if err != nil {
		return "", nil, fmt.Errorf("the entry registered for %s cannot be proved (%v): restart that serve", base, err)
	}
	tok, err := readSecretFile(e.TokenFile)
	if err != nil {
		return "", nil, fmt.Errorf("the operator credential registered for %s: %v", base, err)
	}
	return tok, proven, nil
}

// ownProcess reports whether pid is a running process of this user, by
// its /proc entry; where there is no /proc, it cannot tell and says yes.
func ownProcess(pid int) bool {
	if _, err := os.Stat("/proc/self"); err != nil {
		return true
	}
	if pid <= 0 {
		return false
	}
	st, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return !ok || int(sys.Uid) == os.Getuid()
}

// ---- what serve tells the person at the terminal ----------------------------

// localURL is where a client on this machine reaches the server: URL with
// an unspecified listen address (0.0.0.0, ::) as 127.0.0.1.
func (m *Main) localURL() string {
	host, port, err := net.SplitHostPort(m.ln.Addr().String())
	if err != nil {
		return m.URL()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// announceAuth registers the operator credential for the CLI and tells the
// person at the terminal how to use the tokens, or warns that auth is
// off. Tokens go to Terminal only, and only when it is a terminal (the
// console URL carries the operator token in its fragment, which a browser
// never sends: ui/ takes it and strips it from the address bar); never to
// the log.
func (m *Main) announceAuth() {
	w := m.Terminal
	if w == nil {
		w = io.Discard
	}
	base := m.localURL()
	if !m.authOn {
		fmt.Fprintf(w, "procgraph: WARNING: auth is off (--auth off): every caller on this machine is anonymous with every scope; MCP offers no grant-scoped tool.\n  console: %s/ui/\n", base)
		return
	}
	dir := m.credentialDir()
	if m.tokensCreated {
		fmt.Fprintf(w, "procgraph: created two tokens in the store, stored hashed: %s (every scope) and %s (%s)\n",
			operatorHolder, agentHolder, joinScopes(agentScopes))
	} else {
		fmt.Fprintf(w, "procgraph: auth is on: %d tokens in the store (procgraph token list)\n", m.authn.Tokens())
	}
	opFile, agentFile := credentialFile(dir, operatorHolder), credentialFile(dir, agentHolder)
	opToken, err := readSecretFile(opFile)
	if err == nil {
		if _, cerr := m.authn.Check(context.Background(), opToken); cerr != nil {
			err = fmt.Errorf("%s holds no live token of the store", opFile)
		}
	}
	switch {
	case err == nil:
		unregister, rerr := registerCredential(m.ln.Addr().String(), base, opFile, m.proofKey)
		if rerr != nil {
			m.Logger.Warn().Err(rerr).Msg("auth: the CLI on this machine will not find the operator token (set PROCGRAPH_TOKEN)")
			fmt.Fprintf(w, "  CLI:     export PROCGRAPH_URL=%s PROCGRAPH_TOKEN=$(cat %s)\n", base, opFile)
		} else {
			m.onClose(unregister)
			fmt.Fprintf(w, "  CLI:     procgraph commands on this machine use the operator token in %s (PROCGRAPH_TOKEN overrides)\n", opFile)
		}
		if m.TerminalIsTTY {
			fmt.Fprintf(w, "  console: %s/ui/#token=%s\n", base, opToken)
		} else {
			fmt.Fprintf(w, "  console: %s/ui/ (enter the operator token from %s once per tab)\n", base, opFile)
		}
	case m.Config.TokensDefault || !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(w, "  operator: %v: make a token with `procgraph token create --name NAME --scopes read,capture,invoke,grant,admin` (offline, or --server with an admin token)\n", err)
	}
	if _, err := os.Stat(agentFile); err == nil {
		fmt.Fprintf(w, "  agent:   PROCGRAPH_TOKEN=$(cat %s); MCP at %s/mcp with the header \"Authorization: Bearer <that token>\"\n", agentFile, base)
	}
}

// joinScopes is scopes as "read, capture, invoke".
func joinScopes(scopes []auth.Scope) string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}
