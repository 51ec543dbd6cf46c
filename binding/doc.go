// Package binding holds what an authorization binds to, a leaf below
// procedures (docs/design.md "What an authorization binds to"): the
// Binding an operator or granter reviewed (the program, its
// classification, its tools' contracts, the nested procedures it calls),
// the one rule of whether it still applies (Binding.Check, with the
// reasons an authorization is inactive; Binding.CheckNested for a nested
// call), its name in decision records (Binding.Hash) and what a review
// shows of each procedure it reaches (Reached). The domain builds
// bindings (procedures' bindingOf); gate, replay, dump and the stores
// carry and check them.
package binding
