package neo4j

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/procgraph/procgraph/internal/storewrap"
	"github.com/procgraph/procgraph/procedures"
)

// Values as the store writes and reads them. Times are stored as datetimes
// in UTC at millisecond precision; JSON-like values as JSON strings.

// dbTime is t as stored: UTC, truncated to the millisecond.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// dbTimeOrNil is dbTime(t), or nil for the zero time.
func dbTimeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return dbTime(t)
}

// jsonString encodes v as a JSON string property; nil stays null.
func jsonString(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		if x == nil {
			return nil, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// strings returns ss as a list parameter, never nil (a nil slice is null).
func stringList(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// row reads typed fields from a map the server returned. The first
// unexpected type is kept in err, so decoding code stays linear.
type row struct {
	m   map[string]any
	err error
}

func (r *row) fail(key string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("neo4j store: field %s is %T, want %s", key, v, want)
	}
}

func (r *row) str(key string) string { return r.strOf(key, r.m[key]) }

func (r *row) int(key string) int64 { return r.intOf(key, r.m[key]) }

func (r *row) bool(key string) bool { return r.boolOf(key, r.m[key]) }

func (r *row) time(key string) time.Time { return r.timeOf(key, r.m[key]) }

func (r *row) timePtr(key string) *time.Time { return r.timePtrOf(key, r.m[key]) }

func (r *row) strings(key string) []string { return r.stringsOf(key, r.m[key]) }

func (r *row) list(key string) []any { return r.listOf(key, r.m[key]) }

func (r *row) ints(key string) []int64 { return r.intsOf(key, r.m[key]) }

// json decodes the JSON string property key into dst; null leaves dst alone.
func (r *row) json(key string, dst any) { r.jsonOf(key, r.m[key], dst) }

// The conversions of one value v of field key (named in errors).

func (r *row) strOf(key string, v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		r.fail(key, v, "string")
		return ""
	}
}

func (r *row) intOf(key string, v any) int64 {
	switch v := v.(type) {
	case nil:
		return 0
	case int64:
		return v
	default:
		r.fail(key, v, "integer")
		return 0
	}
}

func (r *row) boolOf(key string, v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		r.fail(key, v, "boolean")
		return false
	}
}

func (r *row) timeOf(key string, v any) time.Time {
	switch v := v.(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return v.UTC()
	default:
		r.fail(key, v, "datetime")
		return time.Time{}
	}
}

func (r *row) timePtrOf(key string, v any) *time.Time {
	if v == nil {
		return nil
	}
	t := r.timeOf(key, v)
	return &t
}

func (r *row) stringsOf(key string, v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				r.fail(key, x, "list of strings")
				return nil
			}
			out[i] = s
		}
		return out
	default:
		r.fail(key, v, "list")
		return nil
	}
}

func (r *row) intsOf(key string, v any) []int64 {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]int64, len(v))
		for i, x := range v {
			n, ok := x.(int64)
			if !ok {
				r.fail(key, x, "list of integers")
				return nil
			}
			out[i] = n
		}
		return out
	default:
		r.fail(key, v, "list")
		return nil
	}
}

func (r *row) listOf(key string, v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		r.fail(key, v, "list")
		return nil
	}
}

func (r *row) jsonOf(key string, v any, dst any) {
	s := r.strOf(key, v)
	if s == "" {
		return
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil && r.err == nil {
		r.err = fmt.Errorf("neo4j store: field %s: %w", key, err)
	}
}

// fields reads typed fields from a list the server returned: the values of
// the named fields in the order of names (a fragment returning a list
// instead of a map: the driver then builds no map and no key strings per
// value). A list of another length is an error; so is each unexpected type,
// as for row.
type fields struct {
	row
	v     []any
	names []string
}

// newFields reads v, which must be a list of len(names) values; what of
// says what v is, in errors.
func newFields(v any, names []string, what string) (*fields, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("neo4j store: %s is %T, want a list", what, v)
	}
	if len(l) != len(names) {
		return nil, fmt.Errorf("neo4j store: %s has %d fields, want %d", what, len(l), len(names))
	}
	return &fields{v: l, names: names}, nil
}

func (f *fields) str(i int) string { return f.strOf(f.names[i], f.v[i]) }

func (f *fields) int(i int) int64 { return f.intOf(f.names[i], f.v[i]) }

func (f *fields) bool(i int) bool { return f.boolOf(f.names[i], f.v[i]) }

func (f *fields) time(i int) time.Time { return f.timeOf(f.names[i], f.v[i]) }

func (f *fields) timePtr(i int) *time.Time { return f.timePtrOf(f.names[i], f.v[i]) }

func (f *fields) strings(i int) []string { return f.stringsOf(f.names[i], f.v[i]) }

func (f *fields) list(i int) []any { return f.listOf(f.names[i], f.v[i]) }

func (f *fields) ints(i int) []int64 { return f.intsOf(f.names[i], f.v[i]) }

func (f *fields) null(i int) bool { return f.v[i] == nil }

// json decodes the JSON string field i into dst; null leaves dst alone.
func (f *fields) json(i int, dst any) {
	if !f.null(i) {
		f.jsonOf(f.names[i], f.v[i], dst)
	}
}

// jsonCaches are a store's caches of decodeProcedure's JSON properties
// (entries found by the whole text, so never stale).
type jsonCaches struct {
	schemaCache  *storewrap.JSONCache[map[string]any]
	warningCache *storewrap.JSONCache[[]procedures.Warning]
	// baselineCache: versions' drift baselines (procedures.Baseline).
	baselineCache *storewrap.JSONCache[*procedures.Baseline]
}

// newJSONCaches returns empty caches of 8 MiB of schema texts, 1 MiB of
// warnings and 4 MiB of baselines.
func newJSONCaches() *jsonCaches {
	return &jsonCaches{
		schemaCache:   storewrap.NewJSONCache[map[string]any](8 << 20),
		warningCache:  storewrap.NewJSONCache[[]procedures.Warning](1 << 20),
		baselineCache: storewrap.NewJSONCache[*procedures.Baseline](4 << 20),
	}
}

// jsonShared decodes the JSON string field i into *dst through c; null
// leaves *dst alone.
func jsonShared[T any](f *fields, i int, c *storewrap.JSONCache[T], dst *T) {
	s := f.str(i)
	if s == "" || f.err != nil {
		return
	}
	v, err := c.Decode(s)
	if err != nil {
		f.err = fmt.Errorf("neo4j store: field %s: %w", f.names[i], err)
		return
	}
	*dst = v
}
