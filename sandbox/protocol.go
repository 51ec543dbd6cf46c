package sandbox

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// The parent and a worker exchange frames over the worker's stdin and
// stdout: a 4-byte big-endian length, then that many bytes of one JSON
// message. Values (arguments, tool results, the block's result) travel as raw
// JSON written by appendJSON, so floats stay floats.
//
//	parent → worker  {"run": runMsg}
//	worker → parent  {"call": callMsg}         (zero or more, one at a time)
//	parent → worker  {"call_result": resultMsg} (one per call)
//	parent → worker  {"cancel": {"run": id}}   (any time; the run ends with timeout)
//	worker → parent  {"done": doneMsg}
//
// A worker says {"hello": ...} once at start. It never sees the allow-set:
// it asks, and the parent decides.

// maxFrame bounds one frame either way. A larger frame from a worker is a
// protocol violation and the worker is killed.
const maxFrame = 64 << 20

// message is one frame; exactly one field is set.
type message struct {
	Hello      *helloMsg  `json:"hello,omitempty"`
	Run        *runMsg    `json:"run,omitempty"`
	Call       *callMsg   `json:"call,omitempty"`
	CallResult *resultMsg `json:"call_result,omitempty"`
	Cancel     *cancelMsg `json:"cancel,omitempty"`
	Done       *doneMsg   `json:"done,omitempty"`
}

type helloMsg struct {
	PID    int    `json:"pid"`
	Mapped uint64 `json:"mapped"` // memory the Go runtime has mapped, idle
}

type runMsg struct {
	ID       uint64          `json:"id"`
	Filename string          `json:"filename"`
	Source   string          `json:"source"`
	Args     json.RawMessage `json:"args"`
	Limits   Limits          `json:"limits"`
}

type callMsg struct {
	Run  uint64          `json:"run"`
	ID   uint64          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

type resultMsg struct {
	Run   uint64          `json:"run"`
	ID    uint64          `json:"id"`
	Value json.RawMessage `json:"value,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

type cancelMsg struct {
	Run uint64 `json:"run"`
}

type doneMsg struct {
	Run    uint64          `json:"run"`
	Value  json.RawMessage `json:"value,omitempty"`
	Output string          `json:"output,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	Mapped uint64          `json:"mapped"` // memory the Go runtime has mapped, after the run
}

// frameWriter writes frames, reusing its buffer. Not safe for concurrent use.
type frameWriter struct {
	w   io.Writer
	buf []byte
}

func (fw *frameWriter) write(m *message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(data) > maxFrame {
		return fmt.Errorf("frame of %d bytes is over the limit of %d", len(data), maxFrame)
	}
	fw.buf = binary.BigEndian.AppendUint32(fw.buf[:0], uint32(len(data)))
	fw.buf = append(fw.buf, data...)
	_, err = fw.w.Write(fw.buf)
	if cap(fw.buf) > 1<<20 {
		fw.buf = nil // don't keep a large buffer around
	}
	return err
}

// frameReader reads frames, reusing its buffer. Not safe for concurrent use.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (fr *frameReader) read() (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(fr.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes is over the limit of %d", n, maxFrame)
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	data := fr.buf[:n]
	if _, err := io.ReadFull(fr.r, data); err != nil {
		return nil, err
	}
	m := new(message)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("bad frame: %v", err)
	}
	if cap(fr.buf) > 1<<20 {
		fr.buf = nil
	}
	return m, nil
}
