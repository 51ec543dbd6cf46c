package embedded

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/procedures"
)

// Granted returns the procedures whose stored grant is Held, by name: the
// grants bucket holds the procedures with a grant (by name), so it reads
// those only.
func (s *Store) Granted(ctx context.Context) ([]*procedures.Procedure, error) {
	var out []*procedures.Procedure
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = out[:0]
		r := s.newProcReader(tx)
		return tx.Bucket(bGrants).ForEach(func(name, _ []byte) error {
			p, err := r.loadKey(name)
			if err == nil && p.Grant.Held() {
				out = append(out, p)
			}
			return err
		})
	})
	return out, err
}
