package graphview

import (
	"context"
)

// MaxGraphDepth bounds a graph query's depth.
const MaxGraphDepth = 3

// GraphQuery asks for the neighbourhood of some start nodes. With no start,
// it starts from the most frequent procedures.
type GraphQuery struct {
	Procedures []string
	Causes     []string
	Tools      []string
	Depth      int // 1 when zero
	// Limit and Offset page the most frequent procedures a query with no
	// start begins from (Limit 0: fields.DefaultFindLimit); a query with a start
	// ignores them.
	Limit, Offset int
}

// GraphNode is a procedure, cause or tool.
type GraphNode struct {
	ID         string         `json:"id"`
	Kind       string         `json:"kind"`
	Label      string         `json:"label"`
	Properties map[string]any `json:"properties"`
}

// GraphEdge is INVESTIGATED_BY (cause to procedure, with its frequency) or
// CALLS (procedure to tool).
type GraphEdge struct {
	Source    string `json:"source"`
	Target    string `json:"target"`
	Kind      string `json:"kind"`
	Frequency int64  `json:"frequency"`
}

// Graph is a neighbourhood of the procedure graph. Truncated is set when
// it is not the whole graph its query asked for: the service's node bound
// cut it short, or (no start) procedures beyond the page were left out.
// TotalProcedures is how many procedures the store holds; Offset and
// NextOffset (no start) are the page of the most frequent procedures it
// began from and the offset of the next one (nil: none left).
type Graph struct {
	Nodes           []GraphNode `json:"nodes"`
	Edges           []GraphEdge `json:"edges"`
	Truncated       bool        `json:"truncated"`
	TotalProcedures int         `json:"total_procedures"`
	// TotalEdges is how many edges the store holds (CALLS and
	// INVESTIGATED_BY), nil when the store cannot say (not an EdgeCounter).
	TotalEdges *int `json:"total_edges"`
	NextOffset *int `json:"next_offset"`
}

// EdgeCounter is a procedures.Store that counts the graph's edges: each procedure's
// CALLS (one a signature entry) and INVESTIGATED_BY (one a cause it is
// linked to). Both stores are.
type EdgeCounter interface {
	// CountEdges returns how many edges of each kind the store holds.
	CountEdges(ctx context.Context) (calls, investigatedBy int, err error)
}

// Node classes (the "class" property of procedure and tool nodes): what an
// analyst colours the graph by.
const (
	ClassReadOnly      = "read_only"
	ClassStateChanging = "state_changing"
	ClassUnknown       = "unknown"
)
