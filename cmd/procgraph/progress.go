package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/procgraph/procgraph/dump"
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

// recordsBar is the progress of a command that reads or writes a dump's
// records (import, export, restore, backup), told to the person at w: on a
// terminal a bar (count, rate, time) that stays on screen with its totals
// when the command is done; elsewhere (a log, a pipe) a line at each tenth
// of the records, "DONE n of total records". Both stores show the same.
type recordsBar struct {
	w        io.Writer
	doing    string // the bar's description: "importing"
	done     string // the log lines' verb: "imported"
	bar      *progressbar.ProgressBar
	next     int64 // the tenth of the records the next log line waits for
	mu       sync.Mutex
	terminal bool
}

// newRecordsBar is the progress of records being doing ("exporting") at
// w; done ("exported") names them in the log lines.
func newRecordsBar(w io.Writer, doing, done string) *recordsBar {
	return &recordsBar{w: w, doing: doing, done: done, terminal: isTerminal(w)}
}

// validated starts the bar at the dump's trailer's total (import: once
// the whole dump is checked, before anything is written).
func (b *recordsBar) validated(_ dump.HeaderRecord, t dump.TrailerRecord) { b.progress(0, t.Records) }

// progress tells done records of total.
func (b *recordsBar) progress(done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.terminal {
		if total > 0 && done*10/total >= b.next && done < total {
			if done > 0 {
				fmt.Fprintf(b.w, "%s %d of %d records\n", b.done, done, total)
			}
			b.next = done*10/total + 1
		}
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions64(max(total, 1), progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.doing),
			progressbar.OptionShowCount(), progressbar.OptionSetItsString("records"), progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetWidth(30), progressbar.OptionShowElapsedTimeOnFinish(), progressbar.OptionSetRenderBlankState(true))
	}
	if done > b.bar.GetMax64() {
		// Neo4j exports in read-committed pages: more records than it
		// counted when it began.
		b.bar.ChangeMax64(done)
	}
	_ = b.bar.Set64(done)
}

// finish ends the bar: when ok it is drawn whole, with the totals, and
// left on screen; otherwise it is left as far as it got. Either way the
// line is ended, so what follows starts on a line of its own.
func (b *recordsBar) finish(ok bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		return
	}
	if ok {
		if b.bar.GetMax64() > 0 && b.bar.State().CurrentNum < b.bar.GetMax64() {
			// Fewer records than counted at the start (Neo4j): the total is what was written.
			b.bar.ChangeMax64(max(b.bar.State().CurrentNum, 1))
		}
		_ = b.bar.Finish()
	}
	fmt.Fprintln(b.w)
	b.bar = nil
}
