package client

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/remstore/remstore/internal/one"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Agent is the sdk.Store on this client, the one an embedded store
// (remstore.Open) is: what a Go agent keeps its session in through serve.
// Load, Append, Lookup, Pop and Clear answer with the library's results
// and errors (sdk.ErrBadRequest, sdk.ErrNotFound, sdk.ErrMoved); Close
// closes the client's idle connections.
func (c *Client) Agent() sdk.Store { return &agentStore{c: c} }

type agentStore struct {
	c *Client
	// auditOffUntil: serve said it does not audit; model calls are not
	// sent to it until then (unix nanoseconds).
	auditOffUntil atomic.Int64
}

// auditRecheck is how long "serve does not audit" is believed.
const auditRecheck = 5 * time.Minute

func (a *agentStore) Load(ctx context.Context, session string, opts ...sdk.LoadOptions) (sdk.History, error) {
	o, err := one.Of(opts)
	if err != nil {
		return sdk.History{}, err
	}
	h := sdk.History{Last: models.EmptySession}
	h.Messages, err = a.c.Load(ctx, session, LoadOptions{Extras: true, NoCompress: o.Full, LastN: o.LastN, Since: o.Since,
		OnLast: func(v string) { h.Last = v }})
	if errors.Is(err, ErrNotFound) {
		return sdk.History{Messages: []models.HistoryMessage{}, Last: models.EmptySession}, nil // a new session
	}
	return h, err
}

func (a *agentStore) Append(ctx context.Context, session string, msgs []models.HistoryMessage, opts ...sdk.AppendOptions) (sdk.Appended, error) {
	o, err := one.Of(opts)
	if err != nil {
		return sdk.Appended{}, err
	}
	res, err := a.c.Store(ctx, session, msgs, StoreOptions{ExpectLast: o.IfLast})
	return sdk.Appended{SessionID: res.SessionID, Keys: res.Keys, Last: res.Last}, err
}

func (a *agentStore) Lookup(ctx context.Context, key string) (string, error) {
	return a.c.Lookup(ctx, key)
}

func (a *agentStore) Pop(ctx context.Context, session string) (models.HistoryMessage, error) {
	m, err := a.c.PopMessage(ctx, session)
	if err == nil && m == nil {
		err = &Error{Method: "DELETE", Path: "/v1/sessions/" + seg(session) + "/messages/last", Status: 404,
			Code: "not_found", Message: "the session has no message to pop"}
	}
	if err != nil {
		return models.HistoryMessage{}, err
	}
	return *m, nil
}

func (a *agentStore) Clear(ctx context.Context, session string) (int, error) {
	n, err := a.c.ClearMessages(ctx, session)
	if errors.Is(err, ErrNotFound) {
		return 0, nil // nothing to clear
	}
	return n, err
}

func (a *agentStore) Close() error {
	a.c.http.CloseIdleConnections()
	return nil
}

// RecordCall sends the call to serve's audit dump (POST
// /v1/sessions/{id}/audit), which keeps it when DEBUG_AUDIT_SESSION is set
// there; once serve said it does not audit, calls are not sent for a while.
func (a *agentStore) RecordCall(ctx context.Context, session string, r sdk.CallRecord) error {
	if time.Now().UnixNano() < a.auditOffUntil.Load() {
		return nil
	}
	rec := AuditRecord{Exchange: r.Exchange, AgentName: r.Agent, Prompt: r.Prompt, History: r.History, Timestamp: r.Timestamp}
	if rec.CallID != "" && rec.Prompt == "" && len(rec.History) == 0 {
		rec.Timestamp = time.Time{} // completing a load's call, which keeps the load's time
	}
	res, err := a.c.recordCall(ctx, session, rec)
	if err == nil && res.Auditing != nil && !*res.Auditing {
		a.auditOffUntil.Store(time.Now().Add(auditRecheck).UnixNano())
	}
	return err
}
