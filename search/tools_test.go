package search_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

func TestSearchTools(t *testing.T) {
	// Eight tools: a word held by at most two descriptions is distinctive.
	tools := []procedures.Tool{
		{Name: "Get_Pilot_Log", Description: "The pilot log of a job, with its stdout."},
		{Name: "get_job", Description: "Details of a job."},
		{Name: "get_task", Description: "Details of a task and its jobs."},
		{Name: "get_jobs", Description: "The jobs of a task."},
		{Name: "list_replicas", Description: "Replicas of a dataset in Rucio."},
		{Name: "list_rules", Description: "Rucio rules of a dataset."},
		{Name: "site_status", Description: "Status of a site; no job data."},
		{Name: "no_description"},
	}
	cat, err := procedures.NewCatalogue(tools)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		terms []string
		want  []search.Tool
	}{
		{"one distinctive word, name lowercased", []string{"stdout"}, []search.Tool{{Term: "get_pilot_log", Boost: 0.5}}},
		{"words a tool holds add up, most first", []string{"rucio", "replicas", "dataset"},
			[]search.Tool{{Term: "list_replicas", Boost: 1.5}, {Term: "list_rules", Boost: 1}}},
		{"a word most descriptions hold selects nothing", []string{"of", "a", "job"}, nil},
		{"names are not matched", []string{"get", "pilot_log"}, nil},
		{"no match", []string{"zzz"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := search.Tools(cat, c.terms)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Tools(%q) = %+v, want %+v", c.terms, got, c.want)
			}
			if !search.ValidTools(got) {
				t.Fatalf("Tools gave invalid tool terms %+v", got)
			}
		})
	}
	if got := search.Tools(nil, []string{"stdout"}); got != nil {
		t.Fatalf("nil catalogue: %+v", got)
	}
	// A changed catalogue is a new Catalogue: its own index.
	moved, err := procedures.NewCatalogue([]procedures.Tool{{Name: "get_job", Description: "stdout"}, {Name: "x"}, {Name: "y"}, {Name: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := search.Tools(moved, []string{"stdout"}); !reflect.DeepEqual(got, []search.Tool{{Term: "get_job", Boost: 0.5}}) {
		t.Fatalf("after a catalogue change: %+v", got)
	}
}

func TestSearchToolsBounded(t *testing.T) {
	var tools []procedures.Tool
	for i := range 40 {
		tools = append(tools, procedures.Tool{Name: fmt.Sprintf("t%02d", i), Description: fmt.Sprintf("w%d", i/4)})
	}
	cat, err := procedures.NewCatalogue(tools)
	if err != nil {
		t.Fatal(err)
	}
	got := search.Tools(cat, []string{"w9", "w0", "w1"})
	if len(got) != search.MaxTools || got[0].Term != "t00" || got[len(got)-1].Term != fmt.Sprintf("t%02d", search.MaxTools-1) {
		t.Fatalf("Tools = %+v, want the first %d by name", got, search.MaxTools)
	}
	// On equal words, the rarer word's tools first: w0 is held by 4
	// descriptions, the one-off "solo" by one.
	tools = append(tools, procedures.Tool{Name: "z_last", Description: "solo"})
	if cat, err = procedures.NewCatalogue(tools); err != nil {
		t.Fatal(err)
	}
	if got := search.Tools(cat, []string{"w0", "solo"}); len(got) == 0 || got[0].Term != "z_last" {
		t.Fatalf("Tools = %+v, want z_last (the rarest word) first", got)
	}
}

func TestValidSearchTools(t *testing.T) {
	for _, c := range []struct {
		name  string
		tools []search.Tool
		want  bool
	}{
		{"none", nil, true},
		{"identifier", []search.Tool{{Term: "get_job_2", Boost: 0.5}}, true},
		{"upper case", []search.Tool{{Term: "Get", Boost: 0.5}}, false},
		{"lucene syntax", []search.Tool{{Term: "a:b", Boost: 0.5}}, false},
		{"space", []search.Tool{{Term: "a b", Boost: 0.5}}, false},
		{"empty", []search.Tool{{Term: "", Boost: 0.5}}, false},
		{"zero boost", []search.Tool{{Term: "a", Boost: 0}}, false},
		{"too many", make([]search.Tool, search.MaxTools+1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := search.ValidTools(c.tools); got != c.want {
				t.Fatalf("ValidTools(%+v) = %v, want %v", c.tools, got, c.want)
			}
		})
	}
}
