package dump

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/search"
)

// MaxLine bounds one line of a dump (a version's code and schemas).
const MaxLine = 64 << 20

// dumpLine is the envelope of every line: {"type": ..., "data": ...}.
type dumpLine struct {
	Type Type            `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Writer writes a dump: NewWriter, then it is the Sink of
// Store.Dump, then Close writes the trailer.
type Writer struct {
	w       *bufio.Writer
	h       hash.Hash
	source  string
	version string
	records int64
	counts  Counts
	began   bool
}

// NewWriter returns a writer of a dump of the store named source, made
// by procgraph version version.
func NewWriter(w io.Writer, source, version string) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), h: sha256.New(), source: source, version: version, counts: Counts{}}
}

func (d *Writer) line(t Type, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fault.Errorf(fault.CodeInternal, "dump: %s record does not encode: %v", t, err)
	}
	b, err := json.Marshal(dumpLine{Type: t, Data: data})
	if err != nil {
		return fault.Errorf(fault.CodeInternal, "dump: %s record does not encode: %v", t, err)
	}
	b = append(b, '\n')
	if t != TypeTrailer {
		d.h.Write(b)
	}
	if _, err := d.w.Write(b); err != nil {
		return fault.Errorf(fault.CodeUnavailable, "dump: writing: %v", err)
	}
	return nil
}

// Begin writes the header.
func (d *Writer) Begin(counts Counts) error {
	d.began = true
	return d.line(TypeHeader, HeaderRecord{Format: Format, Source: d.source, ProcgraphVersion: d.version,
		Counts: counts, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)})
}

// Record writes one record.
func (d *Writer) Record(r Record) error {
	v, err := r.payload()
	if err != nil {
		return err
	}
	d.records++
	d.counts[r.Type]++
	return d.line(r.Type, v)
}

// Close writes the trailer and flushes.
func (d *Writer) Close() error {
	if !d.began {
		return fault.Errorf(fault.CodeInternal, "dump: closed before it began")
	}
	if err := d.line(TypeTrailer, TrailerRecord{Records: d.records, Counts: d.counts, SHA256: hex.EncodeToString(d.h.Sum(nil))}); err != nil {
		return err
	}
	if err := d.w.Flush(); err != nil {
		return fault.Errorf(fault.CodeUnavailable, "dump: writing: %v", err)
	}
	return nil
}

// payload is the record's set field, checked against its type.
func (r Record) payload() (any, error) {
	var v any
	switch r.Type {
	case TypeCatalogue:
		if r.Catalogue != nil {
			v = r.Catalogue
		}
	case TypeCause:
		if r.Cause != nil {
			v = r.Cause
		}
	case TypeProcedure:
		if r.Procedure != nil {
			c := *r.Procedure
			c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
			if c.LastUsedAt != nil {
				t := c.LastUsedAt.UTC()
				c.LastUsedAt = &t
			}
			if c.Grant != nil {
				g := *c.Grant
				g.GrantedAt = g.GrantedAt.UTC()
				c.Grant = &g
			}
			if c.Retired != nil {
				rt := *c.Retired
				rt.RetiredAt = rt.RetiredAt.UTC()
				c.Retired = &rt
			}
			c.SearchParts = nilIfEmpty(c.SearchParts)
			v = &c
		}
	case TypeVersion:
		if r.Version != nil {
			c := *r.Version
			c.Parameters, c.Warnings = nilIfEmpty(c.Parameters), nilIfEmpty(c.Warnings)
			if len(c.InputSchema) == 0 {
				c.InputSchema = nil
			}
			if len(c.Metadata) == 0 {
				c.Metadata = nil
			}
			c.CapturedAt = c.CapturedAt.UTC()
			if c.Baseline != nil && c.Baseline.Tools == nil {
				c.Baseline = &procedures.Baseline{Tools: []procedures.ToolContract{}}
			}
			v = &c
		}
	case TypeRecording:
		if r.Recording != nil {
			c := *r.Recording
			c.RecordedAt = c.RecordedAt.UTC()
			v = &c
		}
	case TypeUsage:
		if r.Usage != nil {
			v = r.Usage
		}
	case TypeEdge:
		if r.Edge != nil {
			v = r.Edge
		}
	case TypeDecision:
		if r.Decision != nil {
			c := *r.Decision
			c.At = c.At.UTC() // allowed_tools as stored: [] stays [], null stays null
			v = &c
		}
	case TypeApproval:
		if r.Approval != nil {
			c := *r.Approval
			c.RequestedAt, c.Deadline = c.RequestedAt.UTC(), c.Deadline.UTC()
			if c.Resolution != nil {
				res := *c.Resolution
				res.At = res.At.UTC()
				c.Resolution = &res
			}
			v = &c
		}
	case TypePolicy:
		if r.Policy != nil {
			c := *r.Policy
			c.SetAt = c.SetAt.UTC()
			v = &c
		}
	}
	if v == nil {
		return nil, fault.Errorf(fault.CodeInternal, "dump: record of type %q without its value", r.Type)
	}
	return v, nil
}

// v1SearchParts is what a format 1 procedure record's search document is
// taken to be: SearchParts of its signature and summary (format 1 did not
// carry the parts; its versions' and causes' texts are not recovered).
func v1SearchParts(p *ProcedureRecord) []string {
	in := procedures.CaptureInput{Name: p.Name, Signature: p.Signature}
	in.Version.Summary = p.Summary
	return nilIfEmpty(search.MergeParts(nil, procedures.SearchParts(in)))
}

// nilIfEmpty is s, nil when empty: stores answer either for "none", a dump
// always says null.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// Reader reads and validates a dump line by line: every error names
// the line. Next returns io.EOF after a valid trailer; a dump that ends
// before its trailer, lines out of order, repeated, unknown or corrupt, and
// a checksum or count that does not match are fault.CodeInvalid.
type Reader struct {
	r       *bufio.Reader
	h       hash.Hash
	line    int64
	buf     []byte
	header  *HeaderRecord
	trailer *TrailerRecord
	counts  Counts
	records int64
	order   dumpOrder
}

// NewReader returns a reader of the dump r; it reads the header at once.
func NewReader(r io.Reader) (*Reader, error) {
	d := &Reader{r: bufio.NewReaderSize(r, 256<<10), h: sha256.New(), counts: Counts{}, order: dumpOrder{causes: map[string]bool{}}}
	t, data, err := d.next()
	if err != nil {
		return nil, err
	}
	if t != TypeHeader {
		return nil, d.errf("the dump starts with a %q record, not its header", t)
	}
	var h HeaderRecord
	if err := d.decode(data, &h); err != nil {
		return nil, err
	}
	if h.Format != Format && h.Format != FormatV2 && h.Format != FormatV1 {
		return nil, d.errf("dump format %d; this procgraph reads formats %d to %d", h.Format, FormatV1, Format)
	}
	if err := checkHeaderBounds(&h); err != nil {
		return nil, d.boundErr(err)
	}
	d.header = &h
	return d, nil
}

// Header is the dump's header.
func (d *Reader) Header() HeaderRecord { return *d.header }

// Trailer is the dump's trailer, once Next returned io.EOF.
func (d *Reader) Trailer() *TrailerRecord { return d.trailer }

// Line is the number of the line Next last returned (the header is line 1).
func (d *Reader) Line() int64 { return d.line }

// LineBytes is the length of the line Next last returned.
func (d *Reader) LineBytes() int { return len(d.buf) }

func (d *Reader) errf(format string, args ...any) error {
	return fault.Errorf(fault.CodeInvalid, "dump line %d: %s", d.line, fmt.Sprintf(format, args...)).WithDetails("line", d.line)
}

// boundErr is err, a field past its bound (checkBounds), as the error of
// this line: the line and the field named.
func (d *Reader) boundErr(err error) error {
	if err == nil {
		return nil
	}
	e := fault.Errorf(fault.CodeInvalid, "dump line %d: %s", d.line, fault.ErrorMessage(err)).WithDetails("line", d.line)
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Details["field"] != nil {
		e = e.WithDetails("field", fe.Details["field"])
	}
	return e
}

// next reads one line and its envelope, hashing it.
func (d *Reader) next() (Type, []byte, error) {
	d.buf = d.buf[:0]
	for {
		part, err := d.r.ReadSlice('\n')
		d.buf = append(d.buf, part...)
		if len(d.buf) > MaxLine {
			d.line++
			return "", nil, d.errf("longer than %d bytes", MaxLine)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			d.line++
			if len(d.buf) == 0 {
				return "", nil, d.errf("the dump ends before its trailer (truncated)")
			}
			return "", nil, d.errf("the dump ends in the middle of a line (truncated)")
		}
		return "", nil, fault.Errorf(fault.CodeUnavailable, "dump: reading line %d: %v", d.line+1, err)
	}
	d.line++
	raw := d.buf[:len(d.buf)-1]
	var env dumpLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return "", nil, d.errf("not a dump record: %v", err)
	}
	if env.Type != TypeTrailer {
		d.h.Write(d.buf)
	}
	return env.Type, env.Data, nil
}

func (d *Reader) decode(data []byte, v any) error {
	if len(data) == 0 || string(data) == "null" {
		return d.errf("record without data")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return d.errf("corrupt record: %v", err)
	}
	return nil
}

// Next returns the next record, validated and in order; io.EOF after the
// trailer, once the checksum and counts matched.
func (d *Reader) Next() (Record, error) {
	if d.trailer != nil {
		return Record{}, io.EOF
	}
	t, data, err := d.next()
	if err != nil {
		return Record{}, err
	}
	r := Record{Type: t}
	switch t {
	case TypeTrailer:
		return r, d.finish(data)
	case TypeCatalogue:
		var c procedures.Catalogue
		if err = d.decode(data, &c); err == nil {
			var valid *procedures.Catalogue
			if valid, err = procedures.NewCatalogue(c.Tools); err != nil {
				err = d.errf("invalid catalogue: %v", err)
			} else if valid.Revision != c.Revision {
				err = d.errf("catalogue revision %q is not its tools' revision %q", c.Revision, valid.Revision)
			}
			r.Catalogue = valid
		}
	case TypeCause:
		r.Cause = &CauseRecord{}
		err = d.decode(data, r.Cause)
	case TypeProcedure:
		r.Procedure = &ProcedureRecord{}
		err = d.decode(data, r.Procedure)
		if err == nil && d.header.Format == FormatV1 {
			if r.Procedure.SearchParts != nil {
				err = d.errf("search_parts in a format %d dump", FormatV1)
			}
			r.Procedure.SearchParts = v1SearchParts(r.Procedure)
		}
	case TypeVersion:
		r.Version = &VersionRecord{}
		err = d.decode(data, r.Version)
		if h := r.Version.Health; err == nil && h != nil {
			if d.header.Format < Format {
				err = d.errf("health in a format %d dump", d.header.Format)
			} else if why := h.check(); why != "" {
				err = d.errf("version %s of %s: invalid health: %s", r.Version.CodeHash, r.Version.Procedure, why)
			}
		}
		if err == nil && r.Version.Baseline != nil && d.header.Format < Format {
			err = d.errf("a baseline in a format %d dump", d.header.Format)
		}
	case TypeRecording:
		r.Recording = &RecordingRecord{}
		err = d.decode(data, r.Recording)
		if err == nil && d.header.Format < Format {
			err = d.errf("a recording in a format %d dump", d.header.Format)
		}
	case TypeUsage:
		r.Usage = &UsageRecord{}
		err = d.decode(data, r.Usage)
	case TypeEdge:
		r.Edge = &EdgeRecord{}
		err = d.decode(data, r.Edge)
	case TypeDecision:
		r.Decision = &audit.Decision{}
		err = d.decode(data, r.Decision)
	case TypeApproval:
		r.Approval = &gate.TurnRecord{}
		err = d.decode(data, r.Approval)
	case TypePolicy:
		r.Policy = &PolicyRecord{}
		err = d.decode(data, r.Policy)
	case TypeHeader:
		err = d.errf("a second header")
	default:
		err = d.errf("unknown record type %q", t)
	}
	if err == nil {
		err = d.boundErr(checkBounds(r))
	}
	if err != nil {
		return Record{}, err
	}
	if msg := d.order.check(r); msg != "" {
		return Record{}, d.errf("%s", msg)
	}
	switch t {
	case TypeVersion, TypeUsage, TypeEdge, TypeRecording:
		r.Group = d.order.proc
	}
	if msg := checkContent(r); msg != "" {
		return Record{}, d.errf("%s", msg)
	}
	d.records++
	d.counts[t]++
	return r, nil
}

func (d *Reader) finish(data []byte) error {
	var tr TrailerRecord
	if err := d.decode(data, &tr); err != nil {
		return err
	}
	if msg := d.order.end(); msg != "" {
		return d.errf("%s", msg)
	}
	if sum := hex.EncodeToString(d.h.Sum(nil)); tr.SHA256 != sum {
		return d.errf("checksum mismatch: the trailer says %s, the lines before it hash to %s", tr.SHA256, sum)
	}
	if tr.Records != d.records || !countsEqual(tr.Counts, d.counts) {
		return d.errf("the trailer counts %d records %v; the dump holds %d %v", tr.Records, tr.Counts, d.records, d.counts)
	}
	if _, err := d.r.ReadByte(); err == nil {
		d.line++
		return d.errf("data after the trailer")
	}
	d.trailer = &tr
	return io.EOF
}

func countsEqual(a, b Counts) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// Validate reads the whole dump r and returns its header and trailer,
// or the first error (naming its line).
func Validate(r io.Reader) (HeaderRecord, TrailerRecord, error) {
	d, err := NewReader(r)
	if err != nil {
		return HeaderRecord{}, TrailerRecord{}, err
	}
	for {
		if _, err := d.Next(); errors.Is(err, io.EOF) {
			return d.Header(), *d.trailer, nil
		} else if err != nil {
			return HeaderRecord{}, TrailerRecord{}, err
		}
	}
}
