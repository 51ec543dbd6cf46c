package procedures

import (
	"reflect"
	"strings"
	"testing"
)

// TestClassFieldsAreClass: ClassFields names every field of Class once,
// each entry's accessor returns the field it names (and its Status, Flag or
// Count is the field's kind), Properties and Tokens are distinct, and the
// Appended flags come last: so a store that walks the table encodes every
// field, and a field added to Class fails here until the table has it.
func TestClassFieldsAreClass(t *testing.T) {
	typ := reflect.TypeOf(Class{})
	if len(ClassFields) != typ.NumField() {
		t.Errorf("ClassFields has %d entries, Class %d fields", len(ClassFields), typ.NumField())
	}
	names, props, tokens := map[string]bool{}, map[string]bool{}, map[string]bool{"-": true}
	appended := false
	for _, f := range ClassFields {
		sf, ok := typ.FieldByName(f.Name)
		switch {
		case !ok:
			t.Fatalf("ClassFields: Class has no field %s", f.Name)
		case names[f.Name]:
			t.Fatalf("ClassFields: %s twice", f.Name)
		case f.Property == "" || props[f.Property]:
			t.Fatalf("ClassFields: %s: property %q empty or taken", f.Name, f.Property)
		case f.Node == "":
			t.Fatalf("ClassFields: %s: no Node expression", f.Name)
		}
		names[f.Name], props[f.Property] = true, true
		var c Class
		var addr any
		set := 0
		if f.Status != nil {
			set++
			addr = f.Status(&c)
		}
		if f.Flag != nil {
			set++
			addr = f.Flag(&c)
		}
		if f.Count != nil {
			set++
			addr = f.Count(&c)
		}
		if set != 1 {
			t.Fatalf("ClassFields: %s sets %d of Status, Flag and Count, want 1", f.Name, set)
		}
		if want := reflect.ValueOf(&c).Elem().FieldByIndex(sf.Index).Addr().Interface(); addr != want {
			t.Fatalf("ClassFields: %s's accessor returns another field", f.Name)
		}
		if f.Flag != nil {
			if f.Token == "" || tokens[f.Token] || strings.Contains(f.Token, "|") {
				t.Fatalf("ClassFields: %s: token %q empty, taken or holding '|'", f.Name, f.Token)
			}
			tokens[f.Token] = true
		} else if f.Token != "" || f.Appended {
			t.Fatalf("ClassFields: %s is no flag but has a token or is appended", f.Name)
		}
		if appended && !f.Appended {
			t.Fatalf("ClassFields: %s follows an appended flag but is not appended: it would change every stored key", f.Name)
		}
		appended = appended || f.Appended
	}
}
