package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// command is one procgraph command: its name ("procedures list"), the line
// the top-level help shows, and what runs it with the arguments after the
// name.
type command struct {
	name, synopsis string
	run            func(ctx context.Context, args []string, s stdio) int
}

// commandGroup is a heading of the top-level help.
type commandGroup struct {
	title    string
	commands []command
}

// commands is every command, in the order the top-level help lists them.
func commands() []commandGroup {
	return []commandGroup{
		{"Service", []command{
			{"serve", "run the HTTP API and MCP (serve --help lists the settings)", cmdServe},
			{"token create", "make a bearer token, printed once; only its hash is stored (--server, or offline --store)", cmdTokenCreate},
			{"token list", "the store's tokens: holder, scopes, status, last use, expiry (never a token)", cmdTokenList},
			{"token rotate", "give a holder a new token with the same scopes; the old one is refused at once", cmdTokenRotate},
			{"token revoke", "revoke a holder's token on every instance sharing the store, without a restart", cmdTokenRevoke},
			{"doctor", "check the running server over its API (store, auth, catalogue, upstreams, MCP, version), else this machine's setup; exit 1 on a failed check", cmdDoctor},
			{"version", "this build's release and VCS stamp (also --version)", cmdVersion},
		}},
		{"Offline (no server)", []command{
			{"signature", "a procedure file's signature, name, hash and classification", cmdSignature},
			{"run", "replay a procedure file through the sandbox against an upstream", cmdRun},
			{"tools import", "build a catalogue from an MCP server's tools/list", cmdToolsImport},
		}},
		{"Store operations (--store, --data; NEO4J_* env)", []command{
			{"export", "write everything the store holds as a dump (-o FILE)", cmdExport},
			{"import", "load a dump into an empty store; run again to resume", cmdImport},
			{"restore", "put a backup in place of a stopped server's store file, or into an empty Neo4j", cmdRestore},
			{"compact", "rewrite a stopped server's store file without its free pages", cmdCompact},
			{"audit prune", "export the store, then delete audit records older than a date", cmdAuditPrune},
		}},
		{"Client (PROCGRAPH_URL, PROCGRAPH_TOKEN)", []command{
			{"procedures list", "find_all_procedures: a page of procedures, best first", cmdProceduresList},
			{"procedures show", "one procedure with its code", cmdProceduresShow},
			{"capture", "capture a procedure file", cmdCapture},
			{"lift", "--dry-run: what a re-capture of each current version would lift", cmdLift},
			{"versions", "a procedure's versions, or one version's code to review", cmdVersions},
			{"promote", "make a version current", cmdPromote},
			{"drift", "the stale versions: a tool they call changed since they last worked", cmdDrift},
			{"accept-drift", "accept a stale version's drift: it takes the current tool contracts (grant)", cmdAcceptDrift},
			{"verify", "replay versions against their recordings, calling no tool; exit 1 when one fails", cmdVerify},
			{"autorun grant", "let a procedure run unattended (set_procedure_auto_run)", cmdAutoRunGrant},
			{"autorun revoke", "take durable auto-run back", cmdAutoRunRevoke},
			{"retire", "hide a procedure from planners and refuse its invokes (admin)", cmdRetire},
			{"unretire", "bring a retired procedure back (admin)", cmdUnretire},
			{"undemote", "lift a demoted procedure's demotion (admin)", cmdUndemote},
			{"invoke", "replay a procedure on the server", cmdInvoke},
			{"backup", "save a consistent copy of the server's embedded store (admin and grant: it holds the recordings); --store: of a store, offline", cmdBackup},
			{"upstreams", "the upstream MCP servers: state, protocol revision, tool counts, last failure (admin)", cmdUpstreams},
			{"tools get", "the tool catalogue", cmdToolsGet},
			{"tools put", "replace the tool catalogue", cmdToolsPut},
			{"decisions", "the audit log, newest first", cmdDecisions},
			{"causes", "every cause, or one with its procedures", cmdCauses},
			{"graph", "a neighbourhood of the procedure graph", cmdGraph},
		}},
		{"Turn gate (PROCGRAPH_URL, PROCGRAPH_TOKEN)", turnCommands()},
	}
}

// runCLI runs procgraph with args (without the program name) and returns
// the exit code: 0 on success, 1 on failure, 2 on a usage error.
func runCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := stdio{in: stdin, out: terminalOut(stdout), err: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "--version", "-version":
		return cmdVersion(ctx, args[1:], s)
	case "help", "-h", "--help":
		if len(args) > 1 && args[0] == "help" {
			// help CMD [SUB] is CMD [SUB] --help.
			return runCLI(ctx, append(args[1:len(args):len(args)], "--help"), stdin, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	}
	if len(args) > 1 {
		if c, ok := findCommand(args[0] + " " + args[1]); ok {
			return c.run(ctx, args[2:], s)
		}
	}
	if c, ok := findCommand(args[0]); ok {
		return c.run(ctx, args[1:], s)
	}
	if subs := subcommands(args[0]); len(subs) > 0 {
		// A group without a known subcommand: list the subcommands.
		if len(args) > 1 && (args[1] == "--help" || args[1] == "-h") {
			printCommands(stdout, subs)
			return 0
		}
		if len(args) > 1 {
			var names []string
			for _, c := range subs {
				names = append(names, strings.TrimPrefix(c.name, args[0]+" "))
			}
			fmt.Fprintf(stderr, "procgraph %s: unknown subcommand %q%s\n", args[0], args[1],
				didYouMean(args[1], names, func(n string) string { return "procgraph " + args[0] + " " + n }))
		}
		fmt.Fprint(stderr, "usage:\n")
		printCommands(stderr, subs)
		return 2
	}
	fmt.Fprintf(stderr, "procgraph: unknown command %q%s (procgraph help lists them)\n", args[0], commandSuggestion(args))
	return 2
}

// commandSuggestion is the "did you mean" for an unknown command: the
// closest two-word command to the first two arguments, else the closest
// command or group to the first.
func commandSuggestion(args []string) string {
	names := commandNames()
	if len(args) > 1 {
		if c := closest(args[0]+" "+args[1], names); c != "" {
			return "; did you mean procgraph " + c + "?"
		}
	}
	words := map[string]bool{}
	var firsts []string
	for _, n := range names {
		first, _, _ := strings.Cut(n, " ")
		if !words[first] {
			words[first] = true
			firsts = append(firsts, first)
		}
	}
	return didYouMean(args[0], firsts, func(n string) string { return "procgraph " + n })
}

func findCommand(name string) (command, bool) {
	for _, g := range commands() {
		for _, c := range g.commands {
			if c.name == name {
				return c, true
			}
		}
	}
	return command{}, false
}

// subcommands are the commands named "group …".
func subcommands(group string) []command {
	var out []command
	for _, g := range commands() {
		for _, c := range g.commands {
			if strings.HasPrefix(c.name, group+" ") {
				out = append(out, c)
			}
		}
	}
	return out
}

// printUsage is the top-level help: every command.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "procgraph — a memory of procedures for LLM agents\n\nusage: procgraph COMMAND [flags]\n")
	for _, g := range commands() {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		printCommands(w, g.commands)
	}
	fmt.Fprint(w, "\nprocgraph help COMMAND (or COMMAND --help) prints a command's flags.\nFor people: tables and key: value; for scripts: --json on every command that answers.\n")
}

func printCommands(w io.Writer, cs []command) {
	for _, c := range cs {
		fmt.Fprintf(w, "  procgraph %-18s %s\n", c.name, c.synopsis)
	}
}
