package mcpserve

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/changes"
)

// RefreshSpacing is the least time between two of Run's refreshes: the
// changes of a burst of writes coalesce into one refresh (reading up to
// Config.ToolLimit procedures), while a request that finds changes
// waiting still refreshes before it is answered (see syncTools).
const RefreshSpacing = 500 * time.Millisecond

// Exposed is the exposed procedures as proc__ tools, read at most once
// per change of the service's feed and shared by the Handlers given it
// (/mcp and /mcp/interactive offer the same tools: the phase changes what
// runs, not what is listed). Each read builds the tools once for all of
// them and keeps the previous read's *mcp.Tool where nothing a client
// sees changed, so a handler tells an unchanged tool by its pointer. It
// is safe for concurrent use.
type Exposed struct {
	mu   sync.Mutex
	last *exposedRead // nil before the first read
	// reads counts the reads of the store (tests).
	reads atomic.Int64
}

// exposedRead is one read of the exposed procedures.
type exposedRead struct {
	seq   uint64 // the feed's Seq before the read began: it holds every change up to seq
	limit int
	tools []*mcp.Tool // in find order
	// invalid names the procedures whose input schema is not an object
	// schema (the SDK requires one): not offered.
	invalid []string
	byName  map[string]*mcp.Tool
}

// NewExposed returns an Exposed that has read nothing yet.
func NewExposed() *Exposed { return &Exposed{} }

// list returns the exposed procedures' tools (Replayer.Tools up to limit)
// as read after every change the feed had published when list was
// called: the last read when it began after them (and had the same
// limit), a new read otherwise, or always when force is set. A failed
// read keeps the last one.
func (e *Exposed) list(ctx context.Context, rp Replayer, feed *changes.Feed, limit int, force bool) (*exposedRead, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	seq := feed.Seq()
	if !force && e.last != nil && e.last.limit == limit && e.last.seq >= seq {
		return e.last, nil
	}
	descs, err := rp.Tools(ctx, nil, limit)
	e.reads.Add(1)
	if err != nil {
		return nil, err
	}
	r := &exposedRead{seq: seq, limit: limit, tools: make([]*mcp.Tool, 0, len(descs)), byName: make(map[string]*mcp.Tool, len(descs))}
	for _, d := range descs {
		t, ok := procTool(d)
		if !ok {
			r.invalid = append(r.invalid, d.Name)
			continue
		}
		if e.last != nil {
			if old := e.last.byName[t.Name]; old != nil && sameTool(old, t) {
				t = old
			}
		}
		r.tools = append(r.tools, t)
		r.byName[t.Name] = t
	}
	e.last = r
	return r, nil
}

// Refresh recomputes the exposed procedures (Replayer.Tools, up to
// Config.ToolLimit: always read anew) and brings the proc__ tools in
// line: new or changed tools are added, vanished ones removed; the SDK
// then notifies connected clients (notifications/tools/list_changed,
// debounced). It reports whether anything changed. A failure changes
// nothing.
func (h *Handler) Refresh(ctx context.Context) (bool, error) {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	if sub := h.subscribeLocked(); sub != nil {
		sub.Take()
	}
	return h.refreshLocked(ctx, true)
}

// syncTools refreshes when changes that may change the tools are waiting
// on the feed (or nothing was loaded yet), so a client whose write was answered sees it in its next
// MCP request: the service publishes before the write answers. A refresh
// under way (Run's) is waited for. The list is read once per change for
// every handler sharing Config.Exposed. Cheap otherwise. A closed handler
// refreshes no more.
func (h *Handler) syncTools(ctx context.Context) error {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	sub := h.subscribeLocked()
	if h.refreshed.Load() && (sub == nil || !changesTools(sub.Take())) {
		return nil
	}
	_, err := h.refreshLocked(ctx, false)
	return err
}

// changesTools reports whether any of cs may change the proc__ tools:
// every kind but ChangeApproval (a turn's wait for an operator, which no
// tool shows).
func changesTools(cs []changes.Change) bool {
	return slices.ContainsFunc(cs, func(c changes.Change) bool { return c.Kind != changes.ChangeApproval })
}

