package repository

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// ErrInvalidTransition: a lifecycle change the state machine forbids.
var ErrInvalidTransition = errors.New("invalid status transition")

// SessionInfo is a session as callers see it; nothing here loads messages.
type SessionInfo struct {
	ID        uuid.UUID      `json:"id"`
	Name      string         `json:"name"`
	AgentName string         `json:"agent_name,omitempty"`
	Status    string         `json:"status"`
	Settings  map[string]any `json:"settings"`
	Metadata  map[string]any `json:"metadata"`
	UserID    string         `json:"user_id,omitempty"`
	TenantID  string         `json:"tenant_id,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func infoOf(s *models.Session) SessionInfo {
	in := SessionInfo{ID: s.ID, Status: s.Status, Metadata: map[string]any(s.Metadata), CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
	if in.Metadata == nil {
		in.Metadata = map[string]any{}
	}
	in.Settings, _ = in.Metadata["settings"].(map[string]any)
	if in.Settings == nil {
		in.Settings = map[string]any{}
	}
	for dst, src := range map[*string]*string{&in.Name: s.Name, &in.AgentName: s.AgentName, &in.UserID: s.UserID, &in.TenantID: s.TenantID} {
		if src != nil {
			*dst = *src
		}
	}
	return in
}

// transitions is the lifecycle: active may become completed, cancelled or
// error; those end the session (only a completed one may be reopened).
var transitions = map[string][]string{
	models.StatusActive:    {models.StatusCompleted, models.StatusCancelled, models.StatusError},
	models.StatusCompleted: {models.StatusActive},
}

// CheckTransition reports whether from -> to is allowed.
func CheckTransition(from, to string) error {
	if from == "" {
		from = models.StatusActive
	}
	for _, t := range transitions[from] {
		if t == to {
			return nil
		}
	}
	return fmt.Errorf("%w: %s -> %s", ErrInvalidTransition, from, to)
}

// ListOptions filters ListSessions. The tenant is the store's.
type ListOptions struct {
	UserID        string
	AgentName     string
	Statuses      []string // any of; empty = all
	CreatedAfter  time.Time
	CreatedBefore time.Time
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	Limit         int    // default 20, at most 500
	Cursor        string // from the previous page's NextCursor
}

// ListResult is one page of sessions, newest first.
type ListResult struct {
	Sessions   []SessionInfo `json:"sessions"`
	Total      int           `json:"total"`
	Limit      int           `json:"limit"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// Listing limits.
const (
	DefaultListLimit = 20
	MaxListLimit     = 500
)

type cursor struct {
	CreatedAt time.Time `json:"c"`
	ID        uuid.UUID `json:"i"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, fieldErr(-1, "cursor", "not a cursor this store returned")
	}
	return c, nil
}

func (o *ListOptions) normalize() error {
	switch {
	case o.Limit == 0:
		o.Limit = DefaultListLimit
	case o.Limit < 0 || o.Limit > MaxListLimit:
		return fieldErr(-1, "limit", "must be between 1 and %d", MaxListLimit)
	}
	for _, st := range o.Statuses {
		if _, ok := map[string]bool{"active": true, "completed": true, "cancelled": true, "error": true}[st]; !ok {
			return fieldErr(-1, "status", "%q is not active, completed, cancelled or error", st)
		}
	}
	return nil
}

// SessionUpdate changes a session; nil fields stay as they are. Settings are
// merged into metadata.settings; a nil value removes that setting.
type SessionUpdate struct {
	Name      *string
	AgentName *string
	Settings  map[string]any
}

// ExpireOptions controls Expire.
type ExpireOptions struct {
	Idle   time.Duration // sessions not updated for longer than this
	Purge  bool          // delete them instead of marking them completed
	DryRun bool          // only report what would happen
	Now    time.Time     // zero = the store's clock
}

// ForkOptions controls Fork.
type ForkOptions struct {
	UpTo          int    // copy the first UpTo live messages; 0 = all
	NewSessionKey string // "" = a new random UUID
}

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

// --- database implementation ---

// visible limits a sessions query (alias "session") to live sessions the
// store's tenant may see: those it created and those holding its messages.
func (s *Store) visible(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where("session.deleted_at IS NULL").WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("session.tenant_id = ?", s.userID).
			WhereOr("EXISTS (SELECT 1 FROM messages m WHERE m.session_id = session.id AND m.tenant_id = ?)", s.userID)
	})
}

func (s *Store) getSession(ctx context.Context, db bun.IDB, sid uuid.UUID) (*models.Session, error) {
	sess := new(models.Session)
	q := db.NewSelect().Model(sess).Where("session.id = ?", sid)
	if err := s.visible(q).Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("session %s: %w", sid, interpret(err))
	}
	return sess, nil
}

// GetSession returns the session and its history (as Load with o returns
// it). ErrNotFound for an unknown session or one the tenant cannot see.
func (s *Store) GetSession(ctx context.Context, sessionKey string, o LoadOptions) (SessionInfo, []models.HistoryMessage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return SessionInfo{}, nil, err
	}
	sess, err := s.getSession(ctx, s.db, sid)
	if err != nil {
		return SessionInfo{}, nil, err
	}
	h, err := s.Load(ctx, sessionKey, o)
	return infoOf(sess), h, err
}

// ListSessions returns one page of the tenant's sessions, newest first.
func (s *Store) ListSessions(ctx context.Context, o ListOptions) (ListResult, error) {
	if err := o.normalize(); err != nil {
		return ListResult{}, err
	}
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		q = s.visible(q)
		if o.UserID != "" {
			q = q.Where("session.user_id = ?", o.UserID)
		}
		if o.AgentName != "" {
			q = q.Where("session.agent_name = ?", o.AgentName)
		}
		if len(o.Statuses) > 0 {
			q = q.Where("session.status IN (?)", bun.List(o.Statuses))
		}
		for _, c := range []struct {
			t  time.Time
			op string
		}{{o.CreatedAfter, "session.created_at > ?"}, {o.CreatedBefore, "session.created_at < ?"},
			{o.UpdatedAfter, "session.updated_at > ?"}, {o.UpdatedBefore, "session.updated_at < ?"}} {
			if !c.t.IsZero() {
				q = q.Where(c.op, c.t.UTC())
			}
		}
		return q
	}
	total, err := filter(s.db.NewSelect().Model((*models.Session)(nil))).Count(ctx)
	if err != nil {
		return ListResult{}, fmt.Errorf("list sessions: %w", err)
	}
	var rows []models.Session
	q := filter(s.db.NewSelect().Model(&rows)).OrderExpr("session.created_at DESC, session.id DESC").Limit(int64(o.Limit) + 1)
	if o.Cursor != "" {
		c, err := decodeCursor(o.Cursor)
		if err != nil {
			return ListResult{}, err
		}
		q = q.Where("(session.created_at < ? OR (session.created_at = ? AND session.id < ?))", c.CreatedAt, c.CreatedAt, c.ID)
	}
	if err := q.Scan(ctx); err != nil {
		return ListResult{}, fmt.Errorf("list sessions: %w", err)
	}
	res := ListResult{Total: int(total), Limit: o.Limit, Sessions: []SessionInfo{}}
	for i := range rows {
		if i == o.Limit {
			last := rows[i-1]
			res.NextCursor = encodeCursor(cursor{CreatedAt: last.CreatedAt.UTC(), ID: last.ID})
			break
		}
		res.Sessions = append(res.Sessions, infoOf(&rows[i]))
	}
	return res, nil
}

// modifySession runs fn on the session row inside a transaction holding the
// session's write lock, then saves it.
func (s *Store) modifySession(ctx context.Context, sessionKey string, fn func(tx bun.Tx, sess *models.Session) error) (SessionInfo, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return SessionInfo{}, err
	}
	var out *models.Session
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if s.pg {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(sid)); err != nil {
				return err
			}
		}
		sess, err := s.getSession(ctx, tx, sid)
		if err != nil {
			return err
		}
		if sess.Metadata == nil {
			sess.Metadata = models.JSONMap{}
		}
		if err := fn(tx, sess); err != nil {
			return err
		}
		sess.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
		_, err = tx.NewUpdate().Model(sess).Column("name", "agent_name", "status", "metadata", "updated_at").WherePK().Exec(ctx)
		out = sess
		return err
	})
	if err != nil {
		return SessionInfo{}, err
	}
	return infoOf(out), nil
}

// SetStatus moves the session along its lifecycle. Cancelling or failing
// records the reason as a system message; the reason also goes to
// metadata.reason.
func (s *Store) SetStatus(ctx context.Context, sessionKey, status, reason string) (SessionInfo, error) {
	if err := checkText(-1, "reason", reason, 0); err != nil {
		return SessionInfo{}, err
	}
	return s.modifySession(ctx, sessionKey, func(tx bun.Tx, sess *models.Session) error {
		if err := CheckTransition(sess.Status, status); err != nil {
			return err
		}
		if (status == models.StatusCancelled || status == models.StatusError) && reason != "" {
			msg := models.HistoryMessage{Role: models.RoleSystem, Content: fmt.Sprintf("Session %s: %s", status, reason)}
			if _, err := s.storeTx(ctx, tx, sess.ID, sessionKey, []models.HistoryMessage{msg}, s.userID, writeOpts{allowInactive: true}); err != nil {
				return err
			}
		}
		sess.Status = status
		if reason != "" {
			sess.Metadata["reason"] = reason
		} else {
			delete(sess.Metadata, "reason")
		}
		return nil
	})
}

// UpdateSession changes name, agent and settings.
func (s *Store) UpdateSession(ctx context.Context, sessionKey string, u SessionUpdate) (SessionInfo, error) {
	if u.Name != nil {
		if err := checkText(-1, "name", *u.Name, models.MaxSessionName); err != nil {
			return SessionInfo{}, err
		}
	}
	if u.AgentName != nil {
		if err := checkText(-1, "agent_name", *u.AgentName, models.MaxAgentName); err != nil {
			return SessionInfo{}, err
		}
	}
	if u.Settings != nil {
		b, err := json.Marshal(u.Settings)
		if err != nil {
			return SessionInfo{}, fieldErr(-1, "settings", "not JSON: %v", err)
		}
		if err := checkJSON(-1, "settings", b, MaxToolArgsBytes); err != nil {
			return SessionInfo{}, err
		}
	}
	return s.modifySession(ctx, sessionKey, func(_ bun.Tx, sess *models.Session) error {
		applyUpdate(sess, u)
		return nil
	})
}

func applyUpdate(sess *models.Session, u SessionUpdate) {
	if u.Name != nil {
		sess.Name = models.Ptr(*u.Name)
	}
	if u.AgentName != nil {
		sess.AgentName = models.Ptr(*u.AgentName)
	}
	if u.Settings != nil {
		cur, _ := sess.Metadata["settings"].(map[string]any)
		next := maps.Clone(cur)
		if next == nil {
			next = map[string]any{}
		}
		for k, v := range u.Settings {
			if v == nil {
				delete(next, k)
			} else {
				next[k] = v
			}
		}
		sess.Metadata["settings"] = next
	}
}

// DeleteSession soft-deletes the session and the tenant's messages in it
// (deleted_at set, as the peer does), or with purge removes the tenant's
// messages and, when no other tenant's remain, the session row.
func (s *Store) DeleteSession(ctx context.Context, sessionKey string, purge bool) error {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := s.getSession(ctx, tx, sid); err != nil {
			return err
		}
		return s.deleteTx(ctx, tx, sid, purge)
	})
}

func (s *Store) deleteTx(ctx context.Context, tx bun.Tx, sid uuid.UUID, purge bool) error {
	now := s.now().UTC()
	if purge {
		if _, err := tx.NewDelete().Model((*models.Message)(nil)).Where("session_id = ? AND tenant_id = ?", sid, s.userID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*models.Session)(nil)).Where("id = ?", sid).
			Where("NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = ?)", sid).Exec(ctx)
		return err
	}
	if _, err := tx.NewUpdate().Model((*models.Message)(nil)).Set("deleted_at = ?", now).
		Where("session_id = ? AND tenant_id = ? AND deleted_at IS NULL", sid, s.userID).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewUpdate().Model((*models.Session)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
		Where("id = ?", sid).Where("(tenant_id = ? OR tenant_id IS NULL)", s.userID).Exec(ctx)
	return err
}

// Expire marks the tenant's active sessions idle for longer than o.Idle as
// completed with metadata.reason "idle_timeout" (or purges them) and returns
// them. With DryRun nothing changes.
func (s *Store) Expire(ctx context.Context, o ExpireOptions) ([]SessionInfo, error) {
	if o.Idle <= 0 {
		return nil, fieldErr(-1, "idle", "must be a positive duration")
	}
	now := o.Now
	if now.IsZero() {
		now = s.now()
	}
	var rows []models.Session
	err := s.db.NewSelect().Model(&rows).Where("session.status = ?", models.StatusActive).
		Where("session.deleted_at IS NULL").Where("session.tenant_id = ?", s.userID).
		Where("session.updated_at < ?", now.Add(-o.Idle).UTC()).OrderExpr("session.updated_at, session.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	out := make([]SessionInfo, 0, len(rows))
	for i := range rows {
		out = append(out, infoOf(&rows[i]))
		if o.DryRun {
			continue
		}
		key := rows[i].ID.String()
		if o.Purge {
			err = s.DeleteSession(ctx, key, true)
		} else {
			_, err = s.modifySession(ctx, key, func(_ bun.Tx, sess *models.Session) error {
				if sess.Status != models.StatusActive {
					return nil // changed since the select
				}
				sess.Status = models.StatusCompleted
				sess.Metadata["reason"] = "idle_timeout"
				return nil
			})
		}
		if err != nil {
			return out, fmt.Errorf("expire %s: %w", key, err)
		}
	}
	return out, nil
}

// Fork copies the first o.UpTo live messages of the session into a new
// session: new row ids, fresh keys that resolve in the new session, created_at
// kept, and metadata.forked_from on the new session. The original is untouched.
func (s *Store) Fork(ctx context.Context, sessionKey string, o ForkOptions) (SessionInfo, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return SessionInfo{}, err
	}
	newKey, nid, err := o.target()
	if err != nil {
		return SessionInfo{}, err
	}
	var out *models.Session
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		src, err := s.getSession(ctx, tx, sid)
		if err != nil {
			return err
		}
		if n, err := tx.NewSelect().Model((*models.Session)(nil)).Where("id = ?", nid).Count(ctx); err != nil || n > 0 {
			if err == nil {
				err = fieldErr(-1, "new_session_id", "session %s already exists", nid)
			}
			return err
		}
		rows, err := s.rowsTx(ctx, tx, sid)
		if err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		out = forkSession(src, nid, newKey, sessionKey, o.UpTo, s.userID, now)
		copies := forkRows(rows, nid, o.UpTo, s.userID)
		if _, err := tx.NewInsert().Model(out).Exec(ctx); err != nil {
			return err
		}
		for lo := 0; lo < len(copies); lo += 1000 {
			part := copies[lo:min(lo+1000, len(copies))]
			if _, err := tx.NewInsert().Model(&part).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return SessionInfo{}, fmt.Errorf("fork %s: %w", sid, err)
	}
	return infoOf(out), nil
}

// target checks o and names the new session: o.NewSessionKey, or a new UUID.
func (o ForkOptions) target() (string, uuid.UUID, error) {
	if o.UpTo < 0 {
		return "", uuid.Nil, fieldErr(-1, "up_to", "must be >= 0")
	}
	key := o.NewSessionKey
	if key == "" {
		key = uuid.NewString()
	}
	id, err := SessionUUID(key)
	return key, id, err
}

// rowsTx reads the tenant's full rows of a session, for copying.
func (s *Store) rowsTx(ctx context.Context, db bun.IDB, sid uuid.UUID) ([]models.Message, error) {
	var ms []models.Message
	err := db.NewSelect().Model(&ms).Where("session_id = ? AND tenant_id = ?", sid, s.userID).OrderExpr("created_at, id").Scan(ctx)
	return ms, err
}

// forkSession builds the new session row.
func forkSession(src *models.Session, nid uuid.UUID, newKey, srcKey string, upTo int, tenant string, now time.Time) *models.Session {
	meta := models.JSONMap{}
	for k, v := range src.Metadata {
		if k != "reason" && k != "forked_from" {
			meta[k] = v
		}
	}
	meta["forked_from"] = map[string]any{"session_id": src.ID.String(), "session_key": srcKey, "up_to": upTo, "at": models.FormatTimestamp(now)}
	return &models.Session{ID: nid, Name: models.Ptr(newKey), Description: src.Description, AgentName: src.AgentName,
		Status: models.StatusActive, GraphEdges: src.GraphEdges, Metadata: meta, Tags: src.Tags,
		UserID: src.UserID, TenantID: models.Ptr(tenant), CreatedAt: now, UpdatedAt: now}
}

// forkRows copies the first upTo live rows with new ids and keys for their
// new positions; a compaction summary's boundary is mapped to the new positions.
func forkRows(rows []models.Message, nid uuid.UUID, upTo int, tenant string) []*models.Message {
	newPos := map[int]int{}
	var out []*models.Message
	for p, r := range rows {
		if r.DeletedAt != nil {
			continue
		}
		if upTo > 0 && len(out) == upTo {
			break
		}
		newPos[p] = len(out)
		m := r
		m.ID, m.SessionID, m.TenantID = uuid.New(), nid, models.Ptr(tenant)
		meta := maps.Clone(m.Metadata)
		if meta == nil {
			meta = models.JSONMap{}
		}
		meta["message_index"] = len(out)
		meta["entity_key"] = compressor.BuildKey(nid.String(), len(out))
		if k, ok := asInt(meta["compacts_before"]); ok {
			n := 0
			for q := range k {
				if _, kept := newPos[q]; kept {
					n++
				}
			}
			meta["compacts_before"] = n
		}
		m.Metadata = meta
		out = append(out, &m)
	}
	return out
}

// Compact summarizes what a load returns today, except the last o.KeepLast
// messages, and appends the summary (metadata.compaction = true,
// compacts_before = the position of the first message kept). Later loads
// return the summary and what follows it; every message stays in the table
// and recoverable by its key. A tool run is never split: the cut moves back to
// the assistant message that started it.
func (s *Store) Compact(ctx context.Context, sessionKey string, summarize Summarizer, o CompactOptions) (models.HistoryMessage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	rows, err := s.rows(ctx, sid)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	return compact(ctx, rows, summarize, o, func(msg models.HistoryMessage, wo writeOpts) error {
		return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := s.storeTx(ctx, tx, sid, sessionKey, []models.HistoryMessage{msg}, s.userID, wo)
			return err
		})
	})
}

// compact is Compact for either store: rows as they stand, and how to
// append the summary with its compaction metadata.
func compact(ctx context.Context, rows []storedRow, summarize Summarizer, o CompactOptions,
	appendSummary func(models.HistoryMessage, writeOpts) error) (models.HistoryMessage, error) {
	cut, covered, err := compactionCut(rows, o.KeepLast)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	text, err := summarize(ctx, covered)
	if err != nil {
		return models.HistoryMessage{}, fmt.Errorf("summarize: %w", err)
	}
	msg := models.HistoryMessage{Role: models.RoleAssistant, Content: text}
	return msg, appendSummary(msg, writeOpts{extraMeta: models.JSONMap{"compaction": true, "compacts_before": cut}})
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
	if k <= 0 {
		return 0, nil, fieldErr(-1, "keep_last", "nothing to compact")
	}
	cut := len(rows)
	if k < len(live) {
		cut = live[k]
	}
	covered := make([]models.HistoryMessage, 0, k)
	for _, p := range live[:k] {
		covered = append(covered, toHistory(rows[p]))
	}
	return cut, covered, nil
}

// SessionUsage sums the token usage stored with the session's messages.
func (s *Store) SessionUsage(ctx context.Context, sessionKey string) (Usage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return Usage{}, err
	}
	rows, err := s.rows(ctx, sid)
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
