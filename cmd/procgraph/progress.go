package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressInterval is how often the progress line is redrawn.
const progressInterval = time.Second

// startProgress tells the person at w that the command waits for what,
// until the returned stop is called (more than once is fine). On a
// terminal it is one line redrawn in place every second with the time
// waited so far, cleared by stop; elsewhere (a log, a pipe) it is one
// plain line, written once, so that nothing is redrawn into a file.
func startProgress(w io.Writer, what string) (stop func()) {
	if !isTerminal(w) {
		fmt.Fprintf(w, "procgraph: %s\n", what)
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	draw := func() {
		fmt.Fprintf(w, "\r\x1b[K%s… %s", what, time.Since(start).Truncate(time.Second))
	}
	draw()
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				draw()
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
