package procedures

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/text"
)

// ListedHash is the hash of t as its server listed it: "sha256:" and the
// 64 hex of the JSON of every field of t but Listed and SchemaHash (name,
// description, read_only, external_access, input_schema, output_schema,
// server, upstream_name). A catalogue entry built from a server's listing
// (mcpdispatch.CatalogueOf) carries it as Listed; an entry whose Listed is
// its own ListedHash follows its server (FollowsServer).
func ListedHash(t Tool) string {
	t.Listed, t.SchemaHash = "", ""
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{}
	}
	b, err := json.Marshal(t)
	if err != nil {
		// Tools hold JSON-decoded values only; this cannot fail.
		panic("procedures: a tool does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FollowsServer reports whether a catalogue refresh may replace or remove
// t: t is exactly as its server listed it (its Listed is its ListedHash).
// An entry an operator edited (any field), wrote by hand, or stripped of
// its listed hash is the operator's, and a refresh keeps it as it is
// (docs/design.md "Drift": who wins).
func (t Tool) FollowsServer() bool {
	return t.Listed != "" && t.Listed == ListedHash(t)
}

// Refreshed is what a catalogue refresh of one server changed, by
// catalogue name, each sorted.
type Refreshed struct {
	// Server is the server refreshed.
	Server string `json:"server"`
	// Added are tools the server lists that the catalogue did not have.
	Added []string `json:"added,omitempty"`
	// Changed are entries that followed the server, replaced with what it
	// lists now.
	Changed []string `json:"changed,omitempty"`
	// Removed are entries that followed the server and that it no longer
	// lists: they left the catalogue (their procedures' replays are denied
	// unknown_tool).
	Removed []string `json:"removed,omitempty"`
	// Kept are the operator's entries (not FollowsServer) that differ from
	// what the server lists now, or that it no longer lists: kept as they
	// are.
	Kept []string `json:"kept,omitempty"`
	// Taken are tools the server lists under a name another server's entry
	// holds: not added.
	Taken []string `json:"taken,omitempty"`
}

// Changes reports whether the refresh changes the catalogue.
func (r Refreshed) Changes() bool {
	return len(r.Added)+len(r.Changed)+len(r.Removed) > 0
}

// refreshTools is the catalogue after a refresh of server (docs/design.md
// "Drift"): stored's tools, with listed — what server lists now, as
// catalogue entries (mcpdispatch.CatalogueOf) — merged in:
//   - an entry of server that follows it (FollowsServer) is replaced by
//     what server lists under its name, or removed when it lists none;
//   - an entry of server that is the operator's is kept as it is (the
//     operator wins), reported in Kept when the listing differs;
//   - a listed tool the catalogue does not have is added as listed (so a
//     new tool is read_only only when its server's annotations are
//     trusted: CatalogueOf);
//   - a listed tool whose name an entry of another server holds is not
//     added (Taken).
//
// Entries of other servers are untouched. The tools are returned in
// stored's order, added ones after; with no change (Refreshed.Changes),
// they are stored's.
func refreshTools(stored *Catalogue, server string, listed []Tool) ([]Tool, Refreshed) {
	r := Refreshed{Server: server}
	byName := make(map[string]Tool, len(listed))
	for _, t := range listed {
		byName[t.Name] = t
	}
	var tools []Tool
	if stored != nil {
		tools = make([]Tool, 0, len(stored.Tools)+len(listed))
	}
	seen := make(map[string]bool, len(listed))
	for _, t := range storedTools(stored) {
		l, ok := byName[t.Name]
		seen[t.Name] = ok
		switch {
		case t.Server != server:
			if ok {
				r.Taken = append(r.Taken, t.Name)
			}
		case !t.FollowsServer():
			if !ok || !sameEntry(t, l) {
				r.Kept = append(r.Kept, t.Name)
			}
		case !ok:
			r.Removed = append(r.Removed, t.Name)
			continue
		case !sameEntry(t, l):
			r.Changed = append(r.Changed, t.Name)
			t = l
		}
		tools = append(tools, t)
	}
	for _, t := range listed {
		if !seen[t.Name] {
			if _, held := stored.Tool(t.Name); !held {
				r.Added = append(r.Added, t.Name)
				tools = append(tools, t)
			}
		}
	}
	for _, names := range [][]string{r.Added, r.Changed, r.Removed, r.Kept, r.Taken} {
		slices.Sort(names)
	}
	if !r.Changes() && stored != nil {
		return stored.Tools, r
	}
	return tools, r
}

// storedTools is c's tools (none for nil).
func storedTools(c *Catalogue) []Tool {
	if c == nil {
		return nil
	}
	return c.Tools
}

// sameEntry reports whether two entries are one entry as stored (every
// field but the computed SchemaHash).
func sameEntry(a, b Tool) bool {
	a.SchemaHash, b.SchemaHash = "", ""
	ja, ea := json.Marshal(a)
	jb, eb := json.Marshal(b)
	return ea == nil && eb == nil && string(ja) == string(jb)
}

// RefreshCatalogue merges what server lists now into the catalogue
// (refreshTools) and stores the result when it changed, audited as a
// catalogue change (reason catalogue_refreshed, actor "procgraph catalogue
// refresh", a note naming the server and what changed); a refresh that
// changes nothing writes nothing. Every procedure's classification and
// drift follow at once, as after PutCatalogue: a changed contract makes the
// versions calling the tool stale and their grants inactive
// (catalogue_drift), a removed tool makes it unknown. It is serialised
// with PutCatalogue in this Service, so a refresh never writes back a
// catalogue an operator's put replaced meanwhile.
func (s *Service) RefreshCatalogue(ctx context.Context, server string, listed []Tool) (Refreshed, error) {
	s.catalogueMu.Lock()
	defer s.catalogueMu.Unlock()
	stored, err := s.store.Catalogue(ctx)
	if err != nil {
		return Refreshed{Server: server}, err
	}
	tools, r := refreshTools(stored, server, listed)
	if !r.Changes() {
		return r, nil
	}
	c, err := NewCatalogue(tools)
	if err != nil {
		return r, err
	}
	if c.Revision == stored.Revision {
		return Refreshed{Server: server, Kept: r.Kept, Taken: r.Taken}, nil
	}
	d := audit.Decision{Kind: audit.KindCatalogue, CodeHash: c.Revision, Outcome: audit.Allowed, Reason: audit.ReasonCatalogueRefreshed,
		Actor: refreshActor, Note: refreshNote(r)}
	d, err = s.rec.Record(ctx, d)
	if err != nil {
		return r, err
	}
	if err := s.store.PutCatalogue(ctx, c); err != nil {
		return r, err
	}
	s.feed.Publish(changes.Change{Kind: changes.ChangeCatalogue, CodeHash: c.Revision, Decision: d.ID})
	return r, nil
}

// refreshActor is the actor of a catalogue refresh's audit record.
const refreshActor = "procgraph catalogue refresh"

// refreshNote is a refresh's audit note: the server and the names that
// changed, within fields.MaxNoteBytes.
func refreshNote(r Refreshed) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %s:", r.Server)
	for _, part := range []struct {
		what  string
		names []string
	}{{"added", r.Added}, {"changed", r.Changed}, {"removed", r.Removed}} {
		if len(part.names) > 0 {
			fmt.Fprintf(&b, " %s %d (%s);", part.what, len(part.names), strings.Join(part.names, ", "))
		}
	}
	// The ellipsis Bounded marks a cut with is 3 bytes.
	return text.Bounded(strings.TrimSuffix(b.String(), ";"), fields.MaxNoteBytes-len("…"))
}
