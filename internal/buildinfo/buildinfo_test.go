package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestFromBuildInfo: the release and VCS stamp as the toolchain records
// them; an unstamped build is Devel.
func TestFromBuildInfo(t *testing.T) {
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want Info
		line string
	}{
		{"devel without vcs", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "m", Version: "(devel)"}},
			Info{Version: Devel, Module: "m", GoVersion: "go1.26.0"}, "procgraph devel go1.26.0"},
		{"release", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "m", Version: "v1.4.0"}},
			Info{Version: "v1.4.0", Module: "m", GoVersion: "go1.26.0"}, "procgraph v1.4.0 go1.26.0"},
		{"vcs stamp, modified", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "m", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T19:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: Devel, Module: "m", GoVersion: "go1.26.0", Revision: "0123456789abcdef0123", Time: "2026-12-01T19:00:00Z", Modified: true},
			"procgraph devel (0123456789ab+dirty, 2026-12-01T19:00:00Z) go1.26.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fromBuildInfo(&c.bi)
			if got != c.want {
				t.Fatalf("fromBuildInfo = %+v, want %+v", got, c.want)
			}
			if s := got.String(); s != c.line {
				t.Fatalf("String = %q, want %q", s, c.line)
			}
		})
	}
	if v := Version(); v == "" {
		t.Fatal("Version is empty")
	}
}
