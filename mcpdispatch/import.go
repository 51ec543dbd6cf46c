package mcpdispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/procedures"
)

// Source names an upstream MCP server: exactly one of URL (streamable HTTP)
// or Command (stdio), with the options to reach it.
type Source struct {
	URL     string
	Command []string
	Options Options
}

// Open returns a Dispatcher for src (NewHTTP or NewCommand).
func Open(ctx context.Context, src Source) (*Dispatcher, error) {
	switch {
	case src.URL != "" && len(src.Command) > 0:
		return nil, errors.New("name one upstream MCP server: a URL or a command, not both")
	case src.URL != "":
		return NewHTTP(ctx, src.URL, src.Options)
	case len(src.Command) > 0:
		return NewCommand(ctx, src.Command, src.Options)
	}
	return nil, errors.New("no upstream MCP server named: give a URL or a command")
}

// Skipped is an upstream tool Import left out, and why.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ListTools returns every tool the upstream lists (all pages).
func (d *Dispatcher) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	s, err := d.sessionFor(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream MCP server %s: %v", d.target, err)
	}
	var tools []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("upstream MCP server %s: listing tools: %v", d.target, text.Bounded(err.Error(), maxErrorBytes))
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// Import lists the upstream's tools as catalogue entries (see Catalogue).
func (d *Dispatcher) Import(ctx context.Context, trustAnnotations bool) ([]procedures.Tool, []Skipped, error) {
	listed, err := d.ListTools(ctx)
	if err != nil {
		return nil, nil, err
	}
	tools, skipped := Catalogue(listed, trustAnnotations)
	return tools, skipped, nil
}

// Import connects to src, lists its tools as catalogue entries and
// disconnects (stopping a command it started).
func Import(ctx context.Context, src Source, trustAnnotations bool) ([]procedures.Tool, []Skipped, error) {
	src.Options.Lazy = true
	d, err := Open(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	return d.Import(ctx, trustAnnotations)
}

var callableName = regexp.MustCompile(`^[A-Za-z_][0-9A-Za-z_]{0,127}$`)

// Catalogue converts MCP tools into procgraph catalogue tools, sorted by
// name: the description and input schema are copied; read_only is the
// readOnlyHint and external_access the openWorldHint (absent: true) only
// when trustAnnotations, else false and true. A tool a procedure cannot
// call (its name is not an identifier of at most 128 characters, or starts
// with proc__), a second tool of the same name, or one whose description
// is past the catalogue's bound (fields.ToolDesc: no catalogue would take
// it) is skipped.
func Catalogue(listed []*mcp.Tool, trustAnnotations bool) ([]procedures.Tool, []Skipped) {
	var tools []procedures.Tool
	var skipped []Skipped
	seen := map[string]bool{}
	for _, t := range listed {
		if t == nil {
			continue
		}
		switch {
		case !callableName.MatchString(t.Name):
			skipped = append(skipped, Skipped{Name: t.Name, Reason: "not an identifier of at most 128 characters: procedures cannot call it as tools.NAME"})
			continue
		case procedures.IsProcName(t.Name):
			skipped = append(skipped, Skipped{Name: t.Name, Reason: "the proc__ prefix is reserved for procedures"})
			continue
		case seen[t.Name]:
			skipped = append(skipped, Skipped{Name: t.Name, Reason: "listed twice"})
			continue
		}
		if err := fields.ToolDesc.CheckString(t.Description); err != nil {
			skipped = append(skipped, Skipped{Name: t.Name, Reason: fault.ErrorMessage(err) + ": a catalogue refuses it (shorten it and add the tool by hand)"})
			continue
		}
		seen[t.Name] = true
		ct := procedures.Tool{Name: t.Name, Description: t.Description, ExternalAccess: true, InputSchema: schemaMap(t.InputSchema)}
		if trustAnnotations && t.Annotations != nil {
			ct.ReadOnly = t.Annotations.ReadOnlyHint
			if t.Annotations.OpenWorldHint != nil {
				ct.ExternalAccess = *t.Annotations.OpenWorldHint
			}
		}
		tools = append(tools, ct)
	}
	if c, err := procedures.NewCatalogue(tools); err == nil {
		tools = c.Tools
	}
	return tools, skipped
}

// schemaMap returns an input schema as a JSON object, nil when it is not one.
func schemaMap(s any) map[string]any {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// ImportCatalogueJSON is `procgraph tools import`: it imports src's tools
// and writes {"tools": [...]} to w — a catalogue file for `serve --tools`
// or a body for PUT /v1/tools — and one line per skipped tool to warn.
// The catalogue is validated as the server would; an invalid one is an error.
func ImportCatalogueJSON(ctx context.Context, w, warn io.Writer, src Source, trustAnnotations bool) error {
	tools, skipped, err := Import(ctx, src, trustAnnotations)
	if err != nil {
		return err
	}
	if tools == nil {
		tools = []procedures.Tool{}
	}
	if _, err := procedures.NewCatalogue(tools); err != nil {
		return fmt.Errorf("the imported catalogue is not valid: %v", fault.ErrorMessage(err))
	}
	for _, s := range skipped {
		if warn != nil {
			fmt.Fprintf(warn, "skipped tool %q: %s\n", s.Name, s.Reason)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Tools []procedures.Tool `json:"tools"`
	}{tools})
}
