package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remstore/remstore/models"
)

// MaxLineBytes bounds one JSON-RPC line; MaxDepth how deeply its JSON may
// nest (tool arguments included).
const (
	MaxLineBytes = 4 << 20
	MaxDepth     = 1000
)

// JSON-RPC 2.0 error codes.
const (
	codeParse         = -32700
	codeInvalidReq    = -32600
	codeInvalidParams = -32602
)

// Serve runs the MCP server on a newline-delimited JSON-RPC stream (stdio)
// until in ends or ctx is cancelled. Each line is checked before the SDK
// sees it: one that is not JSON, not valid UTF-8, too long, nested too
// deeply, a batch, or not a JSON-RPC 2.0 message is answered with its
// JSON-RPC error (-32700, -32600, -32602) and the stream goes on, where the
// SDK would end the session on it and leave every later call unanswered.
//
// At the end of in, every request it held is answered before the stream
// closes (within DrainTimeout): the SDK ends its session at end of input,
// and answers still being written were lost.
func Serve(ctx context.Context, st Store, version string, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out, open: map[string]bool{}}
	w.drained = sync.NewCond(&w.mu)
	pr, pw := io.Pipe()
	go func() {
		err := filter(in, pw, w)
		if err == nil {
			w.drain(DrainTimeout)
		}
		pw.CloseWithError(err)
	}()
	t := &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: MaxLineBytes + 1}
	err := New(st, version).Run(ctx, t)
	_ = pr.Close()
	return err
}

// DrainTimeout bounds the wait, at the end of input, for the answers to the
// requests read.
const DrainTimeout = 30 * time.Second

// lockedWriter keeps the SDK's messages and the filter's errors whole: each
// is one Write of a line. It also knows the requests handed to the SDK and
// not yet answered (open, by id), so that the end of input waits for them.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	open    map[string]bool
	drained *sync.Cond
}

// envelope is what tells a request from an answer.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var e envelope
	if json.Unmarshal(b, &e) == nil && e.Method == nil && len(e.ID) > 0 {
		delete(l.open, string(e.ID)) // an answer
		l.drained.Broadcast()
	}
	return l.w.Write(b)
}

// sent notes a line handed to the SDK: a request (an id and a method)
// awaits its answer.
func (l *lockedWriter) sent(line []byte) {
	var e envelope
	if json.Unmarshal(line, &e) != nil || e.Method == nil || len(e.ID) == 0 || string(e.ID) == "null" {
		return
	}
	l.mu.Lock()
	l.open[string(e.ID)] = true
	l.mu.Unlock()
}

// drain waits until every request handed to the SDK is answered, at most d.
func (l *lockedWriter) drain(d time.Duration) {
	timer := time.AfterFunc(d, func() {
		l.mu.Lock()
		clear(l.open)
		l.drained.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	l.mu.Lock()
	for len(l.open) > 0 {
		l.drained.Wait()
	}
	l.mu.Unlock()
}

func (l *lockedWriter) Close() error { return nil }

// filter copies the valid lines of in to sdk and answers the others on out.
func filter(in io.Reader, sdk io.Writer, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if tooLong {
				reply(out, nil, codeInvalidReq, fmt.Sprintf("line longer than %d bytes", MaxLineBytes))
			} else if id, code, msg := Check(line); code != 0 {
				if id != nil || code != codeInvalidParams {
					reply(out, id, code, msg)
				}
			} else {
				if w, ok := out.(*lockedWriter); ok {
					w.sent(line)
				}
				if _, werr := sdk.Write(append(line, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line without its newline; a line over MaxLineBytes is
// read to its end and dropped (tooLong).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

func reply(out io.Writer, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	_, _ = out.Write(append(b, '\n'))
}

// Check decides whether one line is a JSON-RPC 2.0 message the SDK can
// take. When it is not, it returns the error code and message to answer
// with and the request's id when one could be read (nil: answer with null;
// for an invalid-params error with no id, a notification, nothing is sent).
func Check(line []byte) (id json.RawMessage, code int, msg string) {
	if !utf8.Valid(line) {
		return nil, codeParse, "parse error: invalid UTF-8"
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '[' && json.Valid(t) {
			return nil, codeInvalidReq, "invalid request: batches are not supported"
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(line) {
			return nil, codeParse, "parse error: " + err.Error()
		}
		return nil, codeInvalidReq, "invalid request: a JSON-RPC message is an object"
	}
	if raw, ok := env["id"]; ok {
		switch {
		case isString(raw), isNumber(raw):
			id = raw
		case string(raw) == "null":
		default:
			return nil, codeInvalidReq, "invalid request: id must be a string or a number"
		}
	}
	if v, ok := env["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return id, codeInvalidReq, `invalid request: "jsonrpc" must be "2.0"`
	}
	method, hasMethod := env["method"]
	if hasMethod && !isString(method) {
		return id, codeInvalidReq, "invalid request: method must be a string"
	}
	if !hasMethod {
		_, res := env["result"]
		_, e := env["error"]
		if id == nil || res == e {
			return id, codeInvalidReq, "invalid request: neither a request (method) nor a response (id and result or error)"
		}
	}
	if p, ok := env["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
		return id, codeInvalidParams, "invalid params: params must be an object"
	}
	if models.JSONDepth(line) > MaxDepth {
		return id, codeInvalidParams, fmt.Sprintf("invalid params: nested deeper than %d levels", MaxDepth)
	}
	return nil, 0, ""
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

func isNumber(raw json.RawMessage) bool {
	var n json.Number
	return len(raw) > 0 && raw[0] != '"' && json.Unmarshal(raw, &n) == nil
}
