package procedures_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/procedures"
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
		want  []procedures.SearchTool
	}{
		{"one distinctive word, name lowercased", []string{"stdout"}, []procedures.SearchTool{{Term: "get_pilot_log", Boost: 0.5}}},
		{"words a tool holds add up, most first", []string{"rucio", "replicas", "dataset"},
			[]procedures.SearchTool{{Term: "list_replicas", Boost: 1.5}, {Term: "list_rules", Boost: 1}}},
		{"a word most descriptions hold selects nothing", []string{"of", "a", "job"}, nil},
		{"names are not matched", []string{"get", "pilot_log"}, nil},
		{"no match", []string{"zzz"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := procedures.SearchTools(cat, c.terms)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("SearchTools(%q) = %+v, want %+v", c.terms, got, c.want)
			}
			if !procedures.ValidSearchTools(got) {
				t.Fatalf("SearchTools gave invalid tool terms %+v", got)
			}
		})
	}
	if got := procedures.SearchTools(nil, []string{"stdout"}); got != nil {
		t.Fatalf("nil catalogue: %+v", got)
	}
	// A changed catalogue is a new Catalogue: its own index.
	moved, err := procedures.NewCatalogue([]procedures.Tool{{Name: "get_job", Description: "stdout"}, {Name: "x"}, {Name: "y"}, {Name: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := procedures.SearchTools(moved, []string{"stdout"}); !reflect.DeepEqual(got, []procedures.SearchTool{{Term: "get_job", Boost: 0.5}}) {
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
	got := procedures.SearchTools(cat, []string{"w9", "w0", "w1"})
	if len(got) != procedures.MaxSearchTools || got[0].Term != "t00" || got[len(got)-1].Term != fmt.Sprintf("t%02d", procedures.MaxSearchTools-1) {
		t.Fatalf("SearchTools = %+v, want the first %d by name", got, procedures.MaxSearchTools)
	}
	// On equal words, the rarer word's tools first: w0 is held by 4
	// descriptions, the one-off "solo" by one.
	tools = append(tools, procedures.Tool{Name: "z_last", Description: "solo"})
	if cat, err = procedures.NewCatalogue(tools); err != nil {
		t.Fatal(err)
	}
	if got := procedures.SearchTools(cat, []string{"w0", "solo"}); len(got) == 0 || got[0].Term != "z_last" {
		t.Fatalf("SearchTools = %+v, want z_last (the rarest word) first", got)
	}
}

func TestValidSearchTools(t *testing.T) {
	for _, c := range []struct {
		name  string
		tools []procedures.SearchTool
		want  bool
	}{
		{"none", nil, true},
		{"identifier", []procedures.SearchTool{{Term: "get_job_2", Boost: 0.5}}, true},
		{"upper case", []procedures.SearchTool{{Term: "Get", Boost: 0.5}}, false},
		{"lucene syntax", []procedures.SearchTool{{Term: "a:b", Boost: 0.5}}, false},
		{"space", []procedures.SearchTool{{Term: "a b", Boost: 0.5}}, false},
		{"empty", []procedures.SearchTool{{Term: "", Boost: 0.5}}, false},
		{"zero boost", []procedures.SearchTool{{Term: "a", Boost: 0}}, false},
		{"too many", make([]procedures.SearchTool, procedures.MaxSearchTools+1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := procedures.ValidSearchTools(c.tools); got != c.want {
				t.Fatalf("ValidSearchTools(%+v) = %v, want %v", c.tools, got, c.want)
			}
		})
	}
}
