package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The parent and a worker exchange frames over the worker's stdin and
// stdout: a 4-byte big-endian length, then that many bytes: a kind byte and
// the message. Calls and their results, the hot path, are binary ('C', 'R':
// run and call ids as 8-byte big-endian integers, then the tool name or the
// outcome, then raw JSON); the rest is one JSON message ('J'). Values
// (arguments, tool results, the block's result) travel as raw JSON written
// by appendJSON, so floats stay floats.
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

// errTooLarge is the error of a frame the writer refuses to write (nothing
// was written): a tool name over 65535 bytes or a frame over maxFrame.
var errTooLarge = errors.New("too large to send")

// frameWriter writes frames, reusing its buffer. Not safe for concurrent use.
type frameWriter struct {
	w   io.Writer
	buf []byte
}

const (
	kindJSON   = 'J'
	kindCall   = 'C'
	kindResult = 'R'
)

func (fw *frameWriter) write(m *message) error {
	b := append(fw.buf[:0], 0, 0, 0, 0)
	switch {
	case m.Call != nil:
		c := m.Call
		if len(c.Tool) > 0xffff {
			return fmt.Errorf("%w: a tool name of %d bytes", errTooLarge, len(c.Tool))
		}
		b = append(b, kindCall)
		b = binary.BigEndian.AppendUint64(b, c.Run)
		b = binary.BigEndian.AppendUint64(b, c.ID)
		b = binary.BigEndian.AppendUint16(b, uint16(len(c.Tool)))
		b = append(b, c.Tool...)
		b = append(b, c.Args...)
	case m.CallResult != nil:
		r := m.CallResult
		b = append(b, kindResult)
		b = binary.BigEndian.AppendUint64(b, r.Run)
		b = binary.BigEndian.AppendUint64(b, r.ID)
		if r.Error != nil {
			data, err := json.Marshal(r.Error)
			if err != nil {
				return err
			}
			b = append(b, 1)
			b = append(b, data...)
		} else {
			b = append(b, 0)
			b = append(b, r.Value...)
		}
	default:
		data, err := json.Marshal(m)
		if err != nil {
			return err
		}
		b = append(b, kindJSON)
		b = append(b, data...)
	}
	n := len(b) - 4
	if n > maxFrame {
		return fmt.Errorf("%w: a frame of %d bytes is over the limit of %d", errTooLarge, n, maxFrame)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	fw.buf = b
	_, err := fw.w.Write(b)
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
	return &frameReader{r: bufio.NewReaderSize(r, 128<<10)}
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
	m, err := decodeFrame(data)
	if cap(fr.buf) > 1<<20 {
		fr.buf = nil
	}
	return m, err
}

// peekCall looks at the next frame without consuming it: its payload
// length n and, for a tool call, its header (run, id, tool; no
// arguments). Nothing of the arguments is read, so a call too large for
// the server's bounds can be skipped (discard) without being held.
func (fr *frameReader) peekCall() (n int, c *callMsg, err error) {
	hdr, err := fr.r.Peek(5)
	if err != nil {
		return 0, nil, err
	}
	n = int(binary.BigEndian.Uint32(hdr))
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes is over the limit of %d", n, maxFrame)
	}
	if hdr[4] != kindCall || n < 19 {
		return n, nil, nil
	}
	head, err := fr.r.Peek(4 + 19)
	if err != nil {
		return 0, nil, err
	}
	c = &callMsg{Run: binary.BigEndian.Uint64(head[5:]), ID: binary.BigEndian.Uint64(head[13:])}
	tl := int(binary.BigEndian.Uint16(head[21:]))
	if 19+tl > n || 4+19+tl > fr.r.Size() {
		return 0, nil, fmt.Errorf("bad frame")
	}
	head, err = fr.r.Peek(4 + 19 + tl)
	if err != nil {
		return 0, nil, err
	}
	c.Tool = string(head[23:])
	return n, c, nil
}

// discard skips the next frame, whose payload is n bytes (see peekCall).
func (fr *frameReader) discard(n int) error {
	_, err := fr.r.Discard(4 + n)
	return err
}

// decodeFrame decodes one frame's payload; raw values are copied out.
func decodeFrame(data []byte) (*message, error) {
	bad := fmt.Errorf("bad frame")
	if len(data) == 0 {
		return nil, bad
	}
	kind, data := data[0], data[1:]
	switch kind {
	case kindJSON:
		m := new(message)
		if err := json.Unmarshal(data, m); err != nil {
			return nil, fmt.Errorf("bad frame: %v", err)
		}
		if m.Call != nil || m.CallResult != nil {
			// Calls and results travel as binary frames only: the parent
			// checks a call's header against its bounds before reading it.
			return nil, fmt.Errorf("bad frame: a call or a call result in a JSON frame")
		}
		return m, nil
	case kindCall:
		if len(data) < 18 {
			return nil, bad
		}
		c := &callMsg{Run: binary.BigEndian.Uint64(data), ID: binary.BigEndian.Uint64(data[8:])}
		n := int(binary.BigEndian.Uint16(data[16:]))
		data = data[18:]
		if len(data) < n {
			return nil, bad
		}
		c.Tool, c.Args = string(data[:n]), bytes.Clone(data[n:])
		return &message{Call: c}, nil
	case kindResult:
		if len(data) < 17 {
			return nil, bad
		}
		r := &resultMsg{Run: binary.BigEndian.Uint64(data), ID: binary.BigEndian.Uint64(data[8:])}
		isErr, data := data[16], data[17:]
		if isErr == 1 {
			r.Error = new(Error)
			if err := json.Unmarshal(data, r.Error); err != nil {
				return nil, fmt.Errorf("bad frame: %v", err)
			}
		} else {
			r.Value = bytes.Clone(data)
		}
		return &message{CallResult: r}, nil
	}
	return nil, bad
}
