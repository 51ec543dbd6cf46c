package mcpdispatch

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/procedures"
)

// TestToolName: the mapping of a server's tool to its catalogue name.
func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 200)
	cases := []struct{ prefix, tool, want string }{
		{"", "get_jobs", "get_jobs"},
		{"", "get-sum", "get_sum"},
		{"", "trigger-long-running-operation", "trigger_long_running_operation"},
		{"", "files.read", "files_read"},
		{"fs", "read_file", "fs__read_file"},
		{"fs", "read-file", "fs__read_file"},
		{"server-everything", "get-sum", "server_everything__get_sum"},
		{"my.git", "git_status", "my_git__git_status"},
		{"", "über", "_ber"}, // one '_' per character, not per byte
		{"", "2fa", "_2fa"},  // an identifier does not start with a digit
		{"1fs", "read", "_1fs__read"},
		{"", "a b\tc\n", "a_b_c_"},
		{"", "\xff\xfe", "__"},
		{"", "proc_x", "proc_x"},
		{"", "PROC__x", "PROC__x"},
	}
	for _, c := range cases {
		got, err := ToolName(c.prefix, c.tool)
		if err != nil || got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, %v; want %q", c.prefix, c.tool, got, err, c.want)
		}
		if _, err := procedures.NewCatalogue([]procedures.Tool{{Name: got}}); err != nil {
			t.Errorf("ToolName(%q, %q) = %q, which the catalogue refuses: %v", c.prefix, c.tool, got, err)
		}
	}
	for _, c := range []struct{ prefix, tool string }{{"", ""}, {"fs", ""}, {"", "proc__x"}, {"proc", "x"}, {"proc__a", "b"}, {"", "proc-_x"}} {
		if got, err := ToolName(c.prefix, c.tool); err == nil {
			t.Errorf("ToolName(%q, %q) = %q, want an error", c.prefix, c.tool, got)
		}
	}

	// A long name is shortened by one rule, never skipped; the hash keeps
	// names that map alike apart, and depends on prefix and tool only.
	a, err := ToolName("srv", long+"-a")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ToolName("srv", long+".a")
	if len(a) != 128 || !strings.HasPrefix(a, "srv__xxx") || strings.Count(a, "___") != 1 || a == b {
		t.Fatalf("long names %q and %q", a, b)
	}
	if again, _ := ToolName("srv", long+"-a"); again != a {
		t.Fatalf("not stable: %q then %q", a, again)
	}
	other, _ := ToolName("srw", long+"-a")
	if other[:5] == a[:5] || other[105:] == a[105:] {
		t.Fatalf("another prefix, same hash: %q %q", a, other)
	}
	exact, _ := ToolName("", strings.Repeat("y", 128))
	if exact != strings.Repeat("y", 128) {
		t.Fatalf("a name of exactly 128 characters is kept: %q", exact)
	}
	if _, err := procedures.NewCatalogue([]procedures.Tool{{Name: a}, {Name: b}}); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogueOfNames: names are stable whatever else is configured, and
// two tools that map to one name are refused, naming both.
func TestCatalogueOfNames(t *testing.T) {
	tool := func(name string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}
	}
	fs := Listed{Server: "fs", Prefix: "fs", Tools: []*mcp.Tool{tool("read_file"), tool("list-dir")}}
	git := Listed{Server: "git", Prefix: "git", Tools: []*mcp.Tool{tool("git_status"), tool("read_file")}}
	alone, _, err := CatalogueOf([]Listed{fs})
	if err != nil {
		t.Fatal(err)
	}
	both, _, err := CatalogueOf([]Listed{git, fs})
	if err != nil {
		t.Fatal(err)
	}
	route := map[string]string{}
	for _, c := range both {
		route[c.Name] = c.Server + "/" + c.UpstreamName
	}
	for _, c := range alone {
		if route[c.Name] != c.Server+"/"+c.UpstreamName {
			t.Errorf("%s is %s alone, %s beside git", c.Name, c.Server+"/"+c.UpstreamName, route[c.Name])
		}
	}
	if route["fs__list_dir"] != "fs/list-dir" || route["git__read_file"] != "git/read_file" || route["fs__read_file"] != "fs/read_file" || len(route) != 4 {
		t.Fatalf("routes %v", route)
	}

	for name, servers := range map[string][]Listed{
		"one server, kebab and snake": {{Server: "a", Prefix: "a", Tools: []*mcp.Tool{tool("get-sum"), tool("get_sum")}}},
		"two servers, bare names":     {{Server: "a", Tools: []*mcp.Tool{tool("read")}}, {Server: "b", Tools: []*mcp.Tool{tool("read")}}},
		"prefixes that map alike":     {{Server: "a.b", Prefix: "a.b", Tools: []*mcp.Tool{tool("x")}}, {Server: "a_b", Prefix: "a_b", Tools: []*mcp.Tool{tool("x")}}},
		"a prefix and a bare name":    {{Server: "fs", Prefix: "fs", Tools: []*mcp.Tool{tool("read")}}, {Server: "raw", Tools: []*mcp.Tool{tool("fs__read")}}},
	} {
		_, _, err := CatalogueOf(servers)
		if err == nil {
			t.Errorf("%s: no collision reported", name)
			continue
		}
		for _, s := range servers {
			if !strings.Contains(err.Error(), serverLabel(s.Server)) {
				t.Errorf("%s: %v does not name %s", name, err, serverLabel(s.Server))
			}
		}
	}

	// Listed twice by one server, and a reserved name: skipped, reported.
	tools, skipped, err := CatalogueOf([]Listed{{Tools: []*mcp.Tool{tool("a"), tool("a"), tool("proc__b"), nil}}})
	if err != nil || len(tools) != 1 || len(skipped) != 2 {
		t.Fatalf("tools %+v skipped %+v err %v", tools, skipped, err)
	}
}
