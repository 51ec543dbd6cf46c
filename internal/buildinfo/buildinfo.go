// Package buildinfo is this build's release and VCS stamp, as the Go
// toolchain recorded them (runtime/debug.ReadBuildInfo): the one source of
// the version `procgraph version` prints, MCP's serverInfo.version and a
// dump's header carry.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Devel is the version of a build the toolchain stamped with no release
// (go run, go build in a work tree, go test).
const Devel = "devel"

// Info is what the toolchain recorded about this build.
type Info struct {
	// Version is the module's release (v1.2.3, or a pseudo-version such as
	// v0.0.0-20261201…-abcdef when installed from a commit), or Devel.
	Version string `json:"version"`
	// Module is the main module's path.
	Module string `json:"module"`
	// GoVersion is the toolchain that built it.
	GoVersion string `json:"go_version"`
	// Revision, Time and Modified are the VCS stamp (-buildvcs): the
	// commit, its time (RFC 3339) and whether the work tree had changes;
	// empty when the build has none.
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
}

// Read returns this build's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Devel}
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, Module: bi.Main.Path, GoVersion: bi.GoVersion}
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = Devel
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Version is this build's release, or Devel.
func Version() string { return Read().Version }

// String is the one line `procgraph version` prints: the release, then
// the commit (12 digits, "+dirty" when modified) and the toolchain.
func (in Info) String() string {
	var b strings.Builder
	b.WriteString("procgraph " + in.Version)
	if in.Revision != "" {
		rev := in.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		b.WriteString(" (" + rev)
		if in.Modified {
			b.WriteString("+dirty")
		}
		if in.Time != "" {
			b.WriteString(", " + in.Time)
		}
		b.WriteString(")")
	}
	if in.GoVersion != "" {
		b.WriteString(" " + in.GoVersion)
	}
	return b.String()
}
