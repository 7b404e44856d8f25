package repository

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// MemoryStore is the session message store without a database: the same
// behaviour as Store (keys, compression, lifecycle, fork, compaction), safe
// for concurrent use. It keeps its data to itself: what goes in is copied and
// normalized as a database would, and what comes out is a fresh copy.
type MemoryStore struct {
	userID string
	comp   *compressor.Compressor
	now    func() time.Time
	data   *memData // shared by every MemoryStore made with Tenant
}

type memData struct {
	mu       sync.RWMutex
	sessions map[uuid.UUID]*memSession
	keys     map[string]*models.Message // tenant + "\x00" + entity_key -> row
}

type memSession struct {
	row  models.Session
	msgs []*models.Message // every tenant's rows, in (created_at, id) order
}

// NewMemoryStore returns an empty in-memory store bound to o.UserID.
func NewMemoryStore(o StoreOptions) (*MemoryStore, error) {
	s, err := NewStore(nil, o)
	if err != nil {
		return nil, err
	}
	return &MemoryStore{userID: s.userID, comp: s.comp, now: s.now,
		data: &memData{sessions: map[uuid.UUID]*memSession{}, keys: map[string]*models.Message{}}}, nil
}

// Tenant returns a store on the same data bound to another user id.
func (m *MemoryStore) Tenant(userID string) (*MemoryStore, error) {
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return nil, err
	}
	c := *m
	c.userID = userID
	return &c, nil
}

// UserID returns the tenant.
func (m *MemoryStore) UserID() string { return m.userID }

// normalize copies v through JSON, as storing it in a database would.
func normalize[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

func cloneSession(s models.Session) models.Session {
	s.Metadata = normalize(s.Metadata)
	s.GraphEdges = normalize(s.GraphEdges)
	s.Tags = slices.Clone(s.Tags)
	return s
}

func (m *MemoryStore) tenantRows(ms *memSession) []storedRow {
	var out []storedRow
	for _, r := range ms.msgs {
		if r.TenantID != nil && *r.TenantID == m.userID {
			out = append(out, rowFromMessage(r))
		}
	}
	return out
}

func (m *MemoryStore) visible(ms *memSession) bool {
	if ms == nil || ms.row.DeletedAt != nil {
		return false
	}
	if ms.row.TenantID != nil && *ms.row.TenantID == m.userID {
		return true
	}
	for _, r := range ms.msgs {
		if r.TenantID != nil && *r.TenantID == m.userID {
			return true
		}
	}
	return false
}

// StoreMessages stores msgs as the next messages of the session, all or nothing.
func (m *MemoryStore) StoreMessages(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, userID string) (StoreResult, error) {
	return m.store(sessionKey, msgs, userID, writeOpts{})
}

func (m *MemoryStore) store(sessionKey string, msgs []models.HistoryMessage, userID string, wo writeOpts) (StoreResult, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return StoreResult{}, err
	}
	if userID == "" {
		userID = m.userID
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return StoreResult{SessionID: sid}, err
	}
	if err := validateBatch(msgs); err != nil {
		return StoreResult{SessionID: sid}, err
	}
	if len(msgs) == 0 {
		return StoreResult{SessionID: sid}, nil
	}
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	return m.storeLocked(sid, sessionKey, msgs, userID, wo)
}

