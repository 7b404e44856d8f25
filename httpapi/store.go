package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// sessionStore is what the handlers use of a session store bound to the requesting
// user; *sessionstore.Store implements it.
type sessionStore interface {
	SessionUUID(sessionKey string) (uuid.UUID, error)
	ResolveID(ctx context.Context, sessionKey string) (uuid.UUID, error)
	FillIDs(ctx context.Context, msgs []models.HistoryMessage, scope, key string) error
	Enabled() bool
	Store(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, o sessionstore.StoreOptions) (sessionstore.StoreResult, error)
	Load(ctx context.Context, sessionKey string, o sessionstore.LoadOptions) ([]models.HistoryMessage, error)
	LoadEach(ctx context.Context, sessionKey string, o sessionstore.LoadOptions, fn func(models.HistoryMessage) error) error
	Lookup(ctx context.Context, key string) (string, error)
	SessionInfo(ctx context.Context, sessionKey string) (sessionstore.SessionInfo, error)
	ListSessions(ctx context.Context, o sessionstore.ListOptions) (sessionstore.ListResult, error)
	SetStatus(ctx context.Context, sessionKey, status, reason string) (sessionstore.SessionInfo, error)
	UpdateSession(ctx context.Context, sessionKey string, u sessionstore.SessionUpdate) (sessionstore.SessionInfo, error)
	DeleteSession(ctx context.Context, sessionKey string, o sessionstore.DeleteOptions) error
	Fork(ctx context.Context, sessionKey string, o sessionstore.ForkOptions) (sessionstore.SessionInfo, error)
	PopMessage(ctx context.Context, sessionKey string) (models.HistoryMessage, bool, error)
	ClearMessages(ctx context.Context, sessionKey string) (int, error)
	SearchPage(ctx context.Context, o sessionstore.SearchOptions) (sessionstore.SearchResult, error)
	CatchUpSearch(ctx context.Context, o *sessionstore.SearchOptions) (bool, error)
}

var _ sessionStore = (*sessionstore.Store)(nil)
