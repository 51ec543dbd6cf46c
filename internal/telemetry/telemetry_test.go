package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/telemetry/otlptest"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSetup: tracing is off unless an OTLP endpoint is configured, a
// protocol or exporter procgraph does not build in is refused, and a span
// reaches a real OTLP/HTTP receiver with its attributes.
func TestSetup(t *testing.T) {
	ctx := context.Background()
	refused := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf"},
		{"grpc for traces", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{"not a URL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}, "http://"},
		{"another exporter", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Setup(ctx, envOf(tc.env), "test"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Setup: %v, want an error naming %s", err, tc.want)
			}
		})
	}
	for name, env := range map[string]map[string]string{
		"nothing set":    {},
		"sdk disabled":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		"exporter none":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
		"only a service": {"OTEL_SERVICE_NAME": "x"},
	} {
		if Enabled(envOf(env)) {
			t.Errorf("%s: tracing is on", name)
		}
	}

	rcv := otlptest.Start(t)
	stop, err := Setup(ctx, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}), "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := Start(ctx, "procgraph.test", Procedure.String("proc__a__b"))
	End(span, "timeout")
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Name != "procgraph.test" || spans[0].Attributes["procgraph.procedure"] != "proc__a__b" ||
		spans[0].Attributes["procgraph.failure_class"] != "timeout" || !spans[0].Error {
		t.Fatalf("received %+v", spans)
	}
}
