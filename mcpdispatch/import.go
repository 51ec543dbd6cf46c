package mcpdispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
	Server string `json:"server,omitempty"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ListTools returns every tool the upstream lists (all pages).
func (d *Dispatcher) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	s, err := d.Session(ctx)
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
	d.stats.listedTools(len(tools))
	return tools, nil
}

// Import lists the upstream's tools as catalogue entries of the unnamed
// server (see Catalogue).
func (d *Dispatcher) Import(ctx context.Context, trustAnnotations bool) ([]procedures.Tool, []Skipped, error) {
	listed, err := d.ListTools(ctx)
	if err != nil {
		return nil, nil, err
	}
	return Catalogue(listed, trustAnnotations)
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

// Listed is what one server lists, for CatalogueOf: its key ("" for the
// unnamed server), the prefix of its tools' names, whether its annotations
// are trusted, and its tools.
type Listed struct {
	Server           string
	Prefix           string
	TrustAnnotations bool
	Tools            []*mcp.Tool
}

// Catalogue converts the tools the unnamed server lists (prefix "") into
// catalogue tools (see CatalogueOf).
func Catalogue(listed []*mcp.Tool, trustAnnotations bool) ([]procedures.Tool, []Skipped, error) {
	return CatalogueOf([]Listed{{Tools: listed, TrustAnnotations: trustAnnotations}})
}

// CatalogueOf converts what each server lists into catalogue tools,
// sorted by name. Each tool is named by ToolName (its server's prefix and
// its own name) and carries its server's key and its name on the server
// (upstream_name, sent on the wire); the description and input schema are
// copied; read_only is the readOnlyHint and external_access the
// openWorldHint (absent: true) only when the server's annotations are
// trusted, else false and true. A tool ToolName refuses (an empty name, a
// name that maps to proc__…), a second listing of one name on one server
// and a tool whose description is past the catalogue's bound
// (fields.ToolDesc: no catalogue would take it) are skipped and reported. Two different tools that map to one
// catalogue name are an error naming both: a call must reach the tool the
// catalogue names, so none of the two is kept by order.
func CatalogueOf(servers []Listed) ([]procedures.Tool, []Skipped, error) {
	var tools []procedures.Tool
	var skipped []Skipped
	owner := map[string]string{} // catalogue name -> who it is, for a collision's message
	for _, srv := range servers {
		seen := map[string]bool{}
		for _, t := range srv.Tools {
			if t == nil {
				continue
			}
			name, err := ToolName(srv.Prefix, t.Name)
			switch {
			case err != nil:
				skipped = append(skipped, Skipped{Server: srv.Server, Name: t.Name, Reason: err.Error()})
				continue
			case seen[t.Name]:
				skipped = append(skipped, Skipped{Server: srv.Server, Name: t.Name, Reason: "listed twice"})
				continue
			}
			seen[t.Name] = true
			if err := fields.ToolDesc.CheckString(t.Description); err != nil {
				skipped = append(skipped, Skipped{Server: srv.Server, Name: t.Name, Reason: fault.ErrorMessage(err) + ": a catalogue refuses it (shorten it and add the tool by hand)"})
				continue
			}
			who := fmt.Sprintf("tool %q of %s", t.Name, serverLabel(srv.Server))
			if first, dup := owner[name]; dup {
				return nil, skipped, collision(first, who, name)
			}
			owner[name] = who
			ct := procedures.Tool{Name: name, Description: t.Description, ExternalAccess: true, InputSchema: schemaMap(t.InputSchema),
				Server: srv.Server, UpstreamName: t.Name}
			if srv.TrustAnnotations && t.Annotations != nil {
				ct.ReadOnly = t.Annotations.ReadOnlyHint
				if t.Annotations.OpenWorldHint != nil {
					ct.ExternalAccess = *t.Annotations.OpenWorldHint
				}
			}
			if ct.InputSchema == nil {
				ct.InputSchema = map[string]any{}
			}
			ct.Listed = procedures.ListedHash(ct)
			tools = append(tools, ct)
		}
	}
	c, err := procedures.NewCatalogue(tools)
	if err != nil {
		return nil, skipped, fmt.Errorf("the listed tools are not a valid catalogue: %v", fault.ErrorMessage(err))
	}
	return c.Tools, skipped, nil
}

// collision is the error of two tools mapping to one catalogue name.
func collision(first, second, name string) error {
	return fmt.Errorf("%s and %s both map to the catalogue name %q: rename one with the server's \"prefix\"", first, second, name)
}

// serverLabel names a server in messages.
func serverLabel(key string) string {
	if key == "" {
		return "the upstream server"
	}
	return fmt.Sprintf("server %q", key)
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
// or a body for PUT /v1/tools — and one line per skipped tool, and per line
// a command server writes on its standard error, to warn.
// The catalogue is validated as the server would; an invalid one is an error.
func ImportCatalogueJSON(ctx context.Context, w, warn io.Writer, src Source, trustAnnotations bool) error {
	if src.Options.Stderr == nil && warn != nil && len(src.Command) > 0 {
		// What the server says on its way up (or down) is what explains a
		// failed import: shown, escaped, not thrown away.
		src.Options.Stderr = &prefixedLines{w: warn, prefix: "server: "}
	}
	tools, skipped, err := Import(ctx, src, trustAnnotations)
	warnSkipped(warn, skipped)
	if err != nil {
		return err
	}
	return writeCatalogue(w, tools)
}

// warnSkipped writes one line per skipped tool to warn (when not nil).
func warnSkipped(warn io.Writer, skipped []Skipped) {
	if warn == nil {
		return
	}
	for _, s := range skipped {
		fmt.Fprintf(warn, "skipped tool %q of %s: %s\n", s.Name, serverLabel(s.Server), s.Reason)
	}
}

// writeCatalogue writes {"tools": [...]}, indented.
func writeCatalogue(w io.Writer, tools []procedures.Tool) error {
	if tools == nil {
		tools = []procedures.Tool{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Tools []procedures.Tool `json:"tools"`
	}{tools})
}
