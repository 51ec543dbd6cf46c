package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// normalize returns x as a JSON-safe value: nil, bool, int64, float64,
// string, []any or map[string]any. Values that already are JSON-safe are
// returned as they are; common Go types (other ints and floats, string slices
// and maps, json.Number, json.RawMessage) are converted directly; anything
// else goes through encoding/json. Integers that do not fit in int64 become
// float64, as in JavaScript.
func normalize(x any) (any, error) {
	if jsonSafe(x, 0) {
		return x, nil
	}
	return normalizeDepth(x, 0)
}

// jsonSafe reports whether x is made of JSON-safe types only.
func jsonSafe(x any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := x.(type) {
	case nil, bool, int64, string:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if !jsonSafe(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonSafe(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

func normalizeDepth(x any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", maxDepth)
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
		return normalizeDepth(float64(x), depth)
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case json.Number:
		return parseNumber(string(x))
	case json.RawMessage:
		return decodeJSON(x)
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
			v, err := normalizeDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			v, err := normalizeDepth(e, depth+1)
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
	return decodeJSON(data)
}

// decodeJSON decodes one JSON value, keeping integers (int64) apart from
// floats (float64): a number is a float iff it has a fraction or an exponent.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	// More would miss a stray closing bracket ("0 ]"): only the end may follow.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after a JSON value")
	}
	return numbers(x)
}

// numbers replaces the json.Numbers in x, in place.
func numbers(x any) (any, error) {
	switch x := x.(type) {
	case json.Number:
		return parseNumber(string(x))
	case []any:
		for i, e := range x {
			v, err := numbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = v
		}
	case map[string]any:
		for k, e := range x {
			if _, ok := e.(json.Number); ok || isContainer(e) {
				v, err := numbers(e)
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

func parseNumber(s string) (any, error) {
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

// appendJSON appends the JSON encoding of the JSON-safe value x to buf. A
// float is always written with a fraction or an exponent ("2.0", not "2"), so
// decodeJSON gives back a float64; objects have sorted keys.
func appendJSON(buf []byte, x any) ([]byte, error) {
	return appendJSONDepth(buf, x, 0)
}

func appendJSONDepth(buf []byte, x any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", maxDepth)
	}
	switch x := x.(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("float %v is not valid JSON", x)
		}
		start := len(buf)
		buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		if !bytes.ContainsAny(buf[start:], ".e") {
			buf = append(buf, ".0"...)
		}
		return buf, nil
	case string:
		return appendString(buf, x), nil
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendJSONDepth(buf, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case map[string]any:
		buf = append(buf, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, k)
			buf = append(buf, ':')
			var err error
			if buf, err = appendJSONDepth(buf, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	}
	return nil, fmt.Errorf("a Go %T is not a JSON value", x)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
