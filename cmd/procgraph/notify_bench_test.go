package main

import (
	"net"
	"sort"
	"testing"
	"time"
)

// BenchmarkTurnWithWebhook: a turn that waits for an operator (submitted,
// then cancelled by its requester: two notifications) with no webhook, and
// with one whose receiver accepts connections and never answers
// (blackholed). The posts run off the request's path, so the two should
// take the same time (aim: within 5 %). Reports the p50 of the submit and
// the cancel together.
//
//	go test ./cmd/procgraph -run '^$' -bench TurnWithWebhook -benchtime 300x
func BenchmarkTurnWithWebhook(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, c) // never answered
		}
	}()
	for _, bc := range []struct {
		name  string
		extra []string
	}{
		{"none", nil},
		{"blackholed", []string{"--notify-webhook", "http://" + ln.Addr().String() + "/hook"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := mustTurnServer(b, mustUpstream(b), bc.extra...)
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := a.as(b, a.agent, "POST", "/v1/turns", killTurn("bench", i+1))
				if r.Status != 202 {
					b.Fatalf("submit: %d %s", r.Status, r.Body)
				}
				id := r.JSON(b)["turn"].(map[string]any)["id"].(string)
				if r := a.as(b, a.agent, "DELETE", "/v1/turns/"+id, nil); r.Status != 200 {
					b.Fatalf("cancel: %d %s", r.Status, r.Body)
				}
				times = append(times, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
