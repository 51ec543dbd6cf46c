package api

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procgraph/procgraph/graphview"
)

// Graph export formats (docs/api.md "Graph exports").
const (
	graphFormatJSON    = "json"
	graphFormatGraphML = "graphml"
	graphFormatDOT     = "dot"
)

// writeGraph answers g in the format the query asks for (json by default).
func writeGraph(w http.ResponseWriter, format string, g *graphview.Graph) {
	switch format {
	case graphFormatGraphML:
		writeBody(w, http.StatusOK, "application/graphml+xml; charset=utf-8", GraphML(g))
	case graphFormatDOT:
		writeBody(w, http.StatusOK, "text/vnd.graphviz; charset=utf-8", DOT(g))
	default:
		writeJSON(w, http.StatusOK, g)
	}
}

// graphKey is one typed GraphML attribute.
type graphKey struct {
	id, domain, name, typ string
}

// GraphML encodes g as GraphML 1.0: a directed graph whose node attributes
// (kind, label and every property) and edge attributes (kind, frequency)
// are declared with their types (boolean, long, double or string; a list
// is its items joined by ", "). Text is XML-escaped; characters XML cannot
// carry become U+FFFD. The output is deterministic.
func GraphML(g *graphview.Graph) []byte {
	keys := []graphKey{{"n_kind", "node", "kind", "string"}, {"n_label", "node", "label", "string"}}
	propTypes := map[string]string{}
	for _, n := range g.Nodes {
		for name, v := range n.Properties {
			if name == "kind" || name == "label" {
				continue
			}
			t := graphMLType(v)
			if old, ok := propTypes[name]; ok && old != t {
				t = "string"
			}
			propTypes[name] = t
		}
	}
	props := make([]string, 0, len(propTypes))
	for name := range propTypes {
		props = append(props, name)
	}
	sort.Strings(props)
	for _, name := range props {
		keys = append(keys, graphKey{"n_" + name, "node", name, propTypes[name]})
	}
	keys = append(keys, graphKey{"e_kind", "edge", "kind", "string"}, graphKey{"e_frequency", "edge", "frequency", "long"},
		graphKey{"g_truncated", "graph", "truncated", "boolean"})

	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">` + "\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  <key id=%s for=%q attr.name=%s attr.type=%q/>\n", xmlAttr(k.id), k.domain, xmlAttr(k.name), k.typ)
	}
	b.WriteString(`  <graph id="procgraph" edgedefault="directed">` + "\n")
	fmt.Fprintf(&b, "    <data key=\"g_truncated\">%t</data>\n", g.Truncated)
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "    <node id=%s>\n", xmlAttr(n.ID))
		writeData(&b, "n_kind", n.Kind)
		writeData(&b, "n_label", n.Label)
		for _, name := range props {
			if v, ok := n.Properties[name]; ok && v != nil {
				writeData(&b, "n_"+name, graphMLValue(v))
			}
		}
		b.WriteString("    </node>\n")
	}
	for i, e := range g.Edges {
		fmt.Fprintf(&b, "    <edge id=\"e%d\" source=%s target=%s>\n", i, xmlAttr(e.Source), xmlAttr(e.Target))
		writeData(&b, "e_kind", e.Kind)
		writeData(&b, "e_frequency", strconv.FormatInt(e.Frequency, 10))
		b.WriteString("    </edge>\n")
	}
	b.WriteString("  </graph>\n</graphml>\n")
	return b.Bytes()
}

func writeData(b *bytes.Buffer, key, text string) {
	fmt.Fprintf(b, "      <data key=%s>", xmlAttr(key))
	_ = xml.EscapeText(b, []byte(strings.ToValidUTF8(text, "\uFFFD")))
	b.WriteString("</data>\n")
}

// xmlAttr is s as a double-quoted XML attribute value (xml.EscapeText
// escapes quotes, line ends and tabs too).
func xmlAttr(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	_ = xml.EscapeText(&b, []byte(strings.ToValidUTF8(s, "\uFFFD")))
	b.WriteByte('"')
	return b.String()
}

// graphMLType is the GraphML attr.type of a property value.
func graphMLType(v any) string {
	if v == nil {
		return "string"
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "long"
	case reflect.Float32, reflect.Float64:
		return "double"
	default:
		return "string"
	}
}

// graphMLValue is a property value as GraphML text.
func graphMLValue(v any) string {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.String:
		return rv.String()
	case reflect.Slice, reflect.Array:
		items := make([]string, rv.Len())
		for i := range items {
			items[i] = fmt.Sprint(rv.Index(i).Interface())
		}
		return strings.Join(items, ", ")
	default:
		j, _ := json.Marshal(v)
		return string(j)
	}
}

// DOT encodes g for Graphviz: a digraph whose nodes carry their label,
// kind, classification (not "class", which Graphviz gives SVG) and
// frequency, shaped and coloured by kind and class, and
// whose edges carry kind and frequency (shown as the label when non-zero).
// Every ID and value is a quoted string escaped by dotQuote, so no name can
// end its string early or add statements.
func DOT(g *graphview.Graph) []byte {
	var b bytes.Buffer
	b.WriteString("digraph procgraph {\n  rankdir=LR;\n  node [style=filled, fontname=\"Helvetica\"];\n")
	for _, n := range g.Nodes {
		attrs := [][2]string{{"label", n.Label}, {"kind", n.Kind}, {"shape", dotShape(n.Kind)}}
		if class, ok := n.Properties["class"].(string); ok {
			attrs = append(attrs, [2]string{"classification", class}, [2]string{"fillcolor", dotColour(class)})
		} else {
			attrs = append(attrs, [2]string{"fillcolor", "#e8e8e8"})
		}
		if f, ok := n.Properties["frequency"]; ok {
			attrs = append(attrs, [2]string{"frequency", graphMLValue(f)})
		}
		fmt.Fprintf(&b, "  %s [%s];\n", dotQuote(n.ID), dotAttrs(attrs))
	}
	for _, e := range g.Edges {
		attrs := [][2]string{{"kind", e.Kind}, {"frequency", strconv.FormatInt(e.Frequency, 10)}}
		if e.Frequency > 0 {
			attrs = append(attrs, [2]string{"label", strconv.FormatInt(e.Frequency, 10)})
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotQuote(e.Source), dotQuote(e.Target), dotAttrs(attrs))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func dotAttrs(attrs [][2]string) string {
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = a[0] + "=" + dotQuote(a[1])
	}
	return strings.Join(parts, ", ")
}

func dotShape(kind string) string {
	switch kind {
	case "cause":
		return "ellipse"
	case "tool":
		return "box"
	default:
		return "component"
	}
}

func dotColour(class string) string {
	switch class {
	case graphview.ClassReadOnly:
		return "#b7e4c7"
	case graphview.ClassStateChanging:
		return "#f4a3a3"
	default:
		return "#ffe29a"
	}
}

// dotQuote is s as a DOT double-quoted string: backslashes and quotes are
// escaped (so the string ends only at its closing quote and a label shows a
// backslash as typed, not as an escape), line ends become \n, other
// control characters and invalid UTF-8 become '?'.
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "?") {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
