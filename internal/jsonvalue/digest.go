package jsonvalue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Canonical is x's canonical JSON: x made JSON-safe (Normalize: a
// json.Number becomes the int64 or float64 its text is) and encoded, so
// keys are sorted, there is no white space and a number is written one
// way whatever Go type or text carried it (1, 1.0, json.Number("1.0") and
// int64(1) are all 1) — what encoding x, decoding it with Decode and
// encoding it again gives. Two values with one canonical JSON are one
// JSON value.
func Canonical(x any) ([]byte, error) {
	v, err := Normalize(x)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
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
