package embedded

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// bumpAuth moves the store's authorization revision (AuthRevision) in tx:
// every write that can change what a grant or a session policy decides
// calls it in its own transaction — a grant or revoke, a policy set or
// deleted, a promotion, a retirement, a demotion set or lifted, a
// catalogue, a rebaseline, a capture that creates a procedure or changes
// its current version or that version's status, an import's batch.
func bumpAuth(tx *bolt.Tx) error {
	meta := tx.Bucket(bMeta)
	return meta.Put(metaAuthRevision, u64(getU64(meta.Get(metaAuthRevision))+1))
}

// AuthRevision returns the store's authorization revision (0 before the
// first write that moves it): one read of one value (see
// procedures.GrantStore).
func (s *Store) AuthRevision(ctx context.Context) (uint64, error) {
	var rev uint64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		rev = getU64(tx.Bucket(bMeta).Get(metaAuthRevision))
		return nil
	})
	return rev, err
}
