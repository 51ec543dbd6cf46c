package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/procgraph/procgraph/auth"
)

// cmdTokenCreate implements `procgraph token create`: it prints a new
// token once and stores only its hash in the tokens file.
func cmdTokenCreate(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("token create", "token create --name NAME --scopes read,capture,invoke,grant,admin [--tokens-file F]",
		"Print a new bearer token once; only its sha256 is stored, in a 0600 file.", false)
	name := cl.fs.String("name", "", "the token's holder (the audit actor; required)")
	scopes := cl.fs.String("scopes", "", "comma-separated scopes: read, capture, invoke, grant, admin (required)")
	file := cl.fs.String("tokens-file", "", "tokens file (env PROCGRAPH_TOKENS_FILE; a relative path is resolved against the data file's directory, as serve does; default "+defaultTokensFile+" next to the data file)")
	data := cl.fs.String("data", "", "the embedded store file whose tokens these are (env PROCGRAPH_DATA, default ./procgraph.db)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *name == "" || *scopes == "" {
		return cl.fail(s, "--name and --scopes are required")
	}
	stdout, stderr := s.out, s.err
	given := *file
	if given == "" {
		given = os.Getenv("PROCGRAPH_TOKENS_FILE")
	}
	if *data == "" {
		*data = cmp.Or(os.Getenv("PROCGRAPH_DATA"), "./procgraph.db")
	}
	path, _, err := tokensFilePath(given, "embedded", *data)
	if err != nil {
		return cl.fail(s, err.Error())
	}
	var list []string
	for _, s := range strings.Split(*scopes, ",") {
		s = strings.TrimSpace(s)
		if _, err := auth.ParseScope(s); err != nil {
			return cl.fail(stdio{err: stderr}, err.Error())
		}
		list = append(list, s)
	}
	tf := &auth.TokensFile{}
	if existing, err := auth.ReadTokensFile(path); err == nil {
		tf = existing
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "procgraph token create: %v\n", err)
		return 1
	}
	token, err := auth.NewToken()
	if err != nil {
		fmt.Fprintf(stderr, "procgraph token create: %v\n", err)
		return 1
	}
	tf.Tokens = append(tf.Tokens, auth.TokenEntry{Name: *name, SHA256: auth.HashToken(token), Scopes: list})
	if err := tf.Validate(); err != nil {
		fmt.Fprintf(stderr, "procgraph token create: %v\n", err)
		return 1
	}
	if err := writeFileAtomic(path, tf); err != nil {
		fmt.Fprintf(stderr, "procgraph token create: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "token for %s (%s) stored as a hash in %s; it is shown only once\n", *name, strings.Join(list, ","), path)
	return 0
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
