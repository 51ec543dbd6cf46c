package mcpdispatch

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCommandEnvironment: the upstream command never receives procgraph's
// settings (PROCGRAPH_*) or the store's credentials (NEO4J_*); the rest of
// the environment is passed on.
func TestCommandEnvironment(t *testing.T) {
	t.Setenv("NEO4J_PASSWORD", "store-secret")
	t.Setenv("NEO4J_URI", "bolt://db.example:7687")
	t.Setenv("PROCGRAPH_TOKENS_FILE", "/etc/procgraph/tokens.json")
	t.Setenv("MCPTEST_KEEP", "kept")
	u := newUpstream(t, "stdio")
	d := u.dispatcher(t, Options{})
	v, err := d.Dispatch(context.Background(), "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, ok := v.(interface{ String() string })
	if !ok {
		t.Fatalf("pid answered %T %v", v, v)
	}
	raw, err := os.ReadFile("/proc/" + pid.String() + "/environ")
	if err != nil {
		t.Fatalf("reading the command's environment: %v", err)
	}
	env := strings.Split(string(raw), "\x00")
	if !slices.Contains(env, "MCPTEST_KEEP=kept") {
		t.Fatalf("the command did not get the rest of the environment: %q", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "NEO4J_") || strings.HasPrefix(kv, "PROCGRAPH_") {
			t.Errorf("the upstream command received %s", kv[:strings.IndexByte(kv, '=')])
		}
	}
}
