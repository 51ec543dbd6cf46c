package api

import "encoding/json"

// The OpenAPI 3.1 objects /openapi.json is built from: only the fields
// procgraph uses. Schemas stay JSON text (the same text the request
// validator compiles).

// OpenAPIDocument is an OpenAPI 3.1 document.
type OpenAPIDocument struct {
	OpenAPI    string              `json:"openapi"`
	Info       OpenAPIInfo         `json:"info"`
	Paths      map[string]PathItem `json:"paths"`
	Components OpenAPIComponents   `json:"components"`
}

// OpenAPIInfo is the document's info object.
type OpenAPIInfo struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

// PathItem maps a lower-case HTTP method to its operation.
type PathItem map[string]*Operation

// Operation is one method on one path.
type Operation struct {
	Summary     string                `json:"summary"`
	OperationID string                `json:"operationId"`
	Parameters  []Parameter           `json:"parameters,omitempty"`
	RequestBody *RequestBody          `json:"requestBody,omitempty"`
	Responses   map[string]Response   `json:"responses"`
	Security    []map[string][]string `json:"security,omitempty"`
}

// Parameter is a path, query or header parameter.
type Parameter struct {
	Name        string          `json:"name"`
	In          string          `json:"in"` // "path", "query" or "header"
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Explode     *bool           `json:"explode,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

// RequestBody is an operation's body.
type RequestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]MediaType `json:"content"`
}

// Response is one answer of an operation.
type Response struct {
	Description string               `json:"description"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// MediaType holds the schema of one content type.
type MediaType struct {
	Schema json.RawMessage `json:"schema"`
}

// OpenAPIComponents are the named schemas and the security schemes.
type OpenAPIComponents struct {
	Schemas         map[string]json.RawMessage `json:"schemas"`
	SecuritySchemes map[string]SecurityScheme  `json:"securitySchemes"`
}

// SecurityScheme is how a caller authenticates.
type SecurityScheme struct {
	Type   string `json:"type"`
	Scheme string `json:"scheme"`
}
