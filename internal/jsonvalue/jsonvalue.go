// Package jsonvalue is the one home of JSON values as procgraph carries
// them in Go: decoding with exact integers, normalising Go values to the
// JSON-safe set (nil, bool, int64, float64, string, []any, map[string]any),
// and turning json.Number into int64 or float64.
//
// A number is a float iff its text has a fraction or an exponent; an
// integer that does not fit in int64 becomes a float64, as in JavaScript.
// Nesting deeper than MaxDepth is an error (it also stops cycles).
//
// go.starlark.net/lib/json decodes JSON text into Starlark values; the
// sandbox keeps its own conversion from these Go values instead, because
// it orders dict keys (a replay iterates them deterministically) and bounds
// depth, which lib/json does not.
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of values.
const MaxDepth = 100

// Decode decodes exactly one JSON value with exact integers (see the
// package comment). Anything after the value but white space is an error.
func Decode(data []byte) (any, error) {
	x, err := DecodeNumbers(data)
	if err != nil {
		return nil, err
	}
	return Plain(x)
}

// DecodeNumbers decodes exactly one JSON value, numbers as json.Number
// (their text, kept exactly). Anything after the value but white space is
// an error.
func DecodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	// More would miss a stray closing bracket ("0 ]"): only the end may follow.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after a JSON value")
	}
	return x, nil
}

// Numbers returns x as JSON carries it: encoded, then decoded with
// DecodeNumbers (a deep copy, numbers as json.Number).
func Numbers(x any) (any, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return DecodeNumbers(b)
}

// Clone returns a deep copy of m as encoding/json decodes it (numbers
// float64): the shape JSON-like maps have after a store round trip.
func Clone(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Plain replaces every json.Number in x by an int64 or a float64 (see
// ParseNumber), in place, and returns x.
func Plain(x any) (any, error) {
	switch x := x.(type) {
	case json.Number:
		return ParseNumber(string(x))
	case []any:
		for i, e := range x {
			v, err := Plain(e)
			if err != nil {
				return nil, err
			}
			x[i] = v
		}
	case map[string]any:
		for k, e := range x {
			if _, ok := e.(json.Number); ok || isContainer(e) {
				v, err := Plain(e)
				if err != nil {
					return nil, err
				}
				x[k] = v
			}
		}
	}
	return x, nil
}

func isContainer(x any) bool {
	switch x.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// ParseNumber parses the text of a JSON number: an int64 when it has no
// fraction or exponent and fits, else a float64.
func ParseNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("bad number %q", s)
	}
	return f, nil
}

// Normalize returns x as a JSON-safe value. Values that already are
// JSON-safe are returned as they are; common Go types (other ints and
// floats, string slices and maps, json.Number, json.RawMessage) are
// converted directly; anything else goes through encoding/json.
func Normalize(x any) (any, error) {
	if safe(x, 0) {
		return x, nil
	}
	return normalize(x, 0)
}

// safe reports whether x is made of JSON-safe types only.
func safe(x any, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch x := x.(type) {
	case nil, bool, int64, string:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if !safe(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !safe(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

func normalize(x any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", MaxDepth)
	}
	switch x := x.(type) {
	case nil, bool, int64, string:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("float %v is not valid JSON", x)
		}
		return x, nil
	case float32:
		return normalize(float64(x), depth)
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case json.Number:
		return ParseNumber(string(x))
	case json.RawMessage:
		return Decode(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			v, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	data, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("a Go %T is not a JSON value: %v", x, err)
	}
	return Decode(data)
}

// List is s, an empty list when s is nil: a list procgraph answers or
// stores is [] in JSON, never null.
func List[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Strings is ss as a JSON array value ([]any of strings), as a schema's
// "required" or "type" holds one.
func Strings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
