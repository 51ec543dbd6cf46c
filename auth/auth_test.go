package auth

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/fault"
)

func mustAuthenticator(tb testing.TB, entries ...TokenEntry) *Authenticator {
	tb.Helper()
	f := &TokensFile{Tokens: entries}
	if err := f.Validate(); err != nil {
		tb.Fatal(err)
	}
	return NewAuthenticator(f)
}

func TestAuthenticate(t *testing.T) {
	a := mustAuthenticator(t,
		TokenEntry{Name: "alice", SHA256: HashToken("tok-alice"), Scopes: []string{"read", "grant"}},
		TokenEntry{Name: "bob", SHA256: HashToken("tok-bob"), Scopes: []string{"admin"}},
		TokenEntry{Name: "carol", SHA256: HashToken("tok-carol"), Scopes: []string{"invoke"}},
	)
	cases := []struct {
		name   string
		header []string // nil: no header
		want   string   // holder, or "" for unauthorized
	}{
		{"first entry", []string{"Bearer tok-alice"}, "alice"},
		{"middle entry", []string{"Bearer tok-bob"}, "bob"},
		{"last entry", []string{"Bearer tok-carol"}, "carol"},
		{"lower-case scheme", []string{"bearer tok-alice"}, "alice"},
		{"upper-case scheme", []string{"BEARER tok-alice"}, "alice"},
		{"surrounding spaces in the token", []string{"Bearer  tok-alice "}, "alice"},
		{"no header", nil, ""},
		{"empty header", []string{""}, ""},
		{"scheme only", []string{"Bearer"}, ""},
		{"scheme and a space", []string{"Bearer "}, ""},
		{"basic scheme", []string{"Basic tok-alice"}, ""},
		{"no scheme", []string{"tok-alice"}, ""},
		{"wrong token", []string{"Bearer tok-dave"}, ""},
		{"the hash as the token", []string{"Bearer " + HashToken("tok-alice")}, ""},
		{"a prefix of a token", []string{"Bearer tok-ali"}, ""},
		{"a token with a suffix", []string{"Bearer tok-alicex"}, ""},
		{"two tokens", []string{"Bearer tok-alice tok-bob"}, ""},
		{"second header ignored", []string{"Bearer wrong", "Bearer tok-alice"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/v1/tools", nil)
			for _, h := range tc.header {
				r.Header.Add("Authorization", h)
			}
			p, err := a.Authenticate(r)
			if tc.want == "" {
				if fault.ErrorCode(err) != fault.CodeUnauthorized || p.Name != "" {
					t.Fatalf("Authenticate = %+v, %v; want unauthorized", p, err)
				}
				return
			}
			if err != nil || p.Name != tc.want {
				t.Fatalf("Authenticate = %+v, %v; want %s", p, err, tc.want)
			}
		})
	}
	t.Run("scopes", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer tok-alice")
		p, _ := a.Authenticate(r)
		for _, sc := range AllScopes {
			if p.Has(sc) != (sc == ScopeRead || sc == ScopeGrant) {
				t.Errorf("alice Has(%s) = %v", sc, p.Has(sc))
			}
		}
	})
	t.Run("no tokens: anonymous with every scope", func(t *testing.T) {
		for _, a := range []*Authenticator{NewAuthenticator(nil), NewAuthenticator(&TokensFile{})} {
			if a.Enabled() {
				t.Fatal("enabled without tokens")
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer anything")
			p, err := a.Authenticate(r)
			if err != nil || p.Name != "anonymous" {
				t.Fatalf("%+v %v", p, err)
			}
			for _, sc := range AllScopes {
				if !p.Has(sc) {
					t.Fatalf("anonymous lacks %s", sc)
				}
			}
		}
	})
	t.Run("every entry is compared", func(t *testing.T) {
		// The comparison is of fixed-length sha256 sums with
		// subtle.ConstantTimeCompare, over every entry without an early
		// return: the time does not depend on which entry (or none) matches.
		// Here: a thousand entries, the match found at either end.
		var entries []TokenEntry
		for i := range 1000 {
			entries = append(entries, TokenEntry{Name: "h" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + itoa(i), SHA256: HashToken("t" + itoa(i)), Scopes: []string{"read"}})
		}
		big := mustAuthenticator(t, entries...)
		for _, i := range []int{0, 999} {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer t"+itoa(i))
			if p, err := big.Authenticate(r); err != nil || p.Name != entries[i].Name {
				t.Fatalf("entry %d: %+v %v", i, p, err)
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestTokensFileValidate(t *testing.T) {
	h := HashToken("x")
	cases := []struct {
		name    string
		entries []TokenEntry
		want    string // "" valid, else a part of the error
	}{
		{"valid", []TokenEntry{{Name: "a.b@c-d_e", SHA256: h, Scopes: []string{"read", "admin"}}}, ""},
		{"empty file", nil, ""},
		{"empty name", []TokenEntry{{Name: "", SHA256: h, Scopes: []string{"read"}}}, "name"},
		{"name with a space", []TokenEntry{{Name: "a b", SHA256: h, Scopes: []string{"read"}}}, "name"},
		{"name too long", []TokenEntry{{Name: strings.Repeat("a", 65), SHA256: h, Scopes: []string{"read"}}}, "name"},
		{"upper-case hash", []TokenEntry{{Name: "a", SHA256: strings.ToUpper(h), Scopes: []string{"read"}}}, "sha256"},
		{"short hash", []TokenEntry{{Name: "a", SHA256: h[:63], Scopes: []string{"read"}}}, "sha256"},
		{"no scopes", []TokenEntry{{Name: "a", SHA256: h}}, "scopes"},
		{"unknown scope", []TokenEntry{{Name: "a", SHA256: h, Scopes: []string{"root"}}}, "root"},
		{"duplicate holder", []TokenEntry{{Name: "a", SHA256: h, Scopes: []string{"read"}}, {Name: "a", SHA256: HashToken("y"), Scopes: []string{"read"}}}, "twice"},
		{"duplicate hash", []TokenEntry{{Name: "a", SHA256: h, Scopes: []string{"read"}}, {Name: "b", SHA256: h, Scopes: []string{"read"}}}, "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (&TokensFile{Tokens: tc.entries}).Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ParseScope("Read"); err == nil {
		t.Fatal("scopes are case-sensitive")
	}
}

// TestLoadTokensFile: a server's tokens file must yield at least one token;
// an empty, missing or malformed one is refused, never read as "no auth".
func TestLoadTokensFile(t *testing.T) {
	one := `{"tokens": [{"name": "alice", "sha256": "` + HashToken("t") + `", "scopes": ["read"]}]}`
	cases := []struct {
		name, content, want string // content "-": no file
	}{
		{"one token", one, ""},
		{"empty list", `{"tokens": []}`, "lists no token"},
		{"no tokens key", `{}`, "lists no token"},
		{"null tokens", `{"tokens": null}`, "lists no token"},
		{"missing file", "-", "no such file"},
		{"empty file", "", "not a tokens file"},
		{"malformed", `{"tokens": [`, "not a tokens file"},
		{"unknown field", `{"tokens": [], "extra": 1}`, "not a tokens file"},
		{"trailing data", one + ` {}`, "not a tokens file"},
		{"bad entry", `{"tokens": [{"name": "a", "sha256": "x", "scopes": ["read"]}]}`, "sha256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.json")
			if tc.content != "-" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a, err := LoadTokensFile(path)
			if tc.want == "" {
				if err != nil || !a.Enabled() {
					t.Fatalf("LoadTokensFile = %v, %v; want auth enabled", a, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadTokensFile error = %v, want %q", err, tc.want)
			}
			if a != nil {
				t.Fatal("an authenticator came with the error")
			}
		})
	}
}

// FuzzParseTokensFile: any bytes are refused with an error or give a file
// that validates, whose holders are unique, and that survives a JSON round
// trip unchanged. Seeded from testdata/tokens.
func FuzzParseTokensFile(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "tokens", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := ParseTokensFile(data)
		if err != nil {
			if tf != nil {
				t.Fatal("a file came with the error")
			}
			return
		}
		if err := tf.Validate(); err != nil {
			t.Fatalf("accepted a file that does not validate: %v", err)
		}
		again, err := json.Marshal(tf)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseTokensFile(again)
		if err != nil || !reflect.DeepEqual(normal(back), normal(tf)) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, tf, back)
		}
		a := NewAuthenticator(tf)
		if a.Enabled() != (len(tf.Tokens) > 0) {
			t.Fatal("auth enabled disagrees with the token count")
		}
	})
}

// normal makes nil and empty token lists equal.
func normal(f *TokensFile) []TokenEntry {
	if len(f.Tokens) == 0 {
		return nil
	}
	return f.Tokens
}

// TestParseTokensFileSeeds: what each seed must give.
func TestParseTokensFileSeeds(t *testing.T) {
	want := map[string]string{ // file -> error substring, "" for accepted
		"valid.json": "", "empty-list.json": "", "no-key.json": "",
		"trailing-bracket.json": "data after", "duplicate-key.json": "tokens: the key appears twice", "unknown-scope.json": "root",
		"nul-name.json": "name", "bom.json": "not a tokens file", "extra-field.json": "unknown field",
	}
	for name, sub := range want {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "tokens", name))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseTokensFile(data)
			if sub == "" && err != nil || sub != "" && (err == nil || !strings.Contains(err.Error(), sub)) {
				t.Fatalf("ParseTokensFile = %v, want %q", err, sub)
			}
		})
	}
}
