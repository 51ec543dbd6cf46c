package procedures_test

import (
	"errors"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// TestPruneInBatches: the loop runs batches until one deletes fewer than
// the batch size, adds up what each deleted, stops at the first error
// keeping the total so far, and refuses a zero time without deleting.
func TestPruneInBatches(t *testing.T) {
	errStore := errors.New("store failed")
	tests := []struct {
		name      string
		before    time.Time
		records   int64 // older than before
		failAt    int   // the call that fails (1-based), 0 for none
		wantTotal int64
		wantCalls int
		wantErr   func(error) bool
	}{
		{name: "none", before: time.Unix(100, 0), records: 0, wantTotal: 0, wantCalls: 1},
		{name: "less than a batch", before: time.Unix(100, 0), records: 2, wantTotal: 2, wantCalls: 1},
		{name: "exactly a batch", before: time.Unix(100, 0), records: 3, wantTotal: 3, wantCalls: 2},
		{name: "several batches", before: time.Unix(100, 0), records: 10, wantTotal: 10, wantCalls: 4},
		{name: "failure after a batch", before: time.Unix(100, 0), records: 10, failAt: 2, wantTotal: 3, wantCalls: 2,
			wantErr: func(err error) bool { return errors.Is(err, errStore) }},
		{name: "zero time", records: 10, wantTotal: 0, wantCalls: 0,
			wantErr: func(err error) bool { return fault.ErrorCode(err) == fault.CodeInvalid }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			left, calls := tc.records, 0
			total, err := procedures.PruneInBatches(tc.before, 3, func(batch int) (int64, error) {
				calls++
				if calls == tc.failAt {
					return 0, errStore
				}
				n := min(left, int64(batch))
				left -= n
				return n, nil
			})
			if total != tc.wantTotal || calls != tc.wantCalls {
				t.Errorf("total %d after %d calls, want %d after %d", total, calls, tc.wantTotal, tc.wantCalls)
			}
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !tc.wantErr(err) {
				t.Errorf("error %v", err)
			}
		})
	}
}
