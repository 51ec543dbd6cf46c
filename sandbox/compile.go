package sandbox

import (
	"slices"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/procgraph/procgraph/internal/blocksyntax"
)

// progCache keeps compiled programs. A starlark.Program is immutable and
// holds no values, so runs that share one share nothing mutable: each run
// gets its own thread and globals. Keys are the file name, the source and the
// predeclared names (resolution depends on them).
var progCache = struct {
	sync.Mutex
	m map[string]*starlark.Program
}{m: map[string]*starlark.Program{}}

const maxCachedPrograms = 256

// compile parses the block and compiles it against the predeclared names.
// load statements are rejected: the thread has no Load.
func compile(filename, src string, predeclared starlark.StringDict) (*starlark.Program, error) {
	names := make([]string, 0, len(predeclared))
	for k := range predeclared {
		names = append(names, k)
	}
	slices.Sort(names)
	key := filename + "\x00" + strings.Join(names, ",") + "\x00" + src

	progCache.Lock()
	prog := progCache.m[key]
	progCache.Unlock()
	if prog != nil {
		return prog, nil
	}
	f, err := blocksyntax.Parse(filename, src)
	if err != nil {
		return nil, err
	}
	prog, err = starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	progCache.Lock()
	if len(progCache.m) >= maxCachedPrograms {
		clear(progCache.m)
	}
	progCache.m[key] = prog
	progCache.Unlock()
	return prog, nil
}
