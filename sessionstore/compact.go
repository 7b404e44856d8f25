package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/remstore/remstore/models"
)

// Summarizer condenses messages into one text (an LLM call in production).
type Summarizer func(ctx context.Context, msgs []models.HistoryMessage) (string, error)

// CompactOptions controls Compact.
type CompactOptions struct {
	KeepLast int // messages left after the summary (a tool run is never split)
}

// Usage sums per-turn token usage (metadata.usage of each message).
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	Turns        int   `json:"turns"` // messages that carried usage
}

// ErrNothingToCompact: Compact found fewer messages than it must keep. It
// is a no-op, not a failure; nothing is written.
var ErrNothingToCompact = errors.New("nothing to compact")

// Compact summarizes what a load returns today, except the last o.KeepLast
// messages, and appends the summary (metadata.compaction = true,
// compacts_before = the position of the first message kept). Later loads
// return the summary and what follows it, without the summaries before it,
// which it covers (a load showed the last one first); every message stays in the table
// and recoverable by its key. A tool run is never split: the cut moves back to
// the assistant message that started it. The summarizer runs outside any
// transaction (it may be a slow model call); the summary is written as any
// store is, into a session that must still be the tenant's.
func (s *Store) Compact(ctx context.Context, sessionKey string, summarize Summarizer, o CompactOptions) (models.HistoryMessage, error) {
	if err := s.on(); err != nil {
		return models.HistoryMessage{}, err
	}
	sid, _, err := s.sessionOf(ctx, sessionKey)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	rows, err := s.allRows(ctx, s.db, sid)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	cut, covered, err := compactionCut(rows, o.KeepLast)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	text, err := summarize(ctx, covered)
	if err != nil {
		return models.HistoryMessage{}, fmt.Errorf("summarize: %w", err)
	}
	msg := models.HistoryMessage{Role: models.RoleAssistant, Content: text}
	if err := validateBatch([]models.HistoryMessage{msg}, false); err != nil {
		return models.HistoryMessage{}, fmt.Errorf("summary: %w", err)
	}
	p, err := s.plan(sid, sessionKey, []models.HistoryMessage{msg}, "",
		writeOpts{extraMeta: models.JSONMap{"compaction": true, "compacts_before": cut}})
	if err != nil {
		return models.HistoryMessage{}, err
	}
	_, err = s.write(ctx, s.db, p)
	return msg, err
}

// compactionCut picks the position of the first row kept after a new
// compaction and the messages the summary must cover: what a load shows today
// (a previous summary first) except the last keepLast, the cut moved back over
// tool results so a tool run stays with the assistant message that started it.
func compactionCut(rows []storedRow, keepLast int) (int, []models.HistoryMessage, error) {
	var live []int
	from := 0
	if s, f, ok := compactionStart(rows); ok {
		live, from = append(live, s), f
	}
	for p := from; p < len(rows); p++ {
		if !rows[p].Deleted && !rows[p].Compaction {
			live = append(live, p)
		}
	}
	k := len(live) - max(keepLast, 0)
	for k > 0 && k < len(live) && rows[live[k]].Role.IsTool() {
		k--
	}
	if keepLast < 0 {
		return 0, nil, fieldErr(-1, "keep_last", "must be >= 0")
	}
	if k <= 0 {
		return 0, nil, ErrNothingToCompact
	}
	cut := len(rows)
	if k < len(live) {
		cut = live[k]
	}
	covered := make([]models.HistoryMessage, 0, k)
	for _, p := range live[:k] {
		covered = append(covered, toHistory(rows[p], false, false))
	}
	return cut, covered, nil
}

// SessionUsage sums the token usage stored with the session's messages.
func (s *Store) SessionUsage(ctx context.Context, sessionKey string) (Usage, error) {
	if err := s.on(); err != nil {
		return Usage{}, err
	}
	sid, _, err := s.sessionOf(ctx, sessionKey)
	if err != nil {
		return Usage{}, err
	}
	rows, err := s.allRows(ctx, s.db, sid)
	if err != nil {
		return Usage{}, err
	}
	return sumUsage(rows), nil
}

func sumUsage(rows []storedRow) Usage {
	var u Usage
	for _, r := range rows {
		var m map[string]any
		if r.Deleted || len(r.Usage) == 0 || decodeNumber(r.Usage, &m) != nil || m == nil {
			continue
		}
		in, _ := asInt(m["input_tokens"])
		outp, _ := asInt(m["output_tokens"])
		tot, ok := asInt(m["total_tokens"])
		if !ok {
			tot = in + outp
		}
		u.InputTokens += int64(in)
		u.OutputTokens += int64(outp)
		u.TotalTokens += int64(tot)
		u.Turns++
	}
	return u
}

// DeterministicSummary is a summarizer for tests and the CLI: the roles and
// the first words of each message, so its output is predictable.
func DeterministicSummary(_ context.Context, msgs []models.HistoryMessage) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Summary of %d earlier messages:", len(msgs))
	for _, m := range msgs {
		words := strings.Fields(m.Content)
		if len(words) > 8 {
			words = words[:8]
		}
		fmt.Fprintf(&b, "\n- %s: %s", m.Role, strings.Join(words, " "))
	}
	return b.String(), nil
}

func decodeNumber(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