func (m *MemoryStore) storeLocked(sid uuid.UUID, sessionKey string, msgs []models.HistoryMessage, userID string, wo writeOpts) (StoreResult, error) {
	res := StoreResult{SessionID: sid, Keys: make([]string, len(msgs)), IDs: make([]uuid.UUID, len(msgs))}
	now := m.now().UTC().Truncate(time.Microsecond)
	ms := m.data.sessions[sid]
	if ms == nil {
		ms = &memSession{row: models.Session{ID: sid, Name: models.Ptr(sessionKey), Status: models.StatusActive,
			UserID: models.Ptr(userID), TenantID: models.Ptr(m.userID), Metadata: models.JSONMap{},
			GraphEdges: models.JSONList{}, Tags: models.StringArray{}, CreatedAt: now, UpdatedAt: now}}
	}
	if ms.row.Status != models.StatusActive && !wo.allowInactive {
		return res, fmt.Errorf("store in session %s: %w: status is %q", sid, ErrSessionNotActive, ms.row.Status)
	}
	// ids already stored: a retry in this session and tenant, else an error
	skip := map[int]bool{}
	for i, msg := range msgs {
		if msg.ID == "" {
			continue
		}
		id := uuid.MustParse(msg.ID)
		for _, other := range m.data.sessions {
			for _, r := range other.msgs {
				if r.ID != id {
					continue
				}
				if other.row.ID != sid || *r.TenantID != m.userID {
					return res, fieldErr(i, "id", "already used by another message")
				}
				skip[i] = true
				res.IDs[i], res.Existing = id, res.Existing+1
				res.Keys[i], _ = r.Metadata["entity_key"].(string)
			}
		}
	}
	n := len(m.tenantRows(ms))
	base := now
	if len(ms.msgs) > 0 {
		if last := ms.msgs[len(ms.msgs)-1].CreatedAt; !base.After(last) {
			base = last.Add(time.Microsecond)
		}
	}
	var rows []*models.Message
	for i, msg := range msgs {
		if skip[i] {
			continue
		}
		idx := n + len(rows)
		key := compressor.BuildKey(sid.String(), idx)
		row, err := newRow(msg, sid, idx, key, userID, m.userID, base.Add(time.Duration(len(rows))*time.Microsecond))
		if err != nil {
			return res, &models.FieldError{Index: i, Reason: err.Error()}
		}
		for k, v := range wo.extraMeta {
			row.Metadata[k] = v
		}
		row.Metadata = normalize(row.Metadata)
		row.ToolCalls = models.NullJSON(bytes.Clone(row.ToolCalls))
		rows = append(rows, row)
		res.Keys[i], res.IDs[i] = key, row.ID
	}
	ms.msgs = append(ms.msgs, rows...)
	ms.row.UpdatedAt = now
	m.data.sessions[sid] = ms
	for _, r := range rows {
		m.data.keys[m.userID+"\x00"+r.Metadata["entity_key"].(string)] = r
	}
	return res, nil
}

// Load returns the tenant's history of the session (see Store.Load).
func (m *MemoryStore) Load(ctx context.Context, sessionKey string, o LoadOptions) ([]models.HistoryMessage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return nil, err
	}
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	ms := m.data.sessions[sid]
	if ms == nil {
		return []models.HistoryMessage{}, nil
	}
	return buildHistory(m.tenantRows(ms), sid, m.comp, o)
}

// LoadEach hands each message of Load to fn (the data is in memory already).
func (m *MemoryStore) LoadEach(ctx context.Context, sessionKey string, o LoadOptions, fn func(models.HistoryMessage) error) error {
	h, err := m.Load(ctx, sessionKey, o)
	for i := 0; err == nil && i < len(h); i++ {
		err = fn(h[i])
	}
	return err
}

// Lookup returns the full content behind a key (see Store.Lookup).
func (m *MemoryStore) Lookup(ctx context.Context, key string) (string, error) {
	k, err := compressor.ParseKey(key)
	if err != nil {
		return "", &models.FieldError{Index: -1, Field: "key", Reason: err.Error()}
	}
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	if r := m.data.keys[m.userID+"\x00"+k.Raw]; r != nil && r.DeletedAt == nil {
		return r.Content, nil
	}
	if !k.Opaque {
		if sid, err := SessionUUID(k.SessionID); err == nil && m.data.sessions[sid] != nil {
			rows := m.tenantRows(m.data.sessions[sid])
			if k.Index < len(rows) {
				r := rows[k.Index]
				if key := r.key(); !r.Deleted && (key == "" || key == k.Raw) {
					return r.Content, nil
				}
			}
		}
	}
	return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
}

