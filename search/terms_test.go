package search_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/search"
)

func TestSearchTerms(t *testing.T) {
	cases := []struct {
		name string
		q    string
		want []string
		code fault.Code
	}{
		{"words lowercased", "Stuck Task scouts", []string{"stuck", "task", "scouts"}, ""},
		{"duplicates once", "task TASK task", []string{"task"}, ""},
		{"tool names split", "get_task_jobs_summary", []string{"get", "task", "jobs", "summary"}, ""},
		{"lucene syntax dropped", `a AND b || c* "d" title:e~2 [f TO g] \h`, []string{"a", "and", "b", "c", "d", "title", "e", "2", "f", "to", "g", "h"}, ""},
		{"unicode letters", "Überlauf 記憶", []string{"überlauf", "記憶"}, ""},
		{"512 bytes", strings.Repeat("ab ", 170) + "ab", []string{"ab"}, ""},
		{"513 bytes", strings.Repeat("a", 513), nil, fault.CodeInvalid},
		{"not UTF-8", "ok \xff", nil, fault.CodeInvalid},
		{"no word", `+-&&||!(){}[]^"~*?:\/`, nil, fault.CodeInvalid},
		{"empty", "", nil, fault.CodeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := search.Terms(c.q)
			if fault.ErrorCode(err) != c.code {
				t.Fatalf("err = %v, want code %q", err, c.code)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("terms = %q, want %q", got, c.want)
			}
		})
	}
	many := ""
	for i := 0; i < 40; i++ {
		many += " w" + strconv.Itoa(i)
	}
	if got, _ := search.Terms(many); len(got) != search.MaxTerms {
		t.Fatalf("%d terms, want %d", len(got), search.MaxTerms)
	}
}

// FuzzSearchTerms: whatever q, the terms are valid words (no query syntax
// survives), bounded, and a q within the limits with a letter or digit has
// some.
func FuzzSearchTerms(f *testing.F) {
	for _, s := range []string{"stuck task", `a AND (b OR c)`, "\xff", "記憶", `*:*`, "title:[a TO z]", strings.Repeat("x", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		terms, err := search.Terms(q)
		if err != nil {
			if fault.ErrorCode(err) != fault.CodeInvalid {
				t.Fatalf("error code %q", fault.ErrorCode(err))
			}
			return
		}
		if len(q) > search.MaxBytes || !utf8.ValidString(q) {
			t.Fatalf("accepted %q", q)
		}
		if !search.ValidTerms(terms) || len(terms) == 0 {
			t.Fatalf("terms %q of %q are not valid", terms, q)
		}
		for _, term := range terms {
			if strings.ContainsAny(term, "+-&|!(){}[]^\"~*?:\\/ \t\n") {
				t.Fatalf("term %q keeps syntax", term)
			}
		}
	})
}
