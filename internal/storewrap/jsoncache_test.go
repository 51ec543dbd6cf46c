package storewrap

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSONCacheBounds: the cache stays within its bound, never keeps a
// text too large for it or one that failed, and always answers the text's
// own value.
func TestJSONCacheBounds(t *testing.T) {
	c := NewJSONCache[map[string]any](64 * 40)
	for i := range 500 {
		text := `{"n":` + strings.Repeat(" ", i%7) + string(rune('0'+i%10)) + `,"i":"` + strings.Repeat("x", i%30) + `"}`
		v, err := c.Decode(text)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%s: got %v", text, v)
		}
		if n := c.m.Cost(); n > c.maxBytes {
			t.Fatalf("cache holds %d bytes, bound %d", n, c.maxBytes)
		}
	}
	big := `{"x":"` + strings.Repeat("y", 64) + `"}`
	if _, err := c.Decode(big); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.m.Get(big); ok {
		t.Fatal("a text above maxBytes/64 was kept")
	}
	if _, err := c.Decode("{"); err == nil {
		t.Fatal("want an error")
	}
	if _, ok := c.m.Get("{"); ok {
		t.Fatal("a text that failed was kept")
	}
}
