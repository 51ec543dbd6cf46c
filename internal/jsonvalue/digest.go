package jsonvalue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"slices"
)

// Canonical is x's canonical JSON: x made JSON-safe (Normalize: a
// json.Number becomes the int64 or float64 its text is) and encoded, so
// keys are sorted, there is no white space and a number is written one
// way whatever Go type or text carried it (1, 1.0, json.Number("1.0") and
// int64(1) are all 1) — what encoding x, decoding it with Decode and
// encoding it again gives. Two values with one canonical JSON are one
// JSON value. Negative zero is written 0, as Decode reads "-0".
func Canonical(x any) ([]byte, error) {
	v, err := Normalize(x)
	if err != nil {
		return nil, err
	}
	v, _ = zeroed(v)
	return json.Marshal(v)
}

// zeroed is the JSON-safe x with every negative zero made 0 (a copy of
// the containers holding one), and whether there was one.
func zeroed(x any) (any, bool) {
	switch x := x.(type) {
	case float64:
		if x == 0 && math.Signbit(x) {
			return float64(0), true
		}
	case []any:
		var out []any
		for i, e := range x {
			if z, ok := zeroed(e); ok {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = z
			}
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if z, ok := zeroed(e); ok {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = z
			}
		}
		if out != nil {
			return out, true
		}
	}
	return x, false
}

// Digest is the digest of x's canonical JSON (Canonical): "sha256:" and 64
// hex. It is the one digest of a value procgraph binds an approval to (a
// call's arguments) and names in place of the value in logs and audit
// records.
func Digest(x any) (string, error) {
	b, err := Canonical(x)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
