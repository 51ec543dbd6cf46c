// Package telemetry is procgraph's OpenTelemetry tracing: off unless the
// standard OTEL_* variables configure an OTLP endpoint, then spans of
// invokes, turns and upstream calls exported over OTLP/HTTP. A span says
// which procedure, version, decision and grant or approval a run had, never
// argument values, code or results (docs/design.md "Traces").
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The attributes procgraph's spans carry. None holds an argument value, a
// piece of code or a result.
const (
	Procedure    = attribute.Key("procgraph.procedure")     // a procedure's name
	CodeHash     = attribute.Key("procgraph.code_hash")     // the version run (its code hash)
	Decision     = attribute.Key("procgraph.decision")      // the decision record's id
	Outcome      = attribute.Key("procgraph.outcome")       // allowed, denied, pending, …
	Reason       = attribute.Key("procgraph.reason")        // the decision's reason
	Grant        = attribute.Key("procgraph.grant")         // the code hash a durable grant holds
	Approval     = attribute.Key("procgraph.approval")      // the approval (turn) id that authorised a run
	Turn         = attribute.Key("procgraph.turn")          // a turn's id
	Phase        = attribute.Key("procgraph.phase")         // automatic or interactive
	Server       = attribute.Key("procgraph.server")        // an upstream server's key
	Tool         = attribute.Key("procgraph.tool")          // a tool's catalogue name
	FailureClass = attribute.Key("procgraph.failure_class") // a failed run's or call's class
)

// tracerName names procgraph's tracer (the instrumentation scope).
const tracerName = "github.com/procgraph/procgraph"

// Tracer is procgraph's tracer: a no-op until Setup installs a provider.
func Tracer() trace.Tracer { return otel.Tracer(tracerName) }

// Start starts a span named name under ctx's with attrs: what every
// instrumented call does.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return Tracer().Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span, marking it failed with class when class is not "" (the
// failure class, never an error's text, which may quote values).
func End(span trace.Span, class string) {
	if class != "" {
		span.SetAttributes(FailureClass.String(class))
		span.SetStatus(codes.Error, class)
	}
	span.End()
}

// Enabled reports whether the environment (getenv) configures trace export:
// an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), not switched off by
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs a tracer provider exporting over OTLP/HTTP when the
// environment enables it (Enabled), and returns what flushes and stops it
// (a no-op otherwise). The exporter reads the standard variables itself
// (endpoint, headers, timeout, compression); a protocol or exporter
// procgraph does not build in is an error, never a silent "off".
func Setup(ctx context.Context, getenv func(string) string, version string) (shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if !Enabled(getenv) {
		return none, nil
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return none, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: procgraph exports traces over OTLP (otlp) or not at all (none)", e)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(name); p != "" {
			if p != "http/protobuf" {
				return none, fmt.Errorf("%s=%q: procgraph exports traces over OTLP/HTTP (http/protobuf) only", name, p)
			}
			break
		}
	}
	// The endpoint as getenv has it (the exporter reads the rest of the
	// OTEL_EXPORTER_OTLP_* variables itself, from the process environment).
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return none, fmt.Errorf("the OTLP endpoint %q is not an http:// or https:// URL", endpoint)
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return none, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	res, err := sdkresource.Merge(sdkresource.Default(), sdkresource.NewSchemaless(
		semconv.ServiceName(serviceName(getenv)), semconv.ServiceVersion(version)))
	if err != nil {
		res = sdkresource.Default()
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)),
		sdktrace.WithResource(res),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func(ctx context.Context) error {
		otel.SetTracerProvider(noop.NewTracerProvider())
		return errors.Join(tp.ForceFlush(ctx), tp.Shutdown(ctx))
	}, nil
}

// serviceName is OTEL_SERVICE_NAME, else procgraph.
func serviceName(getenv func(string) string) string {
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		return s
	}
	return "procgraph"
}