// LookupIndex is Lookup by (session, index).
func (m *MemoryStore) LookupIndex(ctx context.Context, sessionKey string, n int) (string, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", fieldErr(-1, "index", "must be >= 0")
	}
	return m.Lookup(ctx, compressor.BuildKey(sid.String(), n))
}

// Expand restores every compressed message of msgs by key.
func (m *MemoryStore) Expand(ctx context.Context, msgs []models.HistoryMessage) ([]models.HistoryMessage, error) {
	return Expand(ctx, m, msgs)
}

// EnsureSession creates the session unless it exists.
func (m *MemoryStore) EnsureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return sid, err
	}
	if userID == "" {
		userID = m.userID
	}
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	if m.data.sessions[sid] == nil {
		now := m.now().UTC().Truncate(time.Microsecond)
		m.data.sessions[sid] = &memSession{row: models.Session{ID: sid, Name: models.Ptr(sessionKey), Status: models.StatusActive,
			UserID: models.Ptr(userID), TenantID: models.Ptr(m.userID), Metadata: models.JSONMap{}, GraphEdges: models.JSONList{},
			Tags: models.StringArray{}, CreatedAt: now, UpdatedAt: now}}
	}
	return sid, nil
}

// RenameSession sets the session's name.
func (m *MemoryStore) RenameSession(ctx context.Context, sessionKey, name string) error {
	_, err := m.UpdateSession(ctx, sessionKey, SessionUpdate{Name: &name})
	return err
}

func (m *MemoryStore) session(sessionKey string) (*memSession, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return nil, err
	}
	ms := m.data.sessions[sid]
	if !m.visible(ms) {
		return nil, fmt.Errorf("session %s: %w", sid, ErrNotFound)
	}
	return ms, nil
}

func (m *MemoryStore) info(ms *memSession) SessionInfo {
	row := cloneSession(ms.row)
	return infoOf(&row)
}

// GetSession returns the session and its history.
func (m *MemoryStore) GetSession(ctx context.Context, sessionKey string, o LoadOptions) (SessionInfo, []models.HistoryMessage, error) {
	m.data.mu.RLock()
	ms, err := m.session(sessionKey)
	var info SessionInfo
	if err == nil {
		info = m.info(ms)
	}
	m.data.mu.RUnlock()
	if err != nil {
		return SessionInfo{}, nil, err
	}
	h, err := m.Load(ctx, sessionKey, o)
	return info, h, err
}

// ListSessions returns one page of the tenant's sessions, newest first.
func (m *MemoryStore) ListSessions(ctx context.Context, o ListOptions) (ListResult, error) {
	if err := o.normalize(); err != nil {
		return ListResult{}, err
	}
	var c *cursor
	if o.Cursor != "" {
		cc, err := decodeCursor(o.Cursor)
		if err != nil {
			return ListResult{}, err
		}
		c = &cc
	}
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	var all []*memSession
	for _, ms := range m.data.sessions {
		r := ms.row
		ok := m.visible(ms) && (o.UserID == "" || r.UserID != nil && *r.UserID == o.UserID) &&
			(o.AgentName == "" || r.AgentName != nil && *r.AgentName == o.AgentName) &&
			(len(o.Statuses) == 0 || slices.Contains(o.Statuses, r.Status)) &&
			(o.CreatedAfter.IsZero() || r.CreatedAt.After(o.CreatedAfter)) && (o.CreatedBefore.IsZero() || r.CreatedAt.Before(o.CreatedBefore)) &&
			(o.UpdatedAfter.IsZero() || r.UpdatedAt.After(o.UpdatedAfter)) && (o.UpdatedBefore.IsZero() || r.UpdatedAt.Before(o.UpdatedBefore))
		if ok {
			all = append(all, ms)
		}
	}
	slices.SortFunc(all, func(a, b *memSession) int {
		if c := b.row.CreatedAt.Compare(a.row.CreatedAt); c != 0 {
			return c
		}
		return bytes.Compare(b.row.ID[:], a.row.ID[:])
	})
	res := ListResult{Total: len(all), Limit: o.Limit, Sessions: []SessionInfo{}}
	for _, ms := range all {
		if c != nil && !(ms.row.CreatedAt.Before(c.CreatedAt) || ms.row.CreatedAt.Equal(c.CreatedAt) && bytes.Compare(ms.row.ID[:], c.ID[:]) < 0) {
			continue
		}
		if len(res.Sessions) == o.Limit {
			last := res.Sessions[len(res.Sessions)-1]
			res.NextCursor = encodeCursor(cursor{CreatedAt: last.CreatedAt, ID: last.ID})
			break
		}
		res.Sessions = append(res.Sessions, m.info(ms))
	}
	return res, nil
}

