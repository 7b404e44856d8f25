package remstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/internal/one"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

// embedded is the Store on the library: every call goes to st.
type embedded struct {
	st *sessionstore.Store
	db *repository.DB // closed by Close when Open opened it
}

func (e *embedded) Load(ctx context.Context, session string, opts ...LoadOptions) (History, error) {
	o, err := one.Of(opts)
	if err != nil {
		return History{}, err
	}
	h := History{Last: models.EmptySession}
	h.Messages, err = e.st.Load(ctx, session, sessionstore.LoadOptions{Extras: true, NoCompress: o.Full, LastN: o.LastN,
		Since: o.Since, OnLast: func(v string) { h.Last = v }})
	if h.Messages == nil && err == nil {
		h.Messages = []models.HistoryMessage{}
	}
	return h, err
}

func (e *embedded) Append(ctx context.Context, session string, msgs []models.HistoryMessage, opts ...AppendOptions) (Appended, error) {
	o, err := one.Of(opts)
	if err != nil {
		return Appended{}, err
	}
	res, err := e.st.Store(ctx, session, msgs, sessionstore.StoreOptions{ExpectLast: o.IfLast})
	return Appended{SessionID: res.SessionID, Keys: res.Keys, Last: res.Last}, err
}

func (e *embedded) Lookup(ctx context.Context, key string) (string, error) {
	return e.st.Lookup(ctx, key)
}

func (e *embedded) Pop(ctx context.Context, session string) (models.HistoryMessage, error) {
	m, ok, err := e.st.PopMessage(ctx, session)
	if err == nil && !ok {
		err = fmt.Errorf("session %q has no message to pop: %w", session, ErrNotFound)
	}
	return m, err
}

func (e *embedded) Clear(ctx context.Context, session string) (int, error) {
	n, err := e.st.ClearMessages(ctx, session)
	if errors.Is(err, ErrNotFound) {
		return 0, nil // nothing to clear
	}
	return n, err
}

func (e *embedded) Close() error {
	if e.db == nil {
		return nil
	}
	return e.db.Close()
}

// RecordCall writes the call to the session's audit dump when
// DEBUG_AUDIT_SESSION is set (the process environment, read at each call;
// DEBUG_AUDIT_DIR says where).
func (e *embedded) RecordCall(ctx context.Context, session string, r sdk.CallRecord) error {
	cfg, err := settings.Load(settings.Options{NoDotEnv: true})
	if err != nil || !cfg.AuditEnabled {
		return err
	}
	if r.CallID == "" {
		r.CallID = audit.NewCallID()
	}
	// The dump is named by the session's UUID, never by the name as given:
	// another tenant's session may be named alike.
	sid, err := e.st.ResolveID(ctx, session)
	if err != nil {
		return err
	}
	return audit.Append(ctx, cfg.AuditDir, sid.String(), audit.Invocation{AgentName: r.Agent, Timestamp: r.Timestamp, Prompt: r.Prompt,
		RawSessionHistory: r.History, Exchange: r.Exchange})
}