// refreshLocked is Refresh with refreshMu held; force reads the list
// even when the shared read is current.
func (h *Handler) refreshLocked(ctx context.Context, force bool) (bool, error) {
	h.lastRefresh = time.Now()
	read, err := h.cfg.Exposed.list(ctx, h.cfg.Replayer, h.cfg.Service.Changes(), h.cfg.ToolLimit, force)
	if err != nil {
		return false, err
	}
	for _, name := range read.invalid {
		h.log.Error().Str("procedure", name).Msg("mcp: the procedure's input schema is not an object schema; not offered")
	}
	next := make(map[string]*mcp.Tool, len(read.tools))
	var add []*mcp.Tool
	for _, t := range read.tools {
		// The shared read keeps an unchanged tool's pointer; a handler
		// that missed a read compares.
		if old, ok := h.current[t.Name]; ok && (old == t || sameTool(old, t)) {
			next[t.Name] = old
			continue
		}
		next[t.Name] = t
		add = append(add, t)
	}
	var remove []string
	for name := range h.current {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	sort.Strings(remove)
	if len(remove) > 0 {
		h.server.RemoveTools(remove...)
	}
	for _, t := range add {
		h.server.AddTool(t, h.invoke(t.Name))
	}
	h.current = next
	h.refreshed.Store(true)
	changed := len(add) > 0 || len(remove) > 0
	if changed {
		h.log.Info().Str("phase", string(h.cfg.Phase)).Int("tools", len(next)).Int("added_or_changed", len(add)).
			Int("removed", len(remove)).Msg("mcp: proc__ tools changed")
	}
	return changed, nil
}

// sameTool reports whether a client sees a and b alike: every field of
// mcp.Tool compared (TestSameToolIsDeepEqual fails when the SDK adds one
// this does not compare), the cheap ones first. The frequency is not in a
// tool, so a counted use changes nothing here.
func sameTool(a, b *mcp.Tool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		reflect.DeepEqual(a.Annotations, b.Annotations) && reflect.DeepEqual(a.Icons, b.Icons) &&
		sameMap(a.Meta, b.Meta) && sameValue(a.InputSchema, b.InputSchema) && sameValue(a.OutputSchema, b.OutputSchema)
}

// sameValue is reflect.DeepEqual(a, b), without reflection for what a
// tool's schemas and _meta hold (JSON values, []string, int64, *float64;
// TestSameValueIsDeepEqual): anything else goes to reflect.DeepEqual.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case *float64:
		y, ok := b.(*float64)
		return ok && (x == y || x != nil && y != nil && *x == *y)
	case []string:
		y, ok := b.([]string)
		return ok && (x == nil) == (y == nil) && slices.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && sameMap(x, y)
	default:
		return reflect.DeepEqual(a, b)
	}
}

// sameMap is reflect.DeepEqual(a, b) for two maps of values (sameValue).
func sameMap(a, b map[string]any) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// Run refreshes the proc__ tools at once, then after changes on the
// service's change feed (Service.Changes: captures, catalogue puts,
// grants, revokes, promotes, retirements here, and what
// Service.WatchRemote notices of other instances), until ctx ends, the
// feed closes or the handler is closed; then it closes the handler, which
// leaves the feed. Refreshes are at least RefreshSpacing apart: the
// changes that arrive meanwhile coalesce into the next one (a request
// that finds them waiting refreshes first, see syncTools). Failures are
// logged. The first refresh follows the subscription, so no change is
// missed. While it runs, the drain (Config.Draining) closes the sessions
// (drainSessions).
func (h *Handler) Run(ctx context.Context) {
	defer h.Close()
	go h.drainSessions(ctx)
	h.refreshMu.Lock()
	sub := h.subscribeLocked()
	h.refreshMu.Unlock()
	if sub == nil {
		return
	}
	for {
		if err := h.syncTools(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn().Err(err).Str("phase", string(h.cfg.Phase)).Msg("mcp: refreshing the proc__ tools failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case <-sub.Ready():
		}
		if !h.spaced(ctx, sub) {
			return
		}
	}
}

// spaced waits until RefreshSpacing (h.spacing) has passed since the last
// refresh; false when ctx ends or the subscription closes first.
func (h *Handler) spaced(ctx context.Context, sub *changes.Subscription) bool {
	h.refreshMu.Lock()
	wait := h.spacing - time.Since(h.lastRefresh)
	h.refreshMu.Unlock()
	if wait <= 0 {
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-sub.Done():
		return false
	case <-h.after(wait):
		return true
	}
}
