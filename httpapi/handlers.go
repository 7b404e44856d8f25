package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

func badInput(field, reason string) error {
	return &models.FieldError{Index: -1, Field: field, Reason: reason}
}

// sessionKey is the path's {id}, else the X-Session-Id header.
func sessionKey(r *http.Request) (string, error) {
	if id := r.PathValue("id"); id != "" {
		return id, nil
	}
	if id := r.Header.Get("X-Session-Id"); id != "" {
		return id, nil
	}
	return "", badInput("session_id", "missing: give it in the path or the X-Session-Id header")
}

// decodeBody reads a JSON object body into v, strictly.
func decodeBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	// What JSON allows but the store refuses (lone surrogates, numbers JSONB
	// cannot hold, a key twice) is a 400 naming the field, before anything
	// is decoded or written.
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil {
		for k, v := range top {
			if reason := models.CheckJSONValue(v); reason != "" {
				return badInput(k, reason)
			}
		}
	}
	if reason := models.CheckJSONValue(b); reason != "" {
		return badInput("body", reason)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badInput("body", "malformed JSON: "+err.Error())
	}
	if dec.More() {
		return badInput("body", "trailing data after the JSON value")
	}
	return nil
}

// StoreResponse is the body of a successful store; Last is the next
// guarded store's ExpectLastHeader.
type StoreResponse = sessionstore.StoreAnswer

// ExpectLastHeader guards a store: the session's last message as the
// caller loaded it (LastHeader of the load, or "last" of the previous store
// answer). When the session holds another now, nothing is stored and the
// answer is 409 conflict, field expect_last, with the session's last
// message in the error's "last".
const ExpectLastHeader = "X-Remstore-Expect-Last"

// LastHeader on a load is the session's last message as the load read it
// (its id, or "empty"), for a guarded store that follows.
const LastHeader = "X-Remstore-Last"

// POST /v1/sessions/{id}/messages and POST /v1/messages (X-Session-Id);
// ?format=pydantic-ai takes pydantic-ai's message JSON instead.
func (s *Server) postMessages(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	key, err := sessionKey(r)
	if err != nil {
		return err
	}
	// Idempotency-Key: ids derived for messages without one, so a client
	// may send the same request again after a lost answer. The scope is the
	// session's id, not its spelling: a name and its UUID are one session.
	fill := func([]models.HistoryMessage) error { return nil }
	ik, keyed := r.Header["Idempotency-Key"]
	if keyed {
		user := userOf(r)
		sid, err := st.SessionUUID(key)
		if err != nil {
			return err
		}
		fill = func(msgs []models.HistoryMessage) error {
			return st.FillIDs(r.Context(), msgs, user+"\x00"+sid.String(), strings.Join(ik, ","))
		}
	}
	// A resend under the same key with another body stores nothing and says
	// which header to change.
	reused := func(err error) error {
		if keyed && errors.Is(err, sessionstore.ErrIDReused) {
			return &keyReusedError{err}
		}
		return err
	}
	so := sessionstore.StoreOptions{ExpectLast: r.Header.Get(ExpectLastHeader)}
	if v, ok := r.Header[ExpectLastHeader]; ok && so.ExpectLast == "" {
		return badInput(ExpectLastHeader, fmt.Sprintf("must be a message id or %q; leave the header out to store unguarded", sessionstore.Empty))
	} else if len(v) > 1 {
		return badInput(ExpectLastHeader, "must be sent once")
	}
	switch format := r.URL.Query().Get("format"); format {
	case "", "dicts":
	case "pydantic-ai":
		in, err := convert.DecodePydanticAI(r.Body)
		if err != nil {
			return err
		}
		if err := fill(in.Messages); err != nil {
			return err
		}
		defer s.timed("store", time.Now())
		so.Decoded = true // the decoder's rows: their sources agree by construction
		res, err := st.Store(r.Context(), key, in.Messages, so)
		if err != nil {
			return reused(in.Locate(err))
		}
		writeStored(w, st, res, len(in.Messages))
		return nil
	default:
		return badInput("format", "must be dicts or pydantic-ai")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	// A JSON array of messages, or {"messages": [...]}.
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		var wrap struct {
			Messages json.RawMessage `json:"messages"`
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&wrap); err != nil || wrap.Messages == nil {
			return badInput("messages", `body must be a JSON array of messages or {"messages": [...]}`)
		}
		body = wrap.Messages
	}
	msgs, err := models.DecodeHistory(body)
	if err != nil {
		return err
	}
	if err := fill(msgs); err != nil {
		return err
	}
	defer s.timed("store", time.Now())
	res, err := st.Store(r.Context(), key, msgs, so)
	if err != nil {
		return reused(err)
	}
	writeStored(w, st, res, len(msgs))
	return nil
}

