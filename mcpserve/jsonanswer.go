package mcpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// A stateful session's answers are event streams (the SDK's handler is
// set up so: a tools/call there may send the client an elicitation or a
// notification before its answer). A ping can send nothing before its
// answer, and a client that sends one wants it back at once: its answer
// is one JSON body instead (the client accepts one: the SDK refuses a
// POST whose Accept lacks application/json or text/event-stream, and
// streamable HTTP lets the server choose). At ModernRevision every answer
// is a JSON body already (newStatelessHandler).

// maxPingBody bounds the body of a request answerAsJSON reads to learn
// its method: a ping is a few dozen bytes; anything longer is left to
// the SDK unread.
const maxPingBody = 1 << 10

// answerAsJSON reports whether r, a request of a stateful session, is a
// ping, and gives r its body back to read again.
func answerAsJSON(r *http.Request) bool {
	if r.Method != http.MethodPost || r.ContentLength <= 0 || r.ContentLength > maxPingBody {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, r.ContentLength))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil {
		return false
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "ping"
}

// jsonAnswer holds what the SDK writes for one request (its status,
// headers and event stream) and, once the SDK is done, writes it to w:
// as one JSON body when the stream holds exactly one message and that
// message is an answer (a result or an error: no method), else as it was.
type jsonAnswer struct {
	w      http.ResponseWriter
	header http.Header
	status int
	buf    bytes.Buffer
}

func (a *jsonAnswer) Header() http.Header { return a.header }

func (a *jsonAnswer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *jsonAnswer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.buf.Write(b)
}

// finish writes what the SDK wrote to w.
func (a *jsonAnswer) finish() {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	body := a.buf.Bytes()
	if a.status == http.StatusOK && strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		if msg, ok := oneAnswer(body); ok {
			a.header.Set("Content-Type", "application/json")
			a.header.Del("Connection")
			body = msg
		}
	}
	for k, v := range a.header {
		a.w.Header()[k] = v
	}
	a.w.WriteHeader(a.status)
	_, _ = a.w.Write(body)
}

// oneAnswer returns the one message of the event stream s when s holds
// exactly one (events without data, such as the priming event, hold
// none) and it is a JSON-RPC answer.
func oneAnswer(s []byte) ([]byte, bool) {
	var msg []byte
	for _, event := range bytes.Split(s, []byte("\n\n")) {
		var data [][]byte
		for _, line := range bytes.Split(event, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(d, []byte(" ")))
			}
		}
		joined := bytes.Join(data, []byte("\n"))
		if len(bytes.TrimSpace(joined)) == 0 {
			continue
		}
		if msg != nil {
			return nil, false
		}
		msg = joined
	}
	var m struct {
		Method *string          `json:"method"`
		Result *json.RawMessage `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if msg == nil || json.Unmarshal(msg, &m) != nil || m.Method != nil || (m.Result == nil && m.Error == nil) {
		return nil, false
	}
	return msg, true
}

// serveJSONAnswer serves r with h, its answer written as one JSON body
// where jsonAnswer can.
func serveJSONAnswer(h http.Handler, w http.ResponseWriter, r *http.Request) {
	a := &jsonAnswer{w: w, header: http.Header{}}
	h.ServeHTTP(a, r)
	a.finish()
}
