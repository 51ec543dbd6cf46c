package embedded

import (
	"bytes"
	"context"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// maxPart bounds every name, hash and usage key: bbolt keys are at most 32 KiB.
const maxPart = 4096

func invalid(field, format string, args ...any) error {
	return fault.Errorf(fault.CodeInvalid, format, args...).WithDetails("field", field)
}

// checkPart validates a key part: non-empty, bounded, without a 0 byte.
func checkPart(field, v string) error {
	switch {
	case v == "":
		return invalid(field, "%s is empty", field)
	case len(v) > maxPart:
		return invalid(field, "%s is longer than %d bytes", field, maxPart)
	case strings.IndexByte(v, 0) >= 0:
		return invalid(field, "%s contains a NUL byte", field)
	}
	return nil
}

func validateCapture(in *procedures.CaptureInput) error {
	if err := checkPart("name", in.Name); err != nil {
		return err
	}
	if len(in.Signature) == 0 {
		return invalid("signature", "signature is empty")
	}
	for _, t := range in.Signature {
		if err := checkPart("signature", t); err != nil {
			return err
		}
	}
	if err := checkPart("version.code_hash", in.Version.CodeHash); err != nil {
		return err
	}
	if in.Version.CanonicalHash != "" {
		if err := checkPart("version.canonical_hash", in.Version.CanonicalHash); err != nil {
			return err
		}
	}
	if !in.Version.Status.Valid() {
		return invalid("version.status", "status %q is neither %q nor %q", in.Version.Status, procedures.StatusSucceeded, procedures.StatusFailed)
	}
	if in.UsageKey == "" || len(in.UsageKey) > maxPart {
		return invalid("usage_key", "usage key is empty or longer than %d bytes", maxPart)
	}
	if in.At.IsZero() {
		return invalid("at", "capture time is missing")
	}
	if in.Cause != nil {
		if err := checkPart("cause.name", in.Cause.Name); err != nil {
			return err
		}
	}
	return nil
}

// Capture records one capture in one transaction (see procedures.Store).
func (s *Store) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	if err := validateCapture(&in); err != nil {
		return procedures.CaptureResult{}, err
	}
	// The page the answer needs (procedures.CaptureInput.Page), read
	// before the write.
	var page []*procedures.Procedure
	var total int
	if in.Page != nil {
		if !in.Page.Bounded {
			return procedures.CaptureResult{}, fault.Errorf(fault.CodeInvalid, "embedded store: a capture reads a Bounded page only")
		}
		var err error
		if page, total, _, err = s.find(ctx, *in.Page, false); err != nil {
			return procedures.CaptureResult{}, err
		}
	}
	var res procedures.CaptureResult
	var docs searchDocs
	err := s.write(ctx, func(tx *bolt.Tx) error {
		var err error
		docs = searchDocs{}
		if err := s.sameCatalogue(tx, in.Catalogue); err != nil {
			return err
		}
		if res, err = s.captureTx(tx, &in); err != nil {
			return err
		}
		if err := searchAdd(tx, &in, &docs); err != nil {
			return err
		}
		res.Procedure, err = s.loadProcedure(tx, in.Name)
		return err
	})
	if err != nil {
		return procedures.CaptureResult{}, err
	}
	s.indexDocs(&docs)
	res.PageRead, res.Page, res.PageTotal = in.Page != nil, page, total
	return res, nil
}

// sameCatalogue is nil when cat is nil or the catalogue stored in tx (by
// revision), else procedures.CatalogueChanged: a capture prepared under
// cat is written under it (procedures.CaptureInput.Catalogue).
func (s *Store) sameCatalogue(tx *bolt.Tx, cat *procedures.Catalogue) error {
	if cat == nil {
		return nil
	}
	stored, err := s.catalogueIn(tx)
	if err != nil {
		return err
	}
	if stored.Revision != cat.Revision {
		return procedures.CatalogueChanged()
	}
	return nil
}

