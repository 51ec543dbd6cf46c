package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/mcpdispatch"
)

// TestREADMEUpstreamsFile: the upstreams file of the README's "Front your
// MCP servers" parses (mcpdispatch.ParseUpstreams) with the servers
// TestRealUpstreams fronts, at the versions .ci/run installs
// (testdata/upstreams), so the README cannot drift from a file serve
// accepts.
func TestREADMEUpstreamsFile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)cat > demo/upstreams\.json <<'JSON'\n(.*?)\nJSON\n`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no upstreams file (cat > demo/upstreams.json <<'JSON' … JSON)")
	}
	ups, err := mcpdispatch.ParseUpstreams(m[1])
	if err != nil {
		t.Fatalf("the README's upstreams file: %v\n%s", err, m[1])
	}
	byKey := map[string]mcpdispatch.Upstream{}
	for _, u := range ups {
		byKey[u.Key] = u
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(mustRead(t, realUpstreamsDir+"/package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	reqs := string(mustRead(t, realUpstreamsDir+"/requirements.txt"))
	gitPin := regexp.MustCompile(`(?m)^mcp-server-git==(\S+)$`).FindStringSubmatch(reqs)
	if gitPin == nil {
		t.Fatal("requirements.txt pins no mcp-server-git")
	}
	for key, want := range map[string]string{
		"fs":         "@modelcontextprotocol/server-filesystem@" + pkg.Dependencies["@modelcontextprotocol/server-filesystem"],
		"everything": "@modelcontextprotocol/server-everything@" + pkg.Dependencies["@modelcontextprotocol/server-everything"],
	} {
		u, ok := byKey[key]
		if !ok || len(u.Command) < 3 || u.Command[0] != "npx" || u.Command[2] != want || !u.TrustAnnotations {
			t.Errorf("the README's %s server is %+v, want npx -y %s with trust_annotations", key, u, want)
		}
	}
	if u := byKey["git"]; len(u.Command) == 0 || !strings.HasSuffix(u.Command[0], "/mcp-server-git") || !u.TrustAnnotations {
		t.Errorf("the README's git server is %+v", u)
	}
	if !strings.Contains(string(readme), "pip install -q mcp-server-git=="+gitPin[1]) {
		t.Errorf("the README does not install mcp-server-git==%s, the version .ci/run installs", gitPin[1])
	}
	if len(ups) != 3 || byKey["everything"].Prefix != "ev" {
		t.Errorf("the README's servers: %+v", ups)
	}
}
