package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
)

// StoreResult is the answer of a store.
type StoreResult struct {
	SessionID uuid.UUID `json:"session_id"`
	Stored    int       `json:"stored"` // written now; 0 when the same request was stored before
	Keys      []string  `json:"keys"`   // each message's REM LOOKUP key
	// Last is the session's last message after the store: the next
	// guarded store's StoreOptions.ExpectLast.
	Last string `json:"last,omitempty"`
}

// StoreOptions shape a store.
type StoreOptions struct {
	// IdempotencyKey makes a resend store nothing twice; "" gets a new one
	// per call (its own retries store once).
	IdempotencyKey string
	// ExpectLast guards the store: the session's last message as loaded
	// (LoadOptions.OnLast, or StoreResult.Last; "empty" for none). When
	// the session moved on, nothing is stored: ErrConflict, Error.Last.
	ExpectLast string
}

// PendingStore is a store the client gave up on (Error.Pending). Its
// Idempotency-Key is the one the failed tries carried, so StorePending
// stores its messages once, whether or not a try got through.
type PendingStore struct {
	Session        string
	Messages       []models.HistoryMessage // the messages (nil for a pydantic-ai store: see Body)
	Body           []byte                  // the request body as sent
	Format         string                  // "dicts" or "pydantic-ai"
	IdempotencyKey string
	ExpectLast     string
}

// StorePending sends a store the client gave up on again, under the
// client's policy, with its Idempotency-Key: stored once however often it
// is sent. Its guard goes with it: a session that moved on meanwhile
// refuses it (ErrConflict), as it would have then.
func (c *Client) StorePending(ctx context.Context, p *PendingStore) (StoreResult, error) {
	if p == nil || p.IdempotencyKey == "" {
		return StoreResult{}, errors.New("client: StorePending needs the Pending of a store's *Error")
	}
	return c.store(ctx, p)
}

func (c *Client) store(ctx context.Context, p *PendingStore) (StoreResult, error) {
	h := map[string]string{"Idempotency-Key": p.IdempotencyKey}
	if p.ExpectLast != "" {
		h["X-Remstore-Expect-Last"] = p.ExpectLast
	}
	var q url.Values
	if p.Format == "pydantic-ai" {
		q = url.Values{"format": {"pydantic-ai"}}
	}
	var out StoreResult
	_, err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + seg(p.Session) + "/messages", query: q, body: p.Body,
		headers: h, safety: durable, pending: p}, &out)
	return out, err
}

func pending(session, format string, msgs []models.HistoryMessage, body []byte, o StoreOptions) *PendingStore {
	key := o.IdempotencyKey
	if key == "" {
		key = uuid.NewString()
	}
	return &PendingStore{Session: session, Messages: msgs, Body: body, Format: format, IdempotencyKey: key, ExpectLast: o.ExpectLast}
}

// The results the API shares with the library.
type (
	Session     = models.SessionInfo
	SessionPage = models.ListResult
	SearchHit   = models.SearchHit
)

// SessionWithMessages is GET /v1/sessions/{id}.
type SessionWithMessages struct {
	Session  Session                 `json:"session"`
	Messages []models.HistoryMessage `json:"messages"`
}

// Store stores messages in one transaction, guarded when o says so. It
// carries an Idempotency-Key (o's, or a new one), so a resend stores once;
// across an outage it is sent again for Options.StoreWindow, and when the
// client gives up, the *Error's Pending holds it for StorePending.
func (c *Client) Store(ctx context.Context, session string, msgs []models.HistoryMessage, o StoreOptions) (StoreResult, error) {
	if err := models.CheckText(-1, "expect_last", o.ExpectLast, 64); err != nil {
		return StoreResult{}, err
	}
	body, err := encodeHistory(msgs)
	if err != nil {
		return StoreResult{}, err
	}
	return c.store(ctx, pending(session, "dicts", msgs, body, o))
}

