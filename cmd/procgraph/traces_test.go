package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/internal/telemetry/otlptest"
)

// TestTracesOfAnInvoke: with OTEL_EXPORTER_OTLP_ENDPOINT set, an invoke is
// a span carrying its procedure, version, decision and outcome, with a
// span for each upstream call beneath it, exported over OTLP/HTTP to a
// real receiver; no argument value, code or result is exported.
func TestTracesOfAnInvoke(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	code := "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b, \"marker-in-the-code\"]\n"
	name := mustCaptureName(t, s, code, "traces")
	r := s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 987654321}, "phase": "automatic"})
	if r.Status != 200 {
		t.Fatalf("invoke: %d %s", r.Status, r.Body)
	}
	s.Stop(t) // flushes the spans
	var run *otlptest.Span
	var calls []otlptest.Span
	for _, sp := range rcv.Spans() {
		switch sp.Name {
		case "procgraph.replay":
			if sp.Attributes["procgraph.procedure"] == name {
				run = &sp
			}
		case "procgraph.tool_call":
			calls = append(calls, sp)
		}
	}
	if run == nil {
		t.Fatalf("no replay span of %s among %+v", name, rcv.Spans())
	}
	for _, k := range []string{"procgraph.code_hash", "procgraph.decision"} {
		if run.Attributes[k] == "" {
			t.Errorf("the replay span has no %s: %v", k, run.Attributes)
		}
	}
	if run.Attributes["procgraph.outcome"] != "allowed" || run.Attributes["procgraph.reason"] != "read_only" || run.Error {
		t.Errorf("the replay span: %+v", run)
	}
	var under []string
	for _, c := range calls {
		if c.ParentID == run.SpanID && c.TraceID == run.TraceID {
			under = append(under, c.Attributes["procgraph.tool"])
		}
	}
	if strings.Join(under, ",") != "get_task_jobs_summary,get_retry_chain" {
		t.Errorf("tool call spans under the replay: %v", under)
	}
	for _, raw := range rcv.Raw() {
		for _, secret := range []string{"987654321", "marker-in-the-code", "tasks"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("an exported span carries %q (an argument value, code or a result)", secret)
			}
		}
	}
}

// TestTracesOfATurn: a turn's run is a span naming its block, decision and
// reason, with its upstream calls beneath it; nothing of its code or
// arguments is exported.
func TestTracesOfATurn(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	r := s.post(t, "/v1/turns", map[string]any{"code": "return tools.get_task_jobs_summary(task_id=123456789)\n", "session_id": "traces-turn", "phase": "automatic"})
	if r.Status != 200 {
		t.Fatalf("turn: %d %s", r.Status, r.Body)
	}
	s.Stop(t)
	var run *otlptest.Span
	for _, sp := range rcv.Spans() {
		if sp.Name == "procgraph.turn_run" {
			run = &sp
		}
	}
	if run == nil || run.Attributes["procgraph.decision"] == "" || run.Attributes["procgraph.reason"] != "read_only" || run.Error {
		t.Fatalf("the turn's span: %+v among %+v", run, rcv.Spans())
	}
	found := false
	for _, sp := range rcv.Spans() {
		found = found || (sp.Name == "procgraph.tool_call" && sp.ParentID == run.SpanID && sp.Attributes["procgraph.tool"] == "get_task_jobs_summary")
	}
	if !found {
		t.Errorf("no tool call span under the turn's: %+v", rcv.Spans())
	}
	for _, raw := range rcv.Raw() {
		if bytes.Contains(raw, []byte("123456789")) {
			t.Error("an exported span carries the turn's argument")
		}
	}
}

// TestTracesOfAFailedCall: an upstream call that fails is an error span
// with its failure class (tool_error), as is the replay it failed; the
// upstream's message, which may quote values, is not exported.
func TestTracesOfAFailedCall(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]\n", "traces-fail")
	up.mu.Lock()
	up.fail["get_retry_chain"] = "no chain for task 5551234"
	up.mu.Unlock()
	if r := s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}); r.Status != 200 {
		t.Fatalf("invoke: %d %s", r.Status, r.Body)
	}
	s.Stop(t)
	classes := map[string]string{}
	for _, sp := range rcv.Spans() {
		if sp.Error {
			classes[sp.Name+" "+sp.Attributes["procgraph.tool"]] = sp.Attributes["procgraph.failure_class"]
		}
	}
	if classes["procgraph.tool_call get_retry_chain"] != "tool_error" || classes["procgraph.replay "] != "tool_error" || len(classes) != 2 {
		t.Fatalf("error spans and their classes: %v", classes)
	}
	for _, raw := range rcv.Raw() {
		if bytes.Contains(raw, []byte("5551234")) {
			t.Error("an exported span carries the upstream's message")
		}
	}
}
