package neo4jstore

import (
	"encoding/json"
	"fmt"
	"time"
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

func (r *row) str(key string) string {
	switch v := r.m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		r.fail(key, v, "string")
		return ""
	}
}

func (r *row) int(key string) int64 {
	switch v := r.m[key].(type) {
	case nil:
		return 0
	case int64:
		return v
	default:
		r.fail(key, v, "integer")
		return 0
	}
}

func (r *row) bool(key string) bool {
	switch v := r.m[key].(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		r.fail(key, v, "boolean")
		return false
	}
}

func (r *row) time(key string) time.Time {
	switch v := r.m[key].(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return v.UTC()
	default:
		r.fail(key, v, "datetime")
		return time.Time{}
	}
}

func (r *row) timePtr(key string) *time.Time {
	if r.m[key] == nil {
		return nil
	}
	t := r.time(key)
	return &t
}

func (r *row) strings(key string) []string {
	switch v := r.m[key].(type) {
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

func (r *row) sub(key string) (*row, bool) {
	switch v := r.m[key].(type) {
	case nil:
		return nil, false
	case map[string]any:
		return &row{m: v}, true
	default:
		r.fail(key, v, "map")
		return nil, false
	}
}

func (r *row) list(key string) []any {
	switch v := r.m[key].(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		r.fail(key, v, "list")
		return nil
	}
}

// json decodes the JSON string property key into dst; null leaves dst alone.
func (r *row) json(key string, dst any) {
	s := r.str(key)
	if s == "" {
		return
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil && r.err == nil {
		r.err = fmt.Errorf("neo4j store: field %s: %w", key, err)
	}
}