// StorePydanticAI is Store for pydantic-ai messages given as their JSON.
func (c *Client) StorePydanticAI(ctx context.Context, session string, messagesJSON []byte, o StoreOptions) (StoreResult, error) {
	return c.store(ctx, pending(session, "pydantic-ai", nil, messagesJSON, o))
}

// LoadOptions shapes a load.
type LoadOptions struct {
	NoCompress bool // every answer in full
	Extras     bool // tool calls, author, usage, model, reasoning
	// Since loads only the messages created after it, tool pairs whole as
	// LastN (a result whose call was created before it is left out with it).
	Since time.Time
	// LastN > 0 loads only the last LastN messages, tool pairs whole (a
	// result whose call falls before them is left out with it).
	LastN int
	// OnLast, when set, is told the session's last message as the load read
	// it (X-Remstore-Last): what a guarded store names in ExpectLast.
	OnLast func(last string)
}

func (o LoadOptions) query() url.Values {
	q := url.Values{"compress": {strconv.FormatBool(!o.NoCompress)}, "extras": {strconv.FormatBool(o.Extras)}}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.Format(time.RFC3339Nano))
	}
	if o.LastN > 0 {
		q.Set("last", strconv.Itoa(o.LastN))
	}
	return q
}

// onLast hands the load's X-Remstore-Last to o.OnLast.
func (o LoadOptions) onLast() func(http.Header) {
	if o.OnLast == nil {
		return nil
	}
	return func(h http.Header) { o.OnLast(h.Get("X-Remstore-Last")) }
}

// Load returns the session's history.
func (c *Client) Load(ctx context.Context, session string, o LoadOptions) ([]models.HistoryMessage, error) {
	if o.LastN < 0 {
		return nil, &models.FieldError{Index: -1, Field: "last", Reason: "must be >= 0"}
	}
	var raw json.RawMessage
	if _, err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + seg(session) + "/messages", query: o.query(), safety: resend, header: o.onLast()}, &raw); err != nil {
		return nil, err
	}
	return models.DecodeHistory(raw)
}

// PydanticAIOptions shapes a pydantic-ai load.
type PydanticAIOptions struct {
	LoadOptions
	SystemPrompt string
	AgentName    string // recorded by the audit dump
	Prompt       string // recorded by the audit dump
	Strict       bool   // a stored role with no pydantic-ai form is an error
	// OnAuditCall, when set, is told the call id of the invocation an
	// audited load recorded (X-Remstore-Audit-Call; "" when serve does not
	// audit): RecordCall completes it with what the model answered.
	OnAuditCall func(callID string)
}

// LoadPydanticAI returns the history as pydantic-ai's message JSON.
func (c *Client) LoadPydanticAI(ctx context.Context, session string, o PydanticAIOptions) (json.RawMessage, error) {
	q := o.query()
	q.Set("format", "pydantic-ai")
	for k, v := range map[string]string{"system_prompt": o.SystemPrompt, "agent_name": o.AgentName, "prompt": o.Prompt} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if o.Strict {
		q.Set("strict", "true")
	}
	var raw json.RawMessage
	onLast := o.onLast()
	header := func(h http.Header) {
		if onLast != nil {
			onLast(h)
		}
		if o.OnAuditCall != nil {
			o.OnAuditCall(h.Get("X-Remstore-Audit-Call"))
		}
	}
	_, err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + seg(session) + "/messages", query: q, safety: resend, header: header}, &raw)
	return raw, err
}

// AuditRecord is one model call for serve's audit dump: an exchange with
// the CallID of an audited load completes that load's invocation; without
// it, the call is appended with its prompt and the history it saw.
type AuditRecord struct {
	models.Exchange
	AgentName string                  `json:"agent_name,omitempty"`
	Prompt    string                  `json:"prompt,omitempty"`
	History   []models.HistoryMessage `json:"history,omitempty"`
	// Timestamp is when the call began; zero sends none, and serve records
	// the time it receives the call. Not with CallID alone: a load's call
	// keeps the load's time.
	Timestamp time.Time `json:"timestamp,omitzero"`
}

