package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/internal/strictjson"
	"github.com/procgraph/procgraph/schemas"
)

// requestBodies are the request bodies, composed of the declared fields
// (internal/fields). Their JSON Schemas validate every body before it is
// decoded, Field.Check then applies the byte bounds, and the OpenAPI
// document is built from them.
var requestBodies = map[string]fields.Field{
	"CaptureRequest": fields.Body(
		fields.Req(fields.Code), fields.Opt(fields.Dialect), fields.Nullable(fields.Summary),
		fields.Nullable(fields.Cause), fields.Nullable(fields.SessionID),
		fields.Opt(fields.Status), fields.Nullable(fields.Field{Name: "params_schema", Type: fields.Object}),
		fields.Nullable(fields.Metadata), fields.Opt(fields.Lift)),
	"ToolsPut":      fields.Body(fields.Req(fields.Field{Name: "tools", Type: fields.Array, Items: &fields.Tool, MaxItems: fields.MaxCatalogueTools})),
	"AutoRunPut":    fields.Body(fields.Req(fields.Enabled), fields.Nullable(fields.Reason)),
	"RetirementPut": fields.Body(fields.Req(fields.Reason.NonEmpty())),
	"ReasonBody":    fields.Body(fields.Nullable(fields.Reason)),
	"VerifyRequest": fields.Body(fields.Nullable(fields.VersionHash)),
	"TokenCreate":   fields.Body(fields.Req(fields.TokenHolder), fields.Req(fields.TokenScopes), fields.Nullable(fields.TokenExpiresIn)),
	"TokenRotate":   fields.Body(fields.Nullable(fields.TokenExpiresIn)),
	"InvokeRequest": fields.Body(
		fields.Nullable(fields.Arguments), fields.Req(fields.Phase), fields.Nullable(fields.SessionID),
		fields.Nullable(fields.InvokeCause), fields.Nullable(fields.ReviewedBy)),
}

// requestSchema is a request body's JSON Schema (without descriptions:
// the HTTP contract's words are docs/api.md's).
func requestSchema(body fields.Field) []byte { return body.Schema(fields.Options{}) }

// schemaSet holds the compiled request schemas.
type schemaSet map[string]*jsonschema.Schema

func compileRequestSchemas() (schemaSet, error) {
	out := schemaSet{}
	for name, body := range requestBodies {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource(name+".json", bytes.NewReader(requestSchema(body))); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		s, err := c.Compile(name + ".json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
}

// decodeBody reads a JSON body of at most limit bytes, validates it against
// the named schema and decodes it into dst. Every failure is an
// invalid_request naming the field, or payload_too_large.
func (s *Server) decodeBody(body io.Reader, schema string, limit int64, dst any) error {
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return fault.Errorf(fault.CodeInvalid, "the body could not be read")
	}
	if int64(len(data)) > limit {
		return fault.Errorf(fault.CodeTooLarge, "the body is larger than %d bytes", limit)
	}
	if !utf8.Valid(data) {
		return fault.Errorf(fault.CodeInvalid, "the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fault.Errorf(fault.CodeInvalid, "the body is not valid JSON: %s", jsonProblem(err))
	}
	if len(bytes.Trim(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return fault.Errorf(fault.CodeInvalid, "the body holds more than one JSON value")
	}
	if err := strictjson.Check(data); err != nil {
		return err
	}
	if err := s.schemas[schema].Validate(doc); err != nil {
		return schemaError(err)
	}
	if err := requestBodies[schema].Check(doc); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fault.Errorf(fault.CodeInvalid, "the body does not match the request: %s", jsonProblem(err))
	}
	return nil
}

// schemaError turns a validation error into invalid_request naming the
// offending field and listing every problem.
func schemaError(err error) error {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fault.Errorf(fault.CodeInvalid, "the body is invalid")
	}
	problems := leafProblems(ve)
	first := problems[0]
	e := fault.Errorf(fault.CodeInvalid, "%s: %s", first["field"], first["message"])
	e.WithDetails("field", first["field"])
	return e.WithDetails("errors", problems)
}

// leafProblems lists the innermost causes of a validation error as
// {field, message}, field being a dotted path ("cause.name", "(body)").
func leafProblems(ve *jsonschema.ValidationError) []map[string]string {
	var out []map[string]string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			// The body's own field names are told; a value never is
			// (schemas.ViolationOf).
			field := fieldPath(e.InstanceLocation)
			v := schemas.ViolationOf(e)
			msg := v.Message
			if v.Keyword == "additionalProperties" {
				msg = "unknown field(s): " + strings.TrimPrefix(e.Message, "additionalProperties ")
				if names := extraNames(e.Message); len(names) == 1 {
					field = joinField(field, names[0])
				}
			} else if v.Keyword == "required" {
				msg = "required field(s) missing: " + strings.TrimSpace(strings.TrimPrefix(e.Message, "missing properties:"))
				if names := extraNames(e.Message); len(names) == 1 {
					field = joinField(field, names[0])
				}
			}
			out = append(out, map[string]string{"field": field, "message": msg})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i]["field"] < out[j]["field"] })
	return out
}

func fieldPath(loc string) string {
	p := strings.Trim(strings.ReplaceAll(loc, "/", "."), ".")
	if p == "" {
		return "(body)"
	}
	return p
}

func joinField(parent, name string) string {
	if parent == "(body)" {
		return name
	}
	return parent + "." + name
}

// extraNames parses the property names out of jsonschema's
// "additionalProperties 'a', 'b' not allowed".
func extraNames(msg string) []string {
	var names []string
	for _, part := range strings.Split(msg, "'") {
		if part != "" && !strings.ContainsAny(part, " ,") {
			names = append(names, part)
		}
	}
	return names
}

func jsonProblem(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("%s at byte %d", e.Error(), e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s must be %s", e.Field, e.Type)
	}
	if err == io.EOF {
		return "the body is empty"
	}
	return "malformed JSON"
}

// checkContentType requires a request that has a body to declare it as
// application/json. Besides the contract, this keeps browsers from sending
// cross-site "simple" POSTs (text/plain, forms) to a server without tokens.
func checkContentType(r *http.Request) error {
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fault.Errorf(fault.CodeInvalid, "Content-Type must be application/json").WithDetails("field", "Content-Type")
	}
	return nil
}
