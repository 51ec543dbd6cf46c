// Package reuse holds reuse before regenerate's advice, a leaf below
// procedures: the Suggestion of an exposed procedure to call instead of
// sending a block's code again, and its reasons (SuggestSameSignature,
// SuggestCoveredBy). It is advice only: nothing decided changes.
// procedures.Service.Suggest and a capture's answer give one.
package reuse