// RecordCall sends one model call to the session's audit dump (POST
// /v1/sessions/{id}/audit). recorded is false when serve does not audit
// (DEBUG_AUDIT_SESSION unset there) or the session's dump is full (32 MiB).
func (c *Client) RecordCall(ctx context.Context, session string, r AuditRecord) (recorded bool, err error) {
	out, err := c.recordCall(ctx, session, r)
	return out.Recorded, err
}

// recorded is serve's answer to an audit record.
type recorded struct {
	Recorded bool  `json:"recorded"`
	Auditing *bool `json:"auditing"` // false: auditing is off there
}

func (c *Client) recordCall(ctx context.Context, session string, r AuditRecord) (recorded, error) {
	var out recorded
	body, err := json.Marshal(r)
	if err != nil {
		return out, err
	}
	_, err = c.do(ctx, call{method: "POST", path: "/v1/sessions/" + seg(session) + "/audit", body: body, safety: unsent}, &out)
	return out, err
}

// Lookup returns the full text behind a REM LOOKUP key (bare, or the phrase).
func (c *Client) Lookup(ctx context.Context, key string) (string, error) {
	if strings.TrimSpace(key) == "" {
		return "", &models.FieldError{Index: -1, Field: "key", Reason: "must not be empty"}
	}
	var out struct {
		Content string `json:"content"`
	}
	_, err := c.do(ctx, call{method: "GET", path: "/v1/lookup", query: url.Values{"key": {key}}, safety: resend}, &out)
	return out.Content, err
}

// SearchOptions shapes a search.
type SearchOptions struct {
	In    string // content (default), tool, agent or key
	Limit int
}

// Search finds the user's messages by words, tool or agent names, or keys.
func (c *Client) Search(ctx context.Context, q string, o SearchOptions) ([]SearchHit, error) {
	v := url.Values{"q": {q}}
	if o.In != "" {
		v.Set("in", o.In)
	}
	if o.Limit > 0 {
		v.Set("limit", strconv.Itoa(o.Limit))
	}
	var out struct {
		Hits []SearchHit `json:"hits"`
	}
	_, err := c.do(ctx, call{method: "GET", path: "/v1/search", query: v, safety: resend}, &out)
	return out.Hits, err
}

// ListOptions filters ListSessions.
type ListOptions struct {
	Statuses                                                 []string
	Agent, Owner, Cursor                                     string
	CreatedAfter, CreatedBefore, UpdatedAfter, UpdatedBefore time.Time
	Limit                                                    int
}

// ListSessions returns one page of the user's sessions, newest first.
func (c *Client) ListSessions(ctx context.Context, o ListOptions) (SessionPage, error) {
	v := url.Values{}
	if len(o.Statuses) > 0 {
		v.Set("status", strings.Join(o.Statuses, ","))
	}
	for k, s := range map[string]string{"agent": o.Agent, "owner": o.Owner, "cursor": o.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	for k, t := range map[string]time.Time{"created_after": o.CreatedAfter, "created_before": o.CreatedBefore,
		"updated_after": o.UpdatedAfter, "updated_before": o.UpdatedBefore} {
		if !t.IsZero() {
			v.Set(k, t.Format(time.RFC3339Nano))
		}
	}
	if o.Limit > 0 {
		v.Set("limit", strconv.Itoa(o.Limit))
	}
	var out SessionPage
	_, err := c.do(ctx, call{method: "GET", path: "/v1/sessions", query: v, safety: resend}, &out)
	return out, err
}

// GetOptions shape GetSession.
type GetOptions struct {
	Full bool // every answer in full, without the REM LOOKUP cut
}

// GetSession returns a session with its messages.
func (c *Client) GetSession(ctx context.Context, session string, o GetOptions) (SessionWithMessages, error) {
	var out SessionWithMessages
	_, err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + seg(session), query: url.Values{"compress": {strconv.FormatBool(!o.Full)}},
		safety: resend}, &out)
	return out, err
}

