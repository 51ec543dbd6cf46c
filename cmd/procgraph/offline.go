package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// signatureOutput is what `procgraph signature` prints.
type signatureOutput struct {
	Signature          []string             `json:"signature"`
	Name               string               `json:"name"`
	CodeHash           string               `json:"code_hash"`
	Parameters         []string             `json:"parameters"`
	Opaque             bool                 `json:"opaque"`
	Warnings           []procedures.Warning `json:"warnings"`
	ReadOnly           bool                 `json:"read_only"`
	StateChangingTools []string             `json:"state_changing_tools"`
	UnknownTools       []string             `json:"unknown_tools"`
}

// cmdSignature analyses a procedure file offline.
func cmdSignature(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("signature", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dialect := fs.String("dialect", "starlark", "starlark or python-async")
	toolsFile := fs.String("tools", "", "catalogue file ({\"tools\": [...]}) to classify against; without it every tool is unknown")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: procgraph signature [--dialect D] [--tools catalogue.json] FILE|-")
		return 2
	}
	code, err := readSource(pos[0], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph signature: %v\n", err)
		return 1
	}
	cat, err := loadCatalogueFile(*toolsFile)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph signature: %v\n", err)
		return 1
	}
	d, err := signature.ParseDialect(*dialect)
	if err != nil {
		fmt.Fprintf(stderr, "procgraph signature: %v\n", err)
		return 2
	}
	a, err := signature.Analyze(code, d)
	if err != nil {
		var se *signature.Error
		if errors.As(err, &se) {
			fmt.Fprintf(stderr, "%s: %s (feature: %s)\n", pos[0], se.Message, se.Feature)
		} else {
			fmt.Fprintf(stderr, "procgraph signature: %v\n", err)
		}
		return 1
	}
	c := procedures.Classify(a.Signature, cat, nil)
	out := signatureOutput{
		Signature: a.Signature, Name: a.Name, CodeHash: a.CodeHash, Parameters: emptyIfNil(a.Parameters),
		Opaque: a.Opaque, Warnings: []procedures.Warning{}, ReadOnly: c.ReadOnly,
		StateChangingTools: emptyIfNil(c.StateChangingTools), UnknownTools: emptyIfNil(c.UnknownTools),
	}
	for _, w := range a.Warnings {
		out.Warnings = append(out.Warnings, procedures.Warning{Line: w.Line, Column: w.Column, Message: w.Message})
	}
	return printJSON(stdout, stderr, out)
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
		return nil, fmt.Errorf("%s is not a catalogue ({\"tools\": [...]}): %v", path, err)
	}
	c, err := procedures.NewCatalogue(f.Tools)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, procedures.ErrorMessage(err))
	}
	return c, nil
}

func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "procgraph: %v\n", err)
		return 1
	}
	return 0
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
