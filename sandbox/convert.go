package sandbox

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// maxDepth bounds the nesting of converted values; it also stops cycles
// (a Starlark list may contain itself).
const maxDepth = jsonvalue.MaxDepth

// toJSON converts a Starlark value to a JSON-safe Go value: nil, bool,
// int64, float64, string, []any or map[string]any. Dicts need string keys;
// lists and tuples become []any; an int that does not fit in 64 bits, a
// non-finite float and every other type (set, function, bytes...) is an error
// naming the type.
func toJSON(v starlark.Value) (any, error) {
	return toJSONDepth(v, 0)
}

func toJSONDepth(v starlark.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep (or cyclic)", maxDepth)
	}
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.Int:
		n, ok := v.Int64()
		if !ok {
			return nil, fmt.Errorf("int %s does not fit in 64 bits", v.String())
		}
		return n, nil
	case starlark.Float:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("float %s is not valid JSON", v.String())
		}
		return f, nil
	case starlark.String:
		return string(v), nil
	case *starlark.List:
		out := make([]any, v.Len())
		for i := range out {
			x, err := toJSONDepth(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case starlark.Tuple:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := toJSONDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, item := range v.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s, not a string", item[0].String(), item[0].Type())
			}
			x, err := toJSONDepth(item[1], depth+1)
			if err != nil {
				return nil, err
			}
			out[string(k)] = x
		}
		return out, nil
	default:
		return nil, fmt.Errorf("a %s is not a JSON value", v.Type())
	}
}

// fromJSON converts a JSON-safe Go value (see jsonvalue.Normalize) to a Starlark
// value. Objects become dicts with their keys in sorted order, so a replay
// iterates them deterministically.
func fromJSON(x any) (starlark.Value, error) {
	return fromJSONDepth(x, 0)
}

func fromJSONDepth(x any, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", maxDepth)
	}
	switch x := x.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("float %v is not valid JSON", x)
		}
		return starlark.Float(x), nil
	case string:
		return starlark.String(x), nil
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			v, err := fromJSONDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = v
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		for _, k := range sortedKeys(x) {
			v, err := fromJSONDepth(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), v); err != nil {
				return nil, err
			}
		}
		return d, nil
	default:
		return nil, fmt.Errorf("a Go %T is not a JSON value", x)
	}
}
