// Package strictjson rejects what encoding/json accepts silently but a
// strict reader must not: duplicate keys (two readers may each pick another
// value) and escaped lone UTF-16 surrogates (decoded as U+FFFD). Request
// bodies (api) and the tokens file (auth) are checked with it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
)

// Check checks data, which must hold one valid JSON value (decode it
// first). Errors have code invalid_request; a repeated key is named by its
// path (a.b.0.c) in the message and in details.field.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkKeys(dec, ""); err != nil {
		return err
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		i++ // data[i] is the escaped character; the JSON is valid, so it exists
		if data[i] != 'u' {
			continue
		}
		r := hex4(data[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
				if lo := hex4(data[i+3 : i+7]); lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return fault.Errorf(fault.CodeInvalid, "the JSON holds an unpaired UTF-16 surrogate escape")
		case r >= 0xDC00 && r <= 0xDFFF:
			return fault.Errorf(fault.CodeInvalid, "the JSON holds an unpaired UTF-16 surrogate escape")
		}
	}
	return nil
}

func hex4(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// checkKeys walks one value and rejects an object with a repeated key,
// naming it.
func checkKeys(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return invalid(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return invalid(err)
			}
			k, _ := kt.(string)
			field := join(path, k)
			if seen[k] {
				return fault.Errorf(fault.CodeInvalid, "%s: the key appears twice", field).WithDetails("field", field)
			}
			seen[k] = true
			if err := checkKeys(dec, field); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := checkKeys(dec, join(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return invalid(err)
	}
	return nil
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func invalid(err error) error {
	return fault.Errorf(fault.CodeInvalid, "not valid JSON: %v", err)
}

// Locate adds where in data a decoding error of encoding/json happened,
// as "line L, column C: " before its message, for a person to find it in
// a file (the catalogue, the tokens file): a syntax error at the byte that
// broke it, a value of the wrong type just after that value. Errors that
// carry no offset (an unknown field) are returned unchanged.
func Locate(data []byte, err error) error {
	var offset int64
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset - 1 // the byte that broke the syntax
	case errors.As(err, &typ):
		offset = typ.Offset
	default:
		return err
	}
	line, col := LineColumn(data, offset)
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// LineColumn is the 1-based line and column (in characters) of the byte
// at offset in data; an offset past the end is the end.
func LineColumn(data []byte, offset int64) (line, column int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}
