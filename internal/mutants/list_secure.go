package main

// The mutants of docs/design.md "Secure by default" (issue 19 item 6): serve's
// first tokens, where the tokens file is, --auth off and MCP without auth.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "secure/default-auth-off",
			Why:      "serve's default is --auth off again: the quickstart serves everyone as anonymous",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: `"auth", authTokens,`, Replace: `"auth", authOff,`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestFirstStartCreatesTokens"},
		},
		{
			Name:     "secure/tokens-file-relative-to-cwd",
			Why:      "a relative --tokens-file is resolved against the working directory, not the data file's",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "return filepath.Join(dir, given), false, nil", Replace: "p, _ := filepath.Abs(given); return p, false, nil"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokensFileResolvedAgainstTheData"},
		},
		{
			Name:     "secure/default-tokens-file-in-cwd",
			Why:      "the default tokens file is looked for in the working directory: a store served from elsewhere gets other tokens",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "return filepath.Join(dir, defaultTokensFile), true, nil", Replace: "p, _ := filepath.Abs(defaultTokensFile); return p, true, nil"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokensFileResolvedAgainstTheData", "TestFirstStartCreatesTokens"},
		},
		{
			Name:     "secure/auth-off-on-any-address",
			Why:      "--auth off listens on a non-loopback address",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if !isLoopback(c.Addr) {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestRefuseToStart/auth_off_on_a_public_address", "TestRefuseToStart/auth_off_on_a_public_address_(env)", "TestRefuseToStart/auth_off_on_a_public_IPv6_address"},
		},
		{
			Name:     "secure/tokens-file-mode",
			Why:      "the created tokens and credential files are readable by others",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: `privfile.Create(filepath.Dir(path), ".procgraph-*", 0o600)`, Replace: `privfile.Create(filepath.Dir(path), ".procgraph-*", 0o644)`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestFirstStartCreatesTokens"},
		},
		{
			Name:     "secure/agent-token-grants",
			Why:      "the first start's agent token holds grant: an agent approves its own code",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "[]auth.Scope{auth.ScopeRead, auth.ScopeCapture, auth.ScopeInvoke}", Replace: "[]auth.Scope{auth.ScopeRead, auth.ScopeCapture, auth.ScopeInvoke, auth.ScopeGrant}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestAgentTokenCannotGrant"},
		},
		{
			Name:     "secure/credential-any-mode",
			Why:      "the CLI uses an operator credential file others may read",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if st.Mode().Perm()&0o077 != 0 {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIFindsTheOperatorToken"},
		},
		{
			Name:     "secure/credential-of-a-dead-serve",
			Why:      "the CLI sends the operator token registered by a serve that no longer runs (to whatever took its port)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if !ownProcess(e.PID) {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCLIFindsTheOperatorToken"},
		},
		{
			Name:     "secure/console-token-off-terminal",
			Why:      "serve writes the console URL with the operator token to output that is not a terminal (a log file, a journal)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if m.TerminalIsTTY {", Replace: "if true {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestFirstStartCreatesTokens"},
		},
		{
			Name:     "secure/mcp-anonymous-grant",
			Why:      "without auth an MCP client holds grant: it reviews its own turn by elicitation",
			Edits:    []Edit{{Dir: "mcpserve", Find: "delete(p.Scopes, auth.ScopeGrant)", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPWithoutAuthOffersNoGrant"},
		},
		{
			Name: "secure/mcp-autorun-tool-without-auth",
			Why:  "without auth MCP registers set_procedure_auto_run again and tools/list stops filtering by scope (the two defences together: either alone still hides it)",
			Edits: []Edit{{Dir: "mcpserve", Find: "if !h.cfg.Auth.Enabled() { return nil // without auth", Replace: "if false { return nil // without auth"},
				{Dir: "mcpserve", Find: "if c.mayCall(t.Name) == nil {", Replace: "if true || c.mayCall(t.Name) == nil {"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestNoAuthOffersNoGrant", "TestMCPWithoutAuthOffersNoGrant"},
		},
	}...)
}
