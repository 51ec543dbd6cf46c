// Package recording holds what a version's recordings are: a Recording of
// a successful run (its arguments, the tool calls and their responses,
// the result's hash), its body's encoding and checks (NewRecording,
// RecordingFromBody, RecordingID), the bounds of what a store keeps, and
// the outcome of a verification against them (Verification). It is a leaf
// below procedures, whose Service and stores keep and list recordings.
package recording
