package jsonvalue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Canonical is x's canonical JSON: encoded, decoded with exact integers
// (Decode) and encoded again, so keys are sorted, there is no white space
// and a number is written one way whatever Go type or text carried it (1,
// 1.0 and int64(1) are all 1). Two values with one canonical JSON are one
// JSON value.
func Canonical(x any) ([]byte, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	v, err := Decode(b)
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