// keyReusedError is a store under an Idempotency-Key already used for a
// request with another body: 409, naming the header.
type keyReusedError struct{ err error }

func (e *keyReusedError) Error() string {
	return "this Idempotency-Key was used for a request with another body; nothing was stored (" + e.err.Error() + ")"
}

func (e *keyReusedError) Unwrap() error { return e.err }

// StorageHeader is "off" on a store answered while storage is switched off
// (POSTGRES_ENABLED not true): nothing was stored, and stored is 0.
const StorageHeader = "X-Remstore-Storage"

// writeStored answers a store of n messages.
func writeStored(w http.ResponseWriter, st sessionStore, res sessionstore.StoreResult, n int) {
	if !st.Enabled() {
		w.Header().Set(StorageHeader, "off")
	}
	// By hand: encoding/json's reflection was a tenth of serve's own
	// share of a store (BenchmarkServeLayers).
	body := res.Answer(n, st.Enabled()).AppendJSON(make([]byte, 0, 96+64*len(res.Keys)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// DELETE /v1/sessions/{id}/messages/last: the last message, soft-deleted.
func (s *Server) popMessage(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	m, ok, err := st.PopMessage(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var body struct {
		Message *models.HistoryMessage `json:"message"`
	}
	if ok {
		body.Message = &m
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// DELETE /v1/sessions/{id}/messages: every message, soft-deleted.
func (s *Server) clearMessages(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	n, err := st.ClearMessages(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"removed": n})
	return nil
}

func boolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, badInput(name, "must be true or false")
	}
	return b, nil
}

func timeParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, badInput(name, "must be an RFC 3339 time")
	}
	if t.Year() < 1 {
		return t, badInput(name, "must be in year 1 or later (PostgreSQL has no year 0)")
	}
	return t, nil
}

// GET /v1/sessions/{id}/messages?compress=&since=&last=&format=&system_prompt=&extras=
func (s *Server) getMessages(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	q := r.URL.Query()
	lastN := 0
	if v := q.Get("last"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badInput("last", "must be a whole number of messages >= 1")
		}
		lastN = n
	}
	compress, err := boolParam(r, "compress", true)
	if err != nil {
		return err
	}
	extras, err := boolParam(r, "extras", false)
	if err != nil {
		return err
	}
	since, err := timeParam(r, "since")
	if err != nil {
		return err
	}
	format := q.Get("format")
	if format == "" {
		format = "dicts"
	}
	if format != "dicts" && format != "pydantic-ai" {
		return badInput("format", "must be dicts or pydantic-ai")
	}
	lo := sessionstore.LoadOptions{NoCompress: !compress, Since: since, Extras: extras, Sources: format == "pydantic-ai", LastN: lastN,
		OnLast: func(last string) { w.Header().Set(LastHeader, last) }}
	defer s.timed("load", time.Now())
	w.Header().Set("Content-Type", "application/json")
	if format == "dicts" {
		// Streamed as the rows arrive: memory stays flat however long the
		// session. A failure after the first message cannot become an error
		// response; the connection is cut so the client sees a broken array.
		enc := models.NewHistoryEncoder(w)
		err := st.LoadEach(r.Context(), r.PathValue("id"), lo, enc.Encode)
		if err != nil && enc.Count() > 0 {
			s.o.Logger.Error("load failed mid-stream", "id", infoOf(r).id, "err", err)
			panic(http.ErrAbortHandler)
		}
		if err != nil {
			return err
		}
		return enc.Close()
	}
	strict, err := boolParam(r, "strict", false)
	if err != nil {
		return err
	}
	var left convert.Unmappeds
	co := convert.Options{SystemPrompt: q.Get("system_prompt"), Strict: strict, OnUnmapped: left.Add}
	var call *audit.Call
	if s.o.AuditEnabled {
		// The dump is the session's, named by its UUID: never by the name
		// as spelled, which another tenant may spell alike. Only a session
		// that exists has one: audited loads of names never stored made a
		// file each, which no session limit counted and no purge removed.
		if info, err := st.SessionInfo(r.Context(), r.PathValue("id")); err == nil {
			call = &audit.Call{Dir: s.o.AuditDir, SessionID: info.ID.String(), AgentName: q.Get("agent_name"), Prompt: q.Get("prompt"), ID: audit.NewCallID()}
		} else {
			s.o.Logger.Info("audit: the load's call is not recorded", "id", infoOf(r).id, "err", err)
		}
	}
	hw := &headWriter{w: w}
	err = audit.WritePydanticAI(auditContext(r), hw, co, call,
		func(fn func(models.HistoryMessage) error) error {
			return st.LoadEach(r.Context(), r.PathValue("id"), lo, fn)
		},
		func() ([]models.HistoryMessage, error) { return st.Load(r.Context(), r.PathValue("id"), lo) },
		func() { // collected: the count is known before the body, and whether the call was recorded
			if call != nil && call.Err == nil {
				w.Header().Set(AuditCallHeader, call.ID)
			}
			setUnmapped(w.Header(), left.N)
			hw.flushed = true
		})
	if err != nil && hw.flushed { // past the head: the client must see a broken body
		s.o.Logger.Error("load failed mid-stream", "id", infoOf(r).id, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		return err
	}
	return hw.finish(left.N)
}

// UnmappedHeader counts the messages a pydantic-ai load left out because
// their role has no pydantic-ai form; absent
// when none was. ?strict=true makes them a 400 instead.
const UnmappedHeader = "X-Remstore-Unmapped"

func setUnmapped(h http.Header, n int) {
	if n > 0 {
		h.Set(UnmappedHeader, strconv.Itoa(n))
	}
}

// headWriter holds the first headBytes of a streamed body so that a count
// known only at its end still goes out as a header; a longer body is sent as
// it comes and the count follows as a trailer, declared before the first
// byte.
type headWriter struct {
	w       http.ResponseWriter
	buf     []byte
	flushed bool
}

const headBytes = 64 << 10

func (h *headWriter) Write(p []byte) (int, error) {
	if h.flushed {
		return h.w.Write(p)
	}
	if len(h.buf)+len(p) <= headBytes {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	h.flushed = true
	h.w.Header().Set("Trailer", UnmappedHeader)
	if _, err := h.w.Write(h.buf); err != nil {
		return 0, err
	}
	h.buf = nil
	return h.w.Write(p)
}

func (h *headWriter) finish(unmapped int) error {
	setUnmapped(h.w.Header(), unmapped) // a trailer once the body has started
	if h.flushed {
		return nil
	}
	_, err := h.w.Write(h.buf)
	return err
}

// GET /v1/lookup?key=
func (s *Server) lookup(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	key := r.URL.Query().Get("key")
	start := time.Now()
	full, err := st.Lookup(r.Context(), key)
	s.timed("lookup", start)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": strings.TrimSpace(key), "content": full})
	return nil
}

// GET /v1/search?q=&in=content|tool|key|agent&limit=
func (s *Server) search(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	q := r.URL.Query()
	o := sessionstore.SearchOptions{Query: q.Get("q"), In: q.Get("in"), Role: q.Get("role"), Session: q.Get("session"), Agent: q.Get("agent"), Tool: q.Get("tool")}
	for _, p := range []struct {
		name string
		to   *int
	}{{"limit", &o.Limit}, {"offset", &o.Offset}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return badInput(p.name, "must be an integer")
			}
			*p.to = n
		}
	}
	var err error
	if o.After, err = timeParam(r, "after"); err != nil {
		return err
	}
	if o.Before, err = timeParam(r, "before"); err != nil {
		return err
	}
	// A budget of its own: one search per user at once, a few in all, each
	// bounded in time, so a tenant's search flood leaves the others' stores
	// and loads their share (issue 42 M3).
	// The index catches up with everyone's writes once the budget is
	// taken (a refused search costs the database nothing), and its time
	// is not charged: that work is not this user's search.
	var indexing bool
	start := time.Now()
	ctx, end, err := s.beginSearch(r.Context(), infoOf(r).budget, func(ctx context.Context) (err error) {
		indexing, err = st.CatchUpSearch(ctx, &o)
		return err
	})
	if busy := (*searchBusy)(nil); errors.As(err, &busy) {
		w.Header().Set("Retry-After", strconv.Itoa(busy.secs))
		writeError(w, http.StatusTooManyRequests, "too_many_searches", err.Error(), "")
		return nil
	}
	if err != nil {
		return err
	}
	res, err := st.SearchPage(ctx, o)
	res.Indexing = res.Indexing || indexing
	end()
	s.timed("search", start)
	if fe, ok := models.AsFieldError(err); ok && fe.Field == "session_id" && o.Session != "" {
		return badInput("session", fe.Reason) // the parameter given, not the CLI's --session-id
	}
	if err != nil {
		return err
	}
	if res.Hits == nil {
		res.Hits = []sessionstore.SearchHit{}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// searchBusy is a search its user may not start now: try again in secs.
type searchBusy struct{ secs, max int }

// RetryAfter is when the user may search again: the viewer's 429 page
// sends it as the API does (Retry-After).
func (e *searchBusy) RetryAfter() time.Duration { return time.Duration(e.secs) * time.Second }

func (e *searchBusy) Error() string {
	return fmt.Sprintf("your searches are over their share of the server (one at a time, a fifth of the time), or %d are running: try again in %d s", e.max, e.secs)
}

// beginSearch takes a search's budget for user (the API's and the viewer's
// searches alike), then runs prepare (the index's catch-up; may be nil)
// uncharged, holding the user's turn but none of MaxSearches: the context bounds the search by SearchTimeout, end gives the
// budget back. A *searchBusy when the user may not search now (prepare
// not run), or prepare's error (the budget given back).
func (s *Server) beginSearch(ctx context.Context, budget string, prepare func(context.Context) error) (context.Context, func(), error) {
	if ok, retry := s.searches.reserve(budget, time.Now()); !ok {
		return ctx, nil, &searchBusy{secs: int((retry + time.Second - 1) / time.Second), max: s.o.MaxSearches}
	}
	if prepare != nil {
		if err := prepare(ctx); err != nil {
			s.searches.cancel(budget)
			return ctx, nil, err
		}
	}
	if !s.searches.start(budget) {
		return ctx, nil, &searchBusy{secs: 1, max: s.o.MaxSearches}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.o.SearchTimeout)
	return ctx, func() {
		cancel()
		end := time.Now()
		s.searches.done(budget, end, end.Sub(start))
	}, nil
}

// GET /v1/sessions?status=&agent=&owner=&created_after=&...&limit=&cursor=
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	q := r.URL.Query()
	o := sessionstore.ListOptions{AgentName: q.Get("agent"), UserID: q.Get("owner"), Cursor: q.Get("cursor")}
	if v := q.Get("status"); v != "" {
		o.Statuses = strings.Split(v, ",")
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return badInput("limit", "must be an integer")
		}
		o.Limit = n
	}
	for name, dst := range map[string]*time.Time{"created_after": &o.CreatedAfter, "created_before": &o.CreatedBefore,
		"updated_after": &o.UpdatedAfter, "updated_before": &o.UpdatedBefore} {
		t, err := timeParam(r, name)
		if err != nil {
			return err
		}
		*dst = t
	}
	res, err := st.ListSessions(r.Context(), o)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// GET /v1/sessions/{id}?compress=
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	compress, err := boolParam(r, "compress", true)
	if err != nil {
		return err
	}
	info, err := st.SessionInfo(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	// The messages stream as the rows arrive, as a load's do: a session of
	// 200,000 messages costs this request what one of 2,000 does.
	sess, err := json.Marshal(info)
	if err != nil {
		return err
	}
	head := append(append([]byte(`{"session":`), sess...), `,"messages":`...)
	w.Header().Set("Content-Type", "application/json")
	enc := models.NewHistoryEncoder(w)
	started := false
	err = st.LoadEach(r.Context(), r.PathValue("id"), sessionstore.LoadOptions{NoCompress: !compress}, func(m models.HistoryMessage) error {
		if !started {
			started = true
			if _, err := w.Write(head); err != nil {
				return err
			}
		}
		return enc.Encode(m)
	})
	if err != nil && started {
		s.o.Logger.Error("session load failed mid-stream", "id", infoOf(r).id, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		return err
	}
	if !started {
		_, err := w.Write(append(head, "[]}\n"...))
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write([]byte("}\n"))
	return err
}

// PATCH /v1/sessions/{id} {"name", "agent_name", "settings", "status", "reason"}
func (s *Server) patchSession(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	var body struct {
		Name      *string        `json:"name"`
		AgentName *string        `json:"agent_name"`
		Settings  map[string]any `json:"settings"`
		Status    *string        `json:"status"`
		Reason    string         `json:"reason"`
	}
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	// One call, one transaction: a refused status leaves name, agent and
	// settings unchanged.
	info, err := st.UpdateSession(r.Context(), r.PathValue("id"), sessionstore.SessionUpdate{
		Name: body.Name, AgentName: body.AgentName, Settings: body.Settings, Status: body.Status, Reason: body.Reason})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

// AuditCallHeader answers an audited pydantic-ai load: the call id of the
// invocation it recorded, which POST /v1/sessions/{id}/audit completes
// with what the caller knows (the answer, latency, usage, tools).
const AuditCallHeader = "X-Remstore-Audit-Call"

// AuditRecord is the body of POST /v1/sessions/{id}/audit: an exchange,
// and, for a call no load recorded (no call_id), the invocation's keys
// keys.
type AuditRecord struct {
	audit.Exchange
	AgentName string          `json:"agent_name,omitempty"`
	Prompt    string          `json:"prompt,omitempty"`
	History   json.RawMessage `json:"history,omitempty"` // the history the call saw, as message dicts
	// Timestamp is when the call was made, ISO 8601 (naive: UTC). Empty,
	// null or Go's zero time: the server's time of the append.
	Timestamp string `json:"timestamp,omitempty"`
}

// POST /v1/sessions/{id}/audit: records one model call in the session's
// audit dump (DEBUG_AUDIT_SESSION), completing the invocation a load
// recorded when call_id names one, appending a new one otherwise.
func (s *Server) postAudit(w http.ResponseWriter, r *http.Request, st sessionStore) (err error) {
	defer func() { err = s.notRecorded(w, r, err) }()
	var body AuditRecord
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if err := audit.Check(body.Exchange); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"agent_name", body.AgentName}, {"prompt", body.Prompt}} {
		if err := models.CheckText(-1, f.name, f.v, 0); err != nil {
			return err
		}
	}
	var at time.Time
	if body.Timestamp != "" {
		var err error
		if at, err = models.ParseTimestamp(body.Timestamp); err != nil {
			return &models.FieldError{Index: -1, Field: "timestamp", Reason: fmt.Sprintf("%q is not an ISO-8601 time (like 2024-01-15T10:30:00+00:00)", body.Timestamp)}
		}
	}
	var hist []models.HistoryMessage
	if len(body.History) > 0 {
		var err error
		if hist, err = models.DecodeHistory(body.History); err != nil {
			return err
		}
		if err := msgcheck.Messages(hist, false); err != nil { // what a store would refuse, the dump does too
			return err
		}
	}
	info, err := st.SessionInfo(r.Context(), r.PathValue("id")) // the caller's session, or 404
	if err != nil {
		return err
	}
	if !s.o.AuditEnabled {
		writeJSON(w, http.StatusOK, map[string]any{"recorded": false, "auditing": false, "reason": "auditing is off on this server (DEBUG_AUDIT_SESSION)"})
		return nil
	}
	dir, sid := s.o.AuditDir, info.ID.String() // the file is the session's UUID, never the name as spelled
	if body.CallID != "" && hist == nil && body.AgentName == "" && body.Prompt == "" {
		if !at.IsZero() { // not dropped in silence: the invocation keeps its load's time
			return &models.FieldError{Index: -1, Field: "timestamp", Reason: "the call a load recorded keeps the time of that load; give timestamp with a call no load recorded (no call_id)"}
		}
		err := audit.Complete(auditContext(r), dir, sid, body.Exchange)
		if errors.Is(err, audit.ErrNoCall) {
			return &models.FieldError{Index: -1, Field: "call_id", Reason: "no audited call of this session has it (the " + AuditCallHeader + " of a load)"}
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"recorded": true, "call_id": body.CallID})
		return nil
	}
	if body.CallID == "" {
		body.CallID = audit.NewCallID()
	}
	// No time given (at zero): Append writes the server's.
	if err := audit.Append(auditContext(r), dir, sid, audit.Invocation{Timestamp: at, AgentName: body.AgentName, Prompt: body.Prompt,
		RawSessionHistory: hist, Exchange: body.Exchange}); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"recorded": true, "call_id": body.CallID})
	return nil
}

