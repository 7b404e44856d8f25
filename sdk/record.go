package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/remstore/remstore/models"
)

// Recording a model call as the model saw it (SPEC §6, amended; issue 41):
// RunTurn times each model call and records it through a Store that is a
// Recorder (the library when DEBUG_AUDIT_SESSION is set, the client when
// serve audits), with the history it was given and the answer. When the
// model SDK's HTTP client goes through Transport, the record also holds the
// request body the model API received and its response, byte for byte: the
// model, its settings and the tools it was offered included. Recording
// never fails a turn: a failure is logged.

// Recorder is a Store that keeps the audit dump of model calls.
type Recorder interface {
	RecordCall(ctx context.Context, session string, r CallRecord) error
}

// CallRecord is one model call of a turn.
type CallRecord struct {
	Agent   string // the agent's name (Turn.Agent)
	Prompt  string
	History []models.HistoryMessage // what the call was given
	// Timestamp is when the call began (RunTurn sets it); zero is when it
	// is recorded. The audit dump's waterfall draws a call from its
	// timestamp for its latency.
	Timestamp time.Time
	models.Exchange
}

// maxCaptured bounds a request or response body Transport keeps (the
// body itself always goes through whole).
const maxCaptured = 8 << 20

// capture is what Transport saw of the requests of one model call.
type capture struct {
	request, response json.RawMessage
}

type captureKey struct{}

// Transport wraps base (nil: http.DefaultTransport) so that a model SDK's
// requests made inside RunTurn are recorded: give the SDK an
// &http.Client{Transport: sdk.Transport(nil)} (openai-go and
// anthropic-sdk-go: option.WithHTTPClient; genai: ClientConfig.HTTPClient).
// Outside RunTurn, or for a body that is not JSON (a stream), it only
// passes the request on.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return recordingTransport{base}
}

type recordingTransport struct{ base http.RoundTripper }

func (t recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c, _ := r.Context().Value(captureKey{}).(*capture)
	if c == nil {
		return t.base.RoundTrip(r)
	}
	if r.Body != nil && r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			c.request = jsonBody(body)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err // a stream goes on as it comes
	}
	// Read whole and handed on as read: the SDK sees the same bytes.
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxCaptured+1))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(b), rest), rest}
	if rerr == nil && len(b) <= maxCaptured && json.Valid(b) {
		c.response = b
	}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// jsonBody is body, read and closed, when it is JSON of at most
// maxCaptured bytes; nil otherwise.
func jsonBody(body io.ReadCloser) json.RawMessage {
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxCaptured+1))
	if err != nil || len(b) > maxCaptured || !json.Valid(b) {
		return nil
	}
	return b
}

// askTimed runs ask, timed, and returns the record of the call when rec is
// set (nil otherwise), for record to keep once the turn's append made the
// session (a dump is a stored session's).
func askTimed(ctx context.Context, rec Recorder, agent, prompt string, ask Asker, history []models.HistoryMessage) (models.HistoryMessage, *CallRecord, error) {
	if rec == nil {
		answer, err := ask(ctx, history)
		return answer, nil, err
	}
	c := &capture{}
	start := time.Now()
	answer, err := ask(context.WithValue(ctx, captureKey{}, c), history)
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return answer, nil, err
	}
	return answer, &CallRecord{Agent: agent, Prompt: prompt, History: history, Timestamp: start, Exchange: exchangeOf(answer, c, ms)}, nil
}

// record keeps r through rec; recording never fails a turn (it is logged).
func record(ctx context.Context, rec Recorder, session string, r *CallRecord) {
	if r == nil {
		return
	}
	if err := rec.RecordCall(ctx, session, *r); err != nil {
		slog.Warn("remstore: recording a model call failed", "session", session, "err", err)
	}
}

// exchangeOf is the record of one call: the request and response bodies
// Transport saw (the tools and settings read from the request), else the
// answer as stored; the model and usage as the answer carries them.
func exchangeOf(answer models.HistoryMessage, c *capture, ms float64) models.Exchange {
	ex := models.Exchange{LatencyMS: &ms, Request: c.request, Answer: c.response}
	if ex.Answer == nil {
		ex.Answer, _ = answer.MarshalJSON()
	}
	if raw, ok := answer.ExtraRaw("model"); ok {
		_ = json.Unmarshal(raw, &ex.Model)
	}
	if raw, ok := answer.ExtraRaw("usage"); ok {
		ex.Usage = raw
	}
	if c.request != nil {
		ex.Tools, ex.ModelSettings = requestParts(c.request)
	}
	return ex
}

// notSettings are the keys of a model API request that are not its
// settings: the input, the tools, the model (OpenAI, Anthropic, Gemini).
var notSettings = map[string]bool{"model": true, "messages": true, "input": true, "tools": true, "system": true,
	"contents": true, "systemInstruction": true, "instructions": true, "tool_choice": true, "toolConfig": true}

// requestParts reads a request body's tools and its settings (the other
// top-level keys but the input and the model).
func requestParts(body json.RawMessage) (tools, settings json.RawMessage) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, nil
	}
	tools = top["tools"]
	rest := map[string]json.RawMessage{}
	for k, v := range top {
		if !notSettings[k] {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		settings, _ = json.Marshal(rest)
	}
	return tools, settings
}
