package sandbox

import (
	"errors"
	"io"
	"os"
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
