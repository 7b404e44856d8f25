package repository

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// SessionStore is the session message store: the database Store and the
// in-memory MemoryStore both implement it, and one test suite checks both.
type SessionStore interface {
	UserID() string
	StoreMessages(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, userID string) (StoreResult, error)
	Load(ctx context.Context, sessionKey string, o LoadOptions) ([]models.HistoryMessage, error)
	LoadEach(ctx context.Context, sessionKey string, o LoadOptions, fn func(models.HistoryMessage) error) error
	Lookup(ctx context.Context, key string) (string, error)
	LookupIndex(ctx context.Context, sessionKey string, n int) (string, error)
	EnsureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error)
	RenameSession(ctx context.Context, sessionKey, name string) error
	GetSession(ctx context.Context, sessionKey string, o LoadOptions) (SessionInfo, []models.HistoryMessage, error)
	ListSessions(ctx context.Context, o ListOptions) (ListResult, error)
	SetStatus(ctx context.Context, sessionKey, status, reason string) (SessionInfo, error)
	UpdateSession(ctx context.Context, sessionKey string, u SessionUpdate) (SessionInfo, error)
	DeleteSession(ctx context.Context, sessionKey string, purge bool) error
	Expire(ctx context.Context, o ExpireOptions) ([]SessionInfo, error)
	Fork(ctx context.Context, sessionKey string, o ForkOptions) (SessionInfo, error)
	Compact(ctx context.Context, sessionKey string, summarize Summarizer, o CompactOptions) (models.HistoryMessage, error)
	SessionUsage(ctx context.Context, sessionKey string) (Usage, error)
}

var (
	_ SessionStore = (*Store)(nil)
	_ SessionStore = (*MemoryStore)(nil)
)

// Expand is the reload convenience: msgs with every compressed message
// restored to its full content by key. Messages whose key no longer resolves
// (deleted since) stay compressed.
func Expand(ctx context.Context, st interface {
	Lookup(context.Context, string) (string, error)
}, msgs []models.HistoryMessage) ([]models.HistoryMessage, error) {
	out := make([]models.HistoryMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m.Clone()
		key, ok := compressor.EntityKey(m)
		if !ok {
			continue
		}
		full, err := st.Lookup(ctx, key)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i] = compressor.Decompress(m, full)
	}
	return out, nil
}
