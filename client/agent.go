package client

import (
	"context"
	"errors"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
)

// Agent is the sdk.Store on this client: what a Go agent on a model SDK
// adapter (sdk/...) keeps its session in through serve.
func (c *Client) Agent() sdk.Guarded { return agentStore{c} }

type agentStore struct{ c *Client }

func (a agentStore) LoadAt(ctx context.Context, session string) ([]models.HistoryMessage, string, error) {
	last := sessionstore.Empty
	h, err := a.c.Load(ctx, session, LoadOptions{Extras: true, OnLast: func(v string) { last = v }})
	if errors.Is(err, ErrNotFound) {
		return []models.HistoryMessage{}, sessionstore.Empty, nil // a new session
	}
	return h, last, err
}

func (a agentStore) AppendIf(ctx context.Context, session string, msgs []models.HistoryMessage, expectLast string) (string, error) {
	res, err := a.c.StoreWith(ctx, session, msgs, StoreOptions{ExpectLast: expectLast})
	return res.Last, err
}

func (a agentStore) Load(ctx context.Context, session string) ([]models.HistoryMessage, error) {
	h, err := a.c.Load(ctx, session, LoadOptions{Extras: true})
	if errors.Is(err, ErrNotFound) {
		return []models.HistoryMessage{}, nil // a new session
	}
	return h, err
}

func (a agentStore) Append(ctx context.Context, session string, msgs []models.HistoryMessage) error {
	_, err := a.c.Store(ctx, session, msgs, "")
	return err
}

func (a agentStore) Lookup(ctx context.Context, key string) (string, error) {
	full, err := a.c.Lookup(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return "", &models.FieldError{Index: -1, Field: "key", Reason: "no message for this key"}
	}
	return full, err
}

func (a agentStore) Clear(ctx context.Context, session string) error {
	_, err := a.c.ClearMessages(ctx, session)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// RecordCall sends the call to serve's audit dump (POST
// /v1/sessions/{id}/audit), which keeps it when DEBUG_AUDIT_SESSION is set
// there.
func (a agentStore) RecordCall(ctx context.Context, session string, r sdk.CallRecord) error {
	rec := AuditRecord{Exchange: r.Exchange, Prompt: r.Prompt, History: r.History, Timestamp: r.Timestamp}
	if rec.CallID != "" && rec.Prompt == "" && len(rec.History) == 0 {
		rec.Timestamp = time.Time{} // completing a load's call, which keeps the load's time
	}
	_, err := a.c.RecordCall(ctx, session, rec)
	return err
}
