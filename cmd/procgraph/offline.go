package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/internal/strictjson"
	ptext "github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/signature"
)

// signatureOutput is what `procgraph signature` prints.
type signatureOutput struct {
	Signature          []string             `json:"signature"`
	Name               string               `json:"name"`
	Dialect            string               `json:"dialect"`
	CodeHash           string               `json:"code_hash"`
	Parameters         []string             `json:"parameters"`
	Opaque             bool                 `json:"opaque"`
	Warnings           []procedures.Warning `json:"warnings"`
	ReadOnly           bool                 `json:"read_only"`
	StateChangingTools []string             `json:"state_changing_tools"`
	UnknownTools       []string             `json:"unknown_tools"`
}

// cmdSignature analyses a procedure file offline.
func cmdSignature(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("signature", "signature [--dialect D] [--tools catalogue.json] FILE|- [--json]",
		"A procedure file's signature, name, code hash and parameters, classified against a catalogue; no server.", true)
	dialect := cl.enum("dialect", "", dialectUsage, dialectValues...)
	toolsFile := cl.fs.String("tools", "", "catalogue file ({\"tools\": [...]}) to classify against; without it every tool is unknown")
	pos, code, done := cl.parse(args, 1, 1, s)
	if done {
		return code
	}
	src, err := readSource(pos[0], s.in)
	if err != nil {
		return fail(s.err, "signature", err)
	}
	cat, err := loadCatalogueFile(*toolsFile)
	if err != nil {
		return fail(s.err, "signature", err)
	}
	b, err := replay.FileBlock(src, dialectFor(pos[0], *dialect), cat)
	if err != nil {
		var se *signature.Error
		switch {
		case errors.As(err, &se) && se.Feature == "dialect":
			return cl.fail(s, err.Error())
		case errors.As(err, &se):
			fmt.Fprintf(s.err, "%s: %s (feature: %s)\n", ptext.VisibleLine(pos[0]), ptext.VisibleLine(se.Message), ptext.VisibleLine(se.Feature))
			return 1
		}
		return fail(s.err, "signature", err)
	}
	a, c := b.Analysis, b.Class
	out := signatureOutput{
		Signature: a.Signature, Name: b.Name, Dialect: string(b.Dialect), CodeHash: a.CodeHash, Parameters: jsonvalue.List(a.Parameters),
		Opaque: a.Opaque, Warnings: []procedures.Warning{}, ReadOnly: c.ReadOnly,
		StateChangingTools: jsonvalue.List(c.StateChangingTools), UnknownTools: jsonvalue.List(c.UnknownTools),
	}
	for _, w := range a.Warnings {
		out.Warnings = append(out.Warnings, procedures.Warning{Line: w.Line, Column: w.Column, Message: w.Message})
	}
	if cl.asJSON() {
		printJSON(s.out, out)
		return 0
	}
	keyValues(s.out, "name", out.Name, "signature", strings.Join(out.Signature, ", "), "code hash", out.CodeHash,
		"dialect", out.Dialect, "parameters", strings.Join(out.Parameters, ", "), "opaque", yesNo(out.Opaque),
		"read-only", yesNo(out.ReadOnly), "state-changing tools", strings.Join(out.StateChangingTools, ", "),
		"unknown tools", strings.Join(out.UnknownTools, ", "))
	for _, w := range out.Warnings {
		fmt.Fprintf(s.out, "warning: %s\n", ptext.VisibleLine(w.Message)) // the message starts with its position
	}
	return 0
}

// readSource reads a file, or standard input for "-", bounded.
func readSource(path string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, signature.MaxCodeBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > signature.MaxCodeBytes {
		return "", fmt.Errorf("%s is larger than %d bytes", path, signature.MaxCodeBytes)
	}
	return string(b), nil
}

// loadCatalogueFile reads {"tools": [Tool]}; "" gives an empty catalogue.
func loadCatalogueFile(path string) (*procedures.Catalogue, error) {
	if path == "" {
		return procedures.NewCatalogue(nil)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Tools []procedures.Tool `json:"tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s is not a catalogue ({\"tools\": [...]}): %v", path, strictjson.Locate(b, err))
	}
	c, err := procedures.NewCatalogue(f.Tools)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, fault.ErrorMessage(err))
	}
	return c, nil
}
