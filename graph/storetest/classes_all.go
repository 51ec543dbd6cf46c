package storetest

import (
	"fmt"
	"reflect"

	"github.com/procgraph/procgraph/procedures"
)

// Classes is every procedures.Class over its fields' edges, built from
// the struct itself (a bool field false and true, Status succeeded and
// failed, an int 0, 1, 2 and 5): a field added to Class is in it at once,
// so each store's test of its class encoding (a round trip, distinct keys)
// fails until the store encodes the new field.
func Classes() []procedures.Class {
	out := []procedures.Class{{}}
	typ := reflect.TypeOf(procedures.Class{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		var values []reflect.Value
		switch {
		case f.Type == reflect.TypeOf(procedures.Status("")):
			values = []reflect.Value{reflect.ValueOf(procedures.StatusSucceeded), reflect.ValueOf(procedures.StatusFailed)}
		case f.Type.Kind() == reflect.Bool:
			values = []reflect.Value{reflect.ValueOf(false), reflect.ValueOf(true)}
		case f.Type.Kind() == reflect.Int:
			for _, n := range []int{0, 1, 2, 5} {
				values = append(values, reflect.ValueOf(n))
			}
		default:
			panic(fmt.Sprintf("storetest.Classes: no edges for Class.%s (%s): add them here", f.Name, f.Type))
		}
		var next []procedures.Class
		for _, c := range out {
			for _, v := range values {
				rv := reflect.ValueOf(&c).Elem()
				rv.Field(i).Set(v)
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}