// SessionUpdate is what UpdateSession changes; nil fields stay.
type SessionUpdate struct {
	Name      *string        `json:"name,omitempty"`
	AgentName *string        `json:"agent_name,omitempty"`
	Settings  map[string]any `json:"settings,omitempty"`
	Status    *string        `json:"status,omitempty"`
	Reason    string         `json:"reason,omitempty"`
}

// UpdateSession renames, assigns an agent, changes settings or status.
func (c *Client) UpdateSession(ctx context.Context, session string, u SessionUpdate) (Session, error) {
	if u.Name == nil && u.AgentName == nil && u.Settings == nil && u.Status == nil {
		return Session{}, errors.New("client: nothing to change: set Name, AgentName, Settings or Status")
	}
	body, _ := json.Marshal(u)
	var out Session
	// Unsent: a PATCH sent again after it committed can meet its own change
	// (a cancel comes back 409 not active).
	_, err := c.do(ctx, call{method: "PATCH", path: "/v1/sessions/" + seg(session), body: body, safety: unsent}, &out)
	return out, err
}

// ForkOptions shapes a fork.
type ForkOptions struct {
	UpTo         int    `json:"up_to,omitempty"` // the first n live messages; 0: all
	NewSessionID string `json:"new_session_id,omitempty"`
}

// Fork copies the session's first messages into a new session.
func (c *Client) Fork(ctx context.Context, session string, o ForkOptions) (Session, error) {
	body, _ := json.Marshal(o)
	var out Session
	_, err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + seg(session) + "/fork", body: body, safety: unsent}, &out)
	return out, err
}

// Cancel marks the session cancelled.
func (c *Client) Cancel(ctx context.Context, session, reason string) (Session, error) {
	body, _ := json.Marshal(map[string]string{"reason": reason})
	if reason == "" {
		body = []byte("{}")
	}
	var out Session
	_, err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + seg(session) + "/cancel", body: body, safety: unsent}, &out)
	return out, err
}

// DeleteOptions shape DeleteSession.
type DeleteOptions struct {
	Purge bool // remove the session's rows instead of marking them deleted
}

// DeleteSession soft-deletes the session (o.Purge: removes its rows).
func (c *Client) DeleteSession(ctx context.Context, session string, o DeleteOptions) error {
	_, err := c.do(ctx, call{method: "DELETE", path: "/v1/sessions/" + seg(session), query: url.Values{"purge": {strconv.FormatBool(o.Purge)}},
		safety: unsent}, nil)
	return err
}

// PopMessage soft-deletes the last message and returns it in full; nil
// when none is left.
func (c *Client) PopMessage(ctx context.Context, session string) (*models.HistoryMessage, error) {
	var out struct {
		Message *models.HistoryMessage `json:"message"`
	}
	_, err := c.do(ctx, call{method: "DELETE", path: "/v1/sessions/" + seg(session) + "/messages/last", safety: unsent}, &out)
	return out.Message, err
}

// ClearMessages soft-deletes every message of the session; how many.
func (c *Client) ClearMessages(ctx context.Context, session string) (int, error) {
	var out struct {
		Removed int `json:"removed"`
	}
	// Unsent: a clear sent again after it committed would remove what was
	// stored after it.
	_, err := c.do(ctx, call{method: "DELETE", path: "/v1/sessions/" + seg(session) + "/messages", safety: unsent}, &out)
	return out.Removed, err
}

// Ready is nil when the server answers /readyz (storage reachable).
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, call{method: "GET", path: "/readyz", safety: resend}, nil)
	return err
}

// encodeHistory is the store body, checked before it is sent with the
// library's own check (msgcheck.Messages): the JSON encoder
// would turn invalid UTF-8 into U+FFFD, changing what the caller gave.
func encodeHistory(msgs []models.HistoryMessage) ([]byte, error) {
	if err := msgcheck.Messages(msgs, false); err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = m.AppendJSON(b); err != nil {
			return nil, &models.FieldError{Index: i, Reason: err.Error()}
		}
	}
	return append(b, ']'), nil
}
