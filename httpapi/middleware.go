package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
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
	call    audit.Exchange
}

// RecordCall adds what the handler knows of its model call (the model, its
// settings, the tools offered, the usage, the API's request or response)
// to the call's audit record, which Middleware writes when auditing is on
// (what the agent was given, what it recorded and how long it took are
// recorded without it). Set fields replace earlier ones.
func (t *Turn) RecordCall(ex audit.Exchange) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	audit.Merge(&t.call, ex)
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
	// AgentName is recorded in the audit dump.
	AgentName string
	// Audit records each request's call in the session's audit dump in
	// AuditDir: the history given, the pydantic-ai messages sent,
	// what the handler recorded, the handler's time, and what it added
	// with Turn.RecordCall. Unset, DEBUG_AUDIT_SESSION and DEBUG_AUDIT_DIR
	// decide (the process environment, read once).
	Audit    *bool
	AuditDir string
	Logger   *slog.Logger
}

// Middleware loads the session's history into the request context before the
// handler and stores what the handler recorded after it. Storage problems
// are logged, never turned into an error response:
// a failed load gives an empty history. Requests without a session id pass
// through untouched.
func Middleware(o MiddlewareOptions) func(http.Handler) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if o.Audit == nil {
		cfg, err := settings.Load(settings.Options{NoDotEnv: true})
		on := err == nil && cfg.AuditEnabled
		o.Audit = &on
		if o.AuditDir == "" {
			o.AuditDir = cfg.AuditDir
		}
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
			start := time.Now()
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), turnKey{}, t)))
			took := float64(time.Since(start).Microseconds()) / 1000
			t.mu.Lock()
			pending, call := t.pending, t.call
			t.mu.Unlock()
			if *o.Audit {
				recordTurn(context.WithoutCancel(r.Context()), o, st, t, pending, call, took, log)
			}
			if len(pending) > 0 {
				// The request may be cancelled once the response is written;
				// the turn is stored regardless.
				be.Append(context.WithoutCancel(r.Context()), sid, pending, sessionstore.StoreOptions{})
			}
		})
	}
}

// recordTurn writes the middleware's record of one request's call: what
// the handler did not say is what the middleware saw.
func recordTurn(ctx context.Context, o MiddlewareOptions, st *sessionstore.Store, t *Turn, pending []models.HistoryMessage, call audit.Exchange, took float64, log *slog.Logger) {
	// The dump is named by the session's UUID, never by the id as the
	// request spelled it: another tenant may spell its own session alike.
	sid, err := st.ResolveID(ctx, t.SessionID)
	if err != nil {
		log.Warn("remstore middleware: audit dump failed", "session", t.SessionID, "err", err)
		return
	}
	call.CallID = audit.NewCallID()
	if call.Request == nil {
		call.Request = convert.Marshal(t.Messages)
	}
	if call.Answer == nil && len(pending) > 0 {
		var b bytes.Buffer
		if models.EncodeHistory(&b, pending) == nil {
			call.Answer = b.Bytes()
		}
	}
	if call.LatencyMS == nil {
		call.LatencyMS = &took
	}
	prompt := ""
	for _, m := range pending {
		if m.Role == models.RoleUser && prompt == "" {
			prompt = m.Content
		}
		if m.Role == models.RoleAssistant {
			if raw, ok := m.ExtraRaw("model"); ok && call.Model == "" {
				_ = json.Unmarshal(raw, &call.Model)
			}
			if raw, ok := m.ExtraRaw("usage"); ok && call.Usage == nil {
				call.Usage = raw
			}
		}
	}
	inv := audit.Invocation{AgentName: o.AgentName, Prompt: prompt, RawSessionHistory: t.History, PydanticMessagesCount: len(t.Messages),
		SystemPrompt: o.SystemPrompt, Exchange: call}
	if err := audit.Append(ctx, o.AuditDir, sid.String(), inv); err != nil {
		log.Warn("remstore middleware: audit dump failed", "session", t.SessionID, "err", err)
	}
}
