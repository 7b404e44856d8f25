package sessionstore

import (
	"context"
	"errors"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
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

// Expand restores every compressed message of msgs by key (see Expand).
func (s *Store) Expand(ctx context.Context, msgs []models.HistoryMessage) ([]models.HistoryMessage, error) {
	return Expand(ctx, s, msgs)
}