// CaptureBatch applies captures in one transaction, with Capture's rules: all
// or none. It builds large fixtures and imports quickly.
func (s *Store) CaptureBatch(ctx context.Context, ins []procedures.CaptureInput) error {
	for i := range ins {
		if err := validateCapture(&ins[i]); err != nil {
			return err
		}
	}
	var docs searchDocs
	err := s.update(ctx, func(tx *bolt.Tx) error {
		docs = searchDocs{}
		for i := range ins {
			if _, err := s.captureTx(tx, &ins[i]); err != nil {
				return err
			}
			if err := searchAdd(tx, &ins[i], &docs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.indexDocs(&docs)
	return nil
}

func (s *Store) captureTx(tx *bolt.Tx, in *procedures.CaptureInput) (procedures.CaptureResult, error) {
	var res procedures.CaptureResult
	at := ms(in.At)
	rec, err := s.getProc(tx, in.Name)
	if err != nil {
		return res, err
	}
	authChanged := false // what a grant decides by changed (bumpAuth)
	if rec == nil {
		res.Created = true
		authChanged = true
		rec = &procRecord{Name: in.Name, Signature: in.Signature, CreatedAt: at}
		if err := createProcIndexes(tx, rec); err != nil {
			return res, err
		}
	} else if !slices.Equal(rec.Signature, in.Signature) {
		return res, fault.Errorf(fault.CodeConflict, "procedure %s is stored with signature %v, not %v", in.Name, rec.Signature, in.Signature).
			WithDetails("reason", audit.ReasonSignatureMismatch)
	}

	ver, err := s.versionOfProgram(tx, in)
	if err != nil {
		return res, err
	}
	versionChanged := ver == nil // an existing version is rewritten only when it changed
	if ver == nil {
		res.VersionCreated = true
		v := in.Version
		if v.CapturedAt.IsZero() {
			v.CapturedAt = in.At
		}
		ver = newVersionRecord(v)
		if ver.Baseline == nil {
			cat, err := s.catalogueIn(tx)
			if err != nil {
				return res, err
			}
			ver.Baseline = procedures.BaselineOf(in.Signature, cat)
		}
	} else if in.Version.Status == procedures.StatusSucceeded && ver.Status != procedures.StatusSucceeded {
		ver.Status = procedures.StatusSucceeded // the same code has now succeeded
		versionChanged = true
		// The current version's status is what a grant on it decides by.
		authChanged = authChanged || rec.Current == ver.CodeHash
	}

	cur := ver
	if rec.Current != ver.CodeHash {
		var current procedures.Status // "" while the procedure has no current version
		if rec.Current != "" {
			if cur, err = s.getVersion(tx, in.Name, rec.Current); err != nil {
				return res, err
			}
			if cur == nil {
				return res, fault.Errorf(fault.CodeInternal, "embedded store: procedure %s lost its current version %s", in.Name, rec.Current)
			}
			current = cur.Status
		}
		if procedures.BecomesCurrent(current, ver.Status) {
			rec.Current, cur, rec.Demoted = ver.CodeHash, ver, false
			authChanged = true
		}
	}

	if added, err := addKey(tx, bKeysVersion, key(in.Name, ver.CodeHash, in.UsageKey)); err != nil {
		return res, err
	} else if added {
		ver.Frequency++
		versionChanged = true
	}
	succeeded := in.Version.Status == procedures.StatusSucceeded
	if succeeded {
		added, err := addKey(tx, bKeysProc, key(in.Name, in.UsageKey))
		if err != nil {
			return res, err
		}
		if added {
			rec.Frequency++
			res.Counted = true
		}
	}
	if rec.Summary == "" {
		rec.Summary = in.Version.Summary
	}
	if in.Cause != nil {
		if err := linkCause(tx, in.Cause.Name, in.Cause.Description, in.Name); err != nil {
			return res, err
		}
		if succeeded {
			if err := countEdge(tx, in.Cause.Name, in.Name, in.UsageKey); err != nil {
				return res, err
			}
		}
	}
	rec.UpdatedAt = at
	if versionChanged {
		if err := s.putVersion(tx, in.Name, ver); err != nil {
			return res, err
		}
	}
	if err := putProc(tx, rec, cur); err != nil {
		return res, err
	}
	if authChanged {
		if err := bumpAuth(tx); err != nil {
			return res, err
		}
	}
	res.CodeHash = ver.CodeHash
	if !res.Created {
		return res, nil // a signature, and so what classifies, never changes
	}
	affected, err := procedures.Affected(txClasses{s, tx}, []string{in.Name})
	if err != nil {
		return res, err
	}
	return res, s.reclassify(tx, append([]string{in.Name}, affected...))
}

// createProcIndexes counts a new procedure and indexes its tools and references.
func createProcIndexes(tx *bolt.Tx, rec *procRecord) error {
	meta := tx.Bucket(bMeta)
	if err := meta.Put(metaCount, u64(getU64(meta.Get(metaCount))+1)); err != nil {
		return err
	}
	for _, t := range rec.Signature {
		if err := tx.Bucket(bToolProcs).Put(key(t, rec.Name), nil); err != nil {
			return err
		}
		if procedures.IsProcName(t) {
			if err := tx.Bucket(bRefs).Put(key(t, rec.Name), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateUse(in *procedures.UseInput) error {
	if err := checkPart("name", in.Name); err != nil {
		return err
	}
	if in.UsageKey == "" || len(in.UsageKey) > maxPart {
		return invalid("usage_key", "usage key is empty or longer than %d bytes", maxPart)
	}
	if in.At.IsZero() {
		return invalid("at", "use time is missing")
	}
	if in.Cause != "" {
		if err := checkPart("cause", in.Cause); err != nil {
			return err
		}
	}
	if len(in.CodeHash) > maxPart || strings.IndexByte(in.CodeHash, 0) >= 0 {
		return invalid("code_hash", "code hash is malformed")
	}
	if in.Run != nil {
		if _, ok := in.Run.Delta(); !ok {
			return invalid("run", "run failure class %q is not one of %v", in.Run.Failure, health.FailureClasses)
		}
		if in.FailedReplay() {
			return invalid("run", "a failed run is not a replay")
		}
	}
	if err := health.CheckDemoteAfter(in.DemoteAfter); err != nil {
		return invalid("demote_after", "%v", err)
	}
	if err := in.CheckRecording(); err != nil {
		return err
	}
	return nil
}

// RecordUse counts a use of an existing procedure (see procedures.Store).
func (s *Store) RecordUse(ctx context.Context, in procedures.UseInput) (procedures.UseResult, error) {
	if err := validateUse(&in); err != nil {
		return procedures.UseResult{}, err
	}
	var res procedures.UseResult
	err := s.write(ctx, func(tx *bolt.Tx) error {
		var err error
		res, err = s.use(tx, in)
		return err
	})
	if err != nil {
		return procedures.UseResult{}, err
	}
	return res, nil
}

// use counts the use in (validated) in tx: RecordUse's transaction.
func (s *Store) use(tx *bolt.Tx, in procedures.UseInput) (procedures.UseResult, error) {
	var res procedures.UseResult
	err := func() error {
		rec, err := s.mustProc(tx, in.Name)
		if err != nil {
			return err
		}
		hash := in.CodeHash
		if hash == "" {
			hash = rec.Current
		}
		ver, err := s.mustVersion(tx, in.Name, hash)
		if err != nil {
			return err
		}
		if in.Recording != nil {
			if err := putRecording(tx, in.Name, hash, in.Recording, in.KeepRecordings); err != nil {
				return err
			}
		}
		if in.Run != nil {
			d, _ := in.Run.Delta() // validateUse checked it
			ver.Health = d.Apply(ver.Health)
			was := rec.Demoted
			rec.Demoted = health.DemotedAfter(was, hash == rec.Current, in.Run.Failure,
				health.HealthOf(ver.Health), in.DemoteAfter)
			res.Demotion = health.DemotionOf(was, rec.Demoted)
			if res.Demotion != health.DemotionNone {
				if err := bumpAuth(tx); err != nil {
					return err
				}
			}
			if err := putHealth(tx, key(in.Name, hash), ver.Health); err != nil {
				return err
			}
			if in.HealthOnly() {
				if res.Demotion != health.DemotionNone {
					if err := putProc(tx, rec, ver); err != nil {
						return err
					}
				}
				res.Procedure, err = s.loadProcedure(tx, in.Name)
				return err
			}
		}
		versionChanged := false
		if added, err := addKey(tx, bKeysVersion, key(in.Name, hash, in.UsageKey)); err != nil {
			return err
		} else if added {
			ver.Frequency++
			versionChanged = true
		}
		if versionChanged {
			if err := s.putVersion(tx, in.Name, ver); err != nil {
				return err
			}
		}
		if res.Counted, err = addKey(tx, bKeysProc, key(in.Name, in.UsageKey)); err != nil {
			return err
		} else if res.Counted {
			rec.Frequency++
		}
		if in.Cause != "" {
			if err := linkCause(tx, in.Cause, "", in.Name); err != nil {
				return err
			}
			if err := countEdge(tx, in.Cause, in.Name, in.UsageKey); err != nil {
				return err
			}
		}
		at := ms(in.At)
		if in.Replay {
			rec.UseCount++
			if rec.LastUsedAt == nil || *rec.LastUsedAt < at {
				rec.LastUsedAt = &at // replays may finish out of order
			}
		}
		rec.UpdatedAt = at
		cur := ver
		if hash != rec.Current {
			if cur, err = s.getVersion(tx, in.Name, rec.Current); err != nil {
				return err
			}
		}
		if err := putProc(tx, rec, cur); err != nil {
			return err
		}
		res.Procedure, err = s.loadProcedure(tx, in.Name)
		return err
	}()
	return res, err
}

// versionOfProgram is the version a capture of in counts on: the one of
// its code hash, else the first one stored with its canonical hash (the
// same program in another text: in.Version.CodeHash becomes that
// version's), else nil (a new version).
func (s *Store) versionOfProgram(tx *bolt.Tx, in *procedures.CaptureInput) (*versionRecord, error) {
	ver, err := s.getVersion(tx, in.Name, in.Version.CodeHash)
	if ver != nil || err != nil || in.Version.CanonicalHash == "" {
		return ver, err
	}
	h := tx.Bucket(bCanonical).Get(key(in.Name, in.Version.CanonicalHash))
	if h == nil {
		return nil, nil
	}
	in.Version.CodeHash = string(h)
	return s.getVersion(tx, in.Name, in.Version.CodeHash)
}

// indexCanonical keeps the canonical index of version r of procedure
// name: a program's entry names its earliest captured version (then the
// least code hash), which captures of the program count on, as Neo4j's
// capture.cypher picks. A version without a canonical hash (a dump's)
// clears metaCanonical, so that the next open computes it.
func (s *Store) indexCanonical(tx *bolt.Tx, name string, r *versionRecord) error {
	if r.CanonicalHash == "" {
		return tx.Bucket(bMeta).Delete(metaCanonical)
	}
	idx := tx.Bucket(bCanonical)
	ck := key(name, r.CanonicalHash)
	if held := idx.Get(ck); held != nil && string(held) != r.CodeHash {
		first, err := s.getVersion(tx, name, string(held))
		if err != nil {
			return err
		}
		if first != nil && (first.CapturedAt < r.CapturedAt || (first.CapturedAt == r.CapturedAt && first.CodeHash < r.CodeHash)) {
			return nil
		}
	}
	return idx.Put(ck, []byte(r.CodeHash))
}

// upgradeCanonical gives every version stored without a canonical hash
// (before versions were keyed by it, or carried by a dump, which does not
// hold it) the hash of its code under the stored catalogue
// (procedures.CanonicalHashOf), once: metaCanonical marks it done. Versions
// of one program stored apart before stay apart; captures count on the
// earliest (indexCanonical).
func (s *Store) upgradeCanonical(tx *bolt.Tx) error {
	meta := tx.Bucket(bMeta)
	if meta.Get(metaCanonical) != nil {
		return nil
	}
	cat, err := s.catalogueIn(tx)
	if err != nil {
		return err
	}
	type missing struct{ name, hash string }
	var todo []missing
	c := tx.Bucket(bVersions).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !bytes.Contains(v, []byte(`"canonical_hash":`)) {
			name, hash, _ := bytes.Cut(k, []byte{0})
			todo = append(todo, missing{string(name), string(hash)})
		}
	}
	for _, m := range todo {
		r, err := s.getVersion(tx, m.name, m.hash)
		if err != nil || r == nil || r.CanonicalHash != "" {
			if err != nil {
				return err
			}
			continue
		}
		if r.CanonicalHash, err = procedures.CanonicalHashOf(r.Code, r.Dialect, cat); err != nil {
			continue // code that no longer analyses keeps no canonical hash: matched by code hash only
		}
		if err := s.putVersion(tx, m.name, r); err != nil {
			return err
		}
	}
	return meta.Put(metaCanonical, []byte("1"))
}
