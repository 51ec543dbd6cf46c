package sandbox

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestSpinReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sr := newSpinReader(r)
	tests := []struct {
		name  string
		write func()
		want  string
		err   error
	}{
		{"data already there", func() { w.Write([]byte("abc")) }, "abc", nil},
		{"data after a long wait parks and wakes", func() {
			go func() { time.Sleep(20 * time.Millisecond); w.Write([]byte("late")) }()
		}, "late", nil},
		{"deadline still applies", func() { r.SetReadDeadline(time.Now().Add(10 * time.Millisecond)) }, "", os.ErrDeadlineExceeded},
		{"end of file", func() { r.SetReadDeadline(time.Time{}); w.Close() }, "", io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			b := make([]byte, 16)
			n, err := sr.Read(b)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got := string(b[:n]); got != tc.want {
				t.Fatalf("read %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWorkerEnvironHoldsNoSecrets(t *testing.T) {
	t.Setenv("NEO4J_PASSWORD", "s3cret")
	t.Setenv("PROCGRAPH_TOKEN", "pgt_x")
	t.Setenv("GOMAXPROCS", "2")
	env := workerEnviron()
	joined := "\n" + strings.Join(env, "\n") + "\n"
	for _, secret := range []string{"NEO4J_PASSWORD", "PROCGRAPH_TOKEN"} {
		if strings.Contains(joined, "\n"+secret+"=") {
			t.Fatalf("the worker environment carries %s", secret)
		}
	}
	if !strings.Contains(joined, "\nGOMAXPROCS=2\n") {
		t.Fatalf("the Go runtime's settings must pass: %q", env)
	}
}