func (m *MemoryStore) modify(sessionKey string, fn func(ms *memSession) error) (SessionInfo, error) {
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	ms, err := m.session(sessionKey)
	if err != nil {
		return SessionInfo{}, err
	}
	saved := cloneSession(ms.row)
	if ms.row.Metadata == nil {
		ms.row.Metadata = models.JSONMap{}
	}
	if err := fn(ms); err != nil {
		ms.row = saved
		return SessionInfo{}, err
	}
	ms.row.Metadata = normalize(ms.row.Metadata)
	ms.row.UpdatedAt = m.now().UTC().Truncate(time.Microsecond)
	return m.info(ms), nil
}

// SetStatus moves the session along its lifecycle (see Store.SetStatus).
func (m *MemoryStore) SetStatus(ctx context.Context, sessionKey, status, reason string) (SessionInfo, error) {
	if err := checkText(-1, "reason", reason, 0); err != nil {
		return SessionInfo{}, err
	}
	return m.modify(sessionKey, func(ms *memSession) error {
		if err := CheckTransition(ms.row.Status, status); err != nil {
			return err
		}
		if (status == models.StatusCancelled || status == models.StatusError) && reason != "" {
			msg := models.HistoryMessage{Role: models.RoleSystem, Content: fmt.Sprintf("Session %s: %s", status, reason)}
			if _, err := m.storeLocked(ms.row.ID, sessionKey, []models.HistoryMessage{msg}, m.userID, writeOpts{allowInactive: true}); err != nil {
				return err
			}
		}
		ms.row.Status = status
		if reason != "" {
			ms.row.Metadata["reason"] = reason
		} else {
			delete(ms.row.Metadata, "reason")
		}
		return nil
	})
}

// UpdateSession changes name, agent and settings.
func (m *MemoryStore) UpdateSession(ctx context.Context, sessionKey string, u SessionUpdate) (SessionInfo, error) {
	return m.modify(sessionKey, func(ms *memSession) error {
		applyUpdate(&ms.row, normalizeUpdate(u))
		return nil
	})
}

func normalizeUpdate(u SessionUpdate) SessionUpdate {
	if u.Settings != nil {
		n := normalize(u.Settings)
		for k, v := range u.Settings {
			if v == nil {
				n[k] = nil
			}
		}
		u.Settings = n
	}
	return u
}

// DeleteSession soft-deletes (or purges) the session (see Store.DeleteSession).
func (m *MemoryStore) DeleteSession(ctx context.Context, sessionKey string, purge bool) error {
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	ms, err := m.session(sessionKey)
	if err != nil {
		return err
	}
	m.deleteLocked(ms, purge)
	return nil
}

func (m *MemoryStore) deleteLocked(ms *memSession, purge bool) {
	now := m.now().UTC()
	var keep []*models.Message
	for _, r := range ms.msgs {
		mine := r.TenantID != nil && *r.TenantID == m.userID
		switch {
		case mine && purge:
			delete(m.data.keys, m.userID+"\x00"+fmt.Sprint(r.Metadata["entity_key"]))
			continue
		case mine && r.DeletedAt == nil:
			r.DeletedAt = models.Ptr(now)
		}
		keep = append(keep, r)
	}
	ms.msgs = keep
	switch {
	case purge && len(keep) == 0:
		delete(m.data.sessions, ms.row.ID)
	case !purge && (ms.row.TenantID == nil || *ms.row.TenantID == m.userID):
		ms.row.DeletedAt, ms.row.UpdatedAt = models.Ptr(now), now
	}
}

