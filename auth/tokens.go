package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/strictjson"
)

// TokenEntry is one token in the tokens file: its holder, the sha256 hex of
// the token, and its scopes. The token itself is never stored.
type TokenEntry struct {
	Name   string   `json:"name"`
	SHA256 string   `json:"sha256"`
	Scopes []string `json:"scopes"`
}

// TokensFile is the tokens file's shape.
type TokensFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

var (
	holderPattern = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)
	hashPattern   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate checks every entry: a holder name, a 64-hex hash, known scopes,
// no duplicate holder or hash. An empty list is valid here (`token create`
// starts from one); a server refuses it (see LoadTokensFile).
func (f *TokensFile) Validate() error {
	names, hashes := map[string]bool{}, map[string]bool{}
	for i, t := range f.Tokens {
		if !holderPattern.MatchString(t.Name) {
			return fmt.Errorf("tokens[%d].name %q must be 1-64 of [A-Za-z0-9_.@-]", i, t.Name)
		}
		if !hashPattern.MatchString(t.SHA256) {
			return fmt.Errorf("tokens[%d] (%s): sha256 must be 64 lower-case hex digits", i, t.Name)
		}
		if len(t.Scopes) == 0 {
			return fmt.Errorf("tokens[%d] (%s): scopes must not be empty", i, t.Name)
		}
		for _, s := range t.Scopes {
			if _, err := ParseScope(s); err != nil {
				return fmt.Errorf("tokens[%d] (%s): %v", i, t.Name, err)
			}
		}
		if names[t.Name] {
			return fmt.Errorf("tokens[%d]: holder %q appears twice", i, t.Name)
		}
		if hashes[t.SHA256] {
			return fmt.Errorf("tokens[%d] (%s): the same token hash appears twice", i, t.Name)
		}
		names[t.Name], hashes[t.SHA256] = true, true
	}
	return nil
}

// ReadTokensFile reads and validates a tokens file, which may list no token
// (as `token create` needs it); a server loads one with LoadTokensFile.
func ReadTokensFile(path string) (*TokensFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseTokensFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return f, nil
}

// ParseTokensFile decodes and validates a tokens file's bytes: one JSON
// object, no unknown field, no repeated key, nothing after it.
func ParseTokensFile(data []byte) (*TokensFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f TokensFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a tokens file: %v", strictjson.Locate(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a tokens file: data after the JSON object")
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("not a tokens file: %s", fault.ErrorMessage(err))
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// LoadTokensFile returns the Authenticator of a server's tokens file. A
// tokens file that is given must yield at least one token: an empty one
// would otherwise turn auth off, so it is refused (fail closed).
func LoadTokensFile(path string) (*Authenticator, error) {
	f, err := ReadTokensFile(path)
	if err != nil {
		return nil, err
	}
	if len(f.Tokens) == 0 {
		return nil, fmt.Errorf("%s lists no token: a tokens file must hold at least one (create one with `procgraph token create`), or serve with `--auth off` on loopback", path)
	}
	return NewAuthenticator(f), nil
}

// HashToken returns the sha256 hex of a token, as the tokens file keeps it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a fresh bearer token: "pgt_" and 32 random bytes,
// base64url.
func NewToken() (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	return "pgt_" + base64.RawURLEncoding.EncodeToString(raw[:]), nil
}
