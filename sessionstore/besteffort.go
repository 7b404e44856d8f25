package sessionstore

import (
	"context"
	"errors"
	"log/slog"

	"github.com/remstore/remstore/models"
)

// BestEffort wraps a store for callers that must not break a stream:
// errors are logged and the Python service's fallback is returned instead.
type BestEffort struct {
	Store *Store
	Log   *slog.Logger // nil = slog.Default()
}

func (b BestEffort) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// Append stores and returns msgs as given; failures are logged.
func (b BestEffort) Append(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, o StoreOptions) []models.HistoryMessage {
	if _, err := b.Store.Store(ctx, sessionKey, msgs, o); err != nil {
		b.log().Error("remstore: store failed", "session", sessionKey, "messages", len(msgs), "err", err)
	}
	return msgs
}

// Load returns the history, or an empty list when loading fails.
func (b BestEffort) Load(ctx context.Context, sessionKey string, o LoadOptions) []models.HistoryMessage {
	out, err := b.Store.Load(ctx, sessionKey, o)
	if err != nil {
		b.log().Error("remstore: load failed", "session", sessionKey, "err", err)
		return []models.HistoryMessage{}
	}
	return out
}

// Lookup returns the full text and whether it was found; errors are logged.
func (b BestEffort) Lookup(ctx context.Context, key string) (string, bool) {
	s, err := b.Store.Lookup(ctx, key)
	if err != nil && !errors.Is(err, ErrNotFound) {
		b.log().Error("remstore: lookup failed", "key", key, "err", err)
	}
	return s, err == nil
}