// Expire completes (or purges) sessions idle longer than o.Idle.
func (m *MemoryStore) Expire(ctx context.Context, o ExpireOptions) ([]SessionInfo, error) {
	if o.Idle <= 0 {
		return nil, fieldErr(-1, "idle", "must be a positive duration")
	}
	now := o.Now
	if now.IsZero() {
		now = m.now()
	}
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	var hit []*memSession
	for _, ms := range m.data.sessions {
		r := ms.row
		if r.Status == models.StatusActive && r.DeletedAt == nil && r.TenantID != nil && *r.TenantID == m.userID && r.UpdatedAt.Before(now.Add(-o.Idle)) {
			hit = append(hit, ms)
		}
	}
	slices.SortFunc(hit, func(a, b *memSession) int { return a.row.UpdatedAt.Compare(b.row.UpdatedAt) })
	out := make([]SessionInfo, 0, len(hit))
	for _, ms := range hit {
		out = append(out, m.info(ms))
		if o.DryRun {
			continue
		}
		if o.Purge {
			m.deleteLocked(ms, true)
			continue
		}
		ms.row.Status = models.StatusCompleted
		ms.row.Metadata["reason"] = "idle_timeout"
		ms.row.UpdatedAt = m.now().UTC()
	}
	return out, nil
}

// Fork copies the first o.UpTo live messages into a new session (see Store.Fork).
func (m *MemoryStore) Fork(ctx context.Context, sessionKey string, o ForkOptions) (SessionInfo, error) {
	newKey, nid, err := o.target()
	if err != nil {
		return SessionInfo{}, err
	}
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	src, err := m.session(sessionKey)
	if err != nil {
		return SessionInfo{}, err
	}
	if m.data.sessions[nid] != nil {
		return SessionInfo{}, fieldErr(-1, "new_session_id", "session %s already exists", nid)
	}
	var rows []models.Message
	for _, r := range src.msgs {
		if r.TenantID != nil && *r.TenantID == m.userID {
			rows = append(rows, *r)
		}
	}
	now := m.now().UTC().Truncate(time.Microsecond)
	srow := cloneSession(src.row)
	ns := forkSession(&srow, nid, newKey, sessionKey, o.UpTo, m.userID, now)
	copies := forkRows(rows, nid, o.UpTo, m.userID)
	for _, c := range copies {
		c.Metadata = normalize(c.Metadata)
		m.data.keys[m.userID+"\x00"+c.Metadata["entity_key"].(string)] = c
	}
	ns.Metadata = normalize(ns.Metadata)
	m.data.sessions[nid] = &memSession{row: *ns, msgs: copies}
	return m.info(m.data.sessions[nid]), nil
}

// Compact appends a summary of the history before the last o.KeepLast messages.
func (m *MemoryStore) Compact(ctx context.Context, sessionKey string, summarize Summarizer, o CompactOptions) (models.HistoryMessage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return models.HistoryMessage{}, err
	}
	m.data.mu.RLock()
	var rows []storedRow
	if ms := m.data.sessions[sid]; ms != nil {
		rows = m.tenantRows(ms)
	}
	m.data.mu.RUnlock()
	return compact(ctx, rows, summarize, o, func(msg models.HistoryMessage, wo writeOpts) error {
		_, err := m.store(sessionKey, []models.HistoryMessage{msg}, m.userID, wo)
		return err
	})
}

// SessionUsage sums the token usage stored with the session's messages.
func (m *MemoryStore) SessionUsage(ctx context.Context, sessionKey string) (Usage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return Usage{}, err
	}
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	if ms := m.data.sessions[sid]; ms != nil {
		return sumUsage(m.tenantRows(ms)), nil
	}
	return Usage{}, nil
}