// notRecorded answers a call the session's full dump cannot take (the contract with the Python service:
// bounded) as the call it is, not recorded, with the reason; auditing never
// fails the caller's agent call. Any other error is err.
func (s *Server) notRecorded(w http.ResponseWriter, r *http.Request, err error) error {
	if !errors.Is(err, audit.ErrTooLarge) {
		return err
	}
	s.o.Logger.Warn("audit: call not recorded", "id", infoOf(r).id, "err", err)
	writeJSON(w, http.StatusOK, map[string]any{"recorded": false, "reason": err.Error()})
	return nil
}

// DELETE /v1/sessions/{id}?purge=true
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	purge, err := boolParam(r, "purge", false)
	if err != nil {
		return err
	}
	if err := st.DeleteSession(r.Context(), r.PathValue("id"), sessionstore.DeleteOptions{Purge: purge}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// POST /v1/sessions/{id}/fork {"up_to", "new_session_id"}
func (s *Server) forkSession(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	var body struct {
		UpTo         int    `json:"up_to"`
		NewSessionID string `json:"new_session_id"`
	}
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	info, err := st.Fork(r.Context(), r.PathValue("id"), sessionstore.ForkOptions{UpTo: body.UpTo, NewSessionKey: body.NewSessionID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, info)
	return nil
}

// POST /v1/sessions/{id}/cancel {"reason"}
func (s *Server) cancelSession(w http.ResponseWriter, r *http.Request, st sessionStore) error {
	var body struct {
		Reason string `json:"reason"`
	}
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	info, err := st.SetStatus(r.Context(), r.PathValue("id"), models.StatusCancelled, body.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}
