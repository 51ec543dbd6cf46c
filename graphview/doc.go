// Package graphview holds the procedure graph's view as a caller sees
// it: the GraphQuery asking for a neighbourhood, the Graph answered (its
// GraphNodes and GraphEdges, truncation and totals), the node classes,
// and the EdgeCounter a store may be. It is a leaf below procedures,
// whose Service.Graph builds the view from the store.
package graphview
