package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Turn is what Middleware puts in the request context: the history the agent
// call should see, and the messages the handler wants stored after it.
type Turn struct {
	SessionID string
	// History is the session as loaded (long assistant answers compressed).
	History []models.HistoryMessage
	// Messages is History converted for pydantic-ai, system prompt first;
	// convert.JSON-compatible values.
	Messages []convert.Message

	mu      sync.Mutex
	pending []models.HistoryMessage
}

// Record queues messages (the user's prompt, the agent's answer, tool
// results) to be stored, in one transaction, when the handler returns. On a
// nil Turn (a request without a session) it does nothing, so handlers need
// not check.
func (t *Turn) Record(msgs ...models.HistoryMessage) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, msgs...)
}

type turnKey struct{}

// TurnFrom returns the Turn of a request that went through Middleware.
func TurnFrom(ctx context.Context) (*Turn, bool) {
	t, ok := ctx.Value(turnKey{}).(*Turn)
	return t, ok
}

// MiddlewareOptions configures Middleware.
type MiddlewareOptions struct {
	// Store returns the store for a request (bound to its user); required.
	Store func(r *http.Request) (*sessionstore.Store, error)
	// SessionID picks the session of a request; default: the X-Session-Id header.
	SessionID func(r *http.Request) string
	// SystemPrompt goes first in Turn.Messages.
	SystemPrompt string
	Logger       *slog.Logger
}

// Middleware loads the session's history into the request context before the
// handler and stores what the handler recorded after it. Storage problems
// are logged, never turned into an error response (SPEC §8's best effort):
// a failed load gives an empty history. Requests without a session id pass
// through untouched.
func Middleware(o MiddlewareOptions) func(http.Handler) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	pick := o.SessionID
	if pick == nil {
		pick = func(r *http.Request) string { return r.Header.Get("X-Session-Id") }
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := pick(r)
			if sid == "" {
				next.ServeHTTP(w, r)
				return
			}
			st, err := o.Store(r)
			if err != nil {
				log.Error("remstore middleware: no store", "err", err)
				next.ServeHTTP(w, r)
				return
			}
			be := sessionstore.BestEffort{Store: st, Log: log}
			t := &Turn{SessionID: sid, History: be.Load(r.Context(), sid, sessionstore.LoadOptions{})}
			t.Messages = convert.Convert(t.History, convert.Options{SystemPrompt: o.SystemPrompt})
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), turnKey{}, t)))
			t.mu.Lock()
			pending := t.pending
			t.mu.Unlock()
			if len(pending) > 0 {
				// The request may be cancelled once the response is written;
				// the turn is stored regardless.
				be.StoreMessages(context.WithoutCancel(r.Context()), sid, pending, "")
			}
		})
	}
}
