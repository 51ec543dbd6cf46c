package signature

import (
	"reflect"
	"testing"
)

func TestFlows(t *testing.T) {
	cases := []struct {
		name    string
		code    string
		dialect Dialect
		want    []Flow
	}{
		{"keyword", "return tools.get_task(task_id=task_id)", Starlark,
			[]Flow{{Parameter: "task_id", Tool: "get_task", Keyword: "task_id", Line: 1, Column: 23}}},
		{"renamed keyword", "return tools.cmp(failed_task_id=t)", Starlark,
			[]Flow{{Parameter: "t", Tool: "cmp", Keyword: "failed_task_id", Line: 1, Column: 18}}},
		{"several tools sorted", "a = tools.b(x=p)\nc = tools.a(y=p, z=q)\nreturn [a, c]", Starlark,
			[]Flow{{"p", "a", "y", 2, 13}, {"p", "b", "x", 1, 13}, {"q", "a", "z", 2, 18}}},
		{"positional is no flow", "return tools.get_task(task_id)", Starlark, []Flow{}},
		{"transformed is no flow", "return tools.get_task(task_id=int(task_id))", Starlark, []Flow{}},
		{"local is no flow", "t = 3\nreturn tools.get_task(task_id=t)", Starlark, []Flow{}},
		{"literal is no flow", "return tools.get_task(task_id=3)", Starlark, []Flow{}},
		{"not a tool call", "return [f(task_id=task_id), tools.g()]", Starlark, []Flow{}},
		{"python-async positions as written", "r = await tools.get_task(task_id=tid)\nreturn r", PythonAsync,
			[]Flow{{Parameter: "tid", Tool: "get_task", Keyword: "task_id", Line: 1, Column: 26}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.code, c.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Flows, c.want) {
				t.Errorf("flows = %+v, want %+v", a.Flows, c.want)
			}
		})
	}
}
