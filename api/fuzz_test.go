package api

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/strictjson"
)

// FuzzDecodeBody feeds arbitrary bytes to the request body decoder against
// every request schema: it never panics, and it either decodes or returns a
// *fault.Error with code invalid_request or payload_too_large. A body
// it accepts is valid UTF-8 JSON with no duplicate keys. Seeded from the
// golden corpus in testdata/bodies.
func FuzzDecodeBody(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "bodies", "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden corpus: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	s, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	names := make([]string, 0, len(requestBodies))
	for n := range requestBodies {
		names = append(names, n)
	}
	sort.Strings(names)
	const limit = 4096
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, schema := range names {
			var dst map[string]any
			err := s.decodeBody(bytes.NewReader(body), schema, limit, &dst)
			if err == nil {
				if len(body) > limit {
					t.Fatalf("%s: accepted %d bytes over the limit", schema, len(body))
				}
				if strictjson.Check(body) != nil {
					t.Fatalf("%s: accepted a body strictjson.Check rejects: %q", schema, body)
				}
				continue
			}
			var pe *fault.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s: %T %v is not a *fault.Error", schema, err, err)
			}
			switch pe.Code {
			case fault.CodeInvalid:
			case fault.CodeTooLarge:
				if len(body) <= limit {
					t.Fatalf("%s: payload_too_large for %d bytes", schema, len(body))
				}
			default:
				t.Fatalf("%s: code %s: %v", schema, pe.Code, err)
			}
			if pe.Message == "" || strings.Contains(pe.Message, "%!") {
				t.Fatalf("%s: bad message %q", schema, pe.Message)
			}
		}
	})
}

// TestGoldenBodies checks what the golden corpus decodes to: files named
// Schema.*.json that are expected to decode do, the others are rejected.
func TestGoldenBodies(t *testing.T) {
	s := mustServer(t)
	valid := map[string]bool{"CaptureRequest.full.json": true, "CaptureRequest.min.json": true, "InvokeRequest.full.json": true,
		"InvokeRequest.nested.json": true, "AutoRunPut.json": true, "ReasonBody.json": true, "ToolsPut.json": true,
		"TurnRequest.full.json": true, "ResolveRequest.full.json": true}
	files, _ := filepath.Glob(filepath.Join("testdata", "bodies", "*"))
	for _, file := range files {
		base := filepath.Base(file)
		t.Run(base, func(t *testing.T) {
			schema, _, _ := strings.Cut(base, ".")
			if _, ok := requestBodies[schema]; !ok {
				schema = "CaptureRequest"
			}
			b, _ := os.ReadFile(file)
			var dst map[string]any
			err := s.decodeBody(bytes.NewReader(b), schema, DefaultMaxBody, &dst)
			if (err == nil) != valid[base] {
				t.Fatalf("decodeBody(%s) = %v, want valid %v", schema, err, valid[base])
			}
		})
	}
}
