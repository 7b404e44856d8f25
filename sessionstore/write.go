package sessionstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// StoreResult says what a store call wrote.
type StoreResult struct {
	SessionID uuid.UUID
	// Keys[i] is the REM LOOKUP key of message i; IDs[i] its row id.
	Keys []string
	IDs  []uuid.UUID
	// Existing counts messages whose id was already stored in this session
	// (a retried call): they were not written again.
	Existing int
}

// StoreMessages writes msgs, uncompressed, as the next messages of the
// session, in one transaction: all or nothing. userID is written as user_id
// ("" = the store's). Concurrent calls on one session are serialized, so
// indexes are gap-free and each call's messages are contiguous. The session
// is created on first store; a session of another tenant is ErrNotFound.
func (s *Store) StoreMessages(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, userID string) (StoreResult, error) {
	sid, err := s.SessionUUID(sessionKey)
	if err != nil {
		return StoreResult{}, err
	}
	res := StoreResult{SessionID: sid}
	if !s.enabled {
		return res, nil
	}
	if userID != "" {
		if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
			return res, err
		}
	}
	if err := validateBatch(msgs); err != nil {
		return res, err
	}
	if len(msgs) == 0 {
		return res, nil
	}
	p, err := s.plan(sid, sessionKey, msgs, userID, writeOpts{})
	if err != nil {
		return res, err
	}
	err = s.withRetry(ctx, "store", neverSent, func() error {
		var err error
		res, err = s.write(ctx, s.db, p)
		if repository.IsUniqueViolation(err) {
			// A concurrent call stored one of these ids (in another session,
			// whose lock is not ours) between our check and our insert. Once
			// more: the check now sees its row and answers as if the two
			// calls had run one after the other.
			res, err = s.write(ctx, s.db, p)
		}
		return err
	})
	if repository.IsUniqueViolation(err) {
		err = fmt.Errorf("%w: %s", ErrConflict, firstLine(err))
	}
	if err != nil {
		return StoreResult{SessionID: sid}, fmt.Errorf("store %d messages in session %s: %w", len(msgs), sid, err)
	}
	return res, nil
}

// StoreMessage stores one message and returns its REM LOOKUP key.
func (s *Store) StoreMessage(ctx context.Context, sessionKey string, msg models.HistoryMessage, userID string) (string, error) {
	res, err := s.StoreMessages(ctx, sessionKey, []models.HistoryMessage{msg}, userID)
	if err != nil || len(res.Keys) == 0 {
		return "", err
	}
	return res.Keys[0], nil
}

// EnsureSession creates the session row unless it exists and returns its id.
// A session of another tenant is ErrNotFound.
func (s *Store) EnsureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error) {
	sid, err := s.SessionUUID(sessionKey)
	if err != nil || !s.enabled {
		return sid, err
	}
	p, err := s.plan(sid, sessionKey, nil, userID, writeOpts{allowInactive: true})
	if err != nil {
		return sid, err
	}
	_, err = s.write(ctx, s.db, p)
	return sid, err
}

// writeOpts are the internal variations of a store: lifecycle messages are
// written to sessions that are no longer active, and compaction summaries
// carry extra metadata.
type writeOpts struct {
	allowInactive bool
	extraMeta     models.JSONMap
}

// writePlan is one store call, validated and turned into rows, ready for the
// driver: everything but the positions, which only the locked write can know.
type writePlan struct {
	sid           uuid.UUID
	name          string // the session row's name when it is created
	userID        string // user_id of the rows and of a new session
	now           time.Time
	rows          []*models.Message // metadata without message_index and entity_key
	check         bool              // some ids came from the caller
	allowInactive bool
}

// writeOutcome is what a driver's write found and did.
type writeOutcome struct {
	// status is the session's status, or statusNotFound / statusIDTaken
	// when nothing was written.
	status string
	// first is the index of the first row written.
	first int
	// existing lists rows whose caller id was already stored (o counts from 1).
	existing []existingID
}

type existingID struct {
	O    int     `json:"o"`
	Key  *string `json:"key"`
	Mine bool    `json:"mine"`
}

const (
	statusNotFound = "not_found"
	statusIDTaken  = "id_taken"
)

func (s *Store) plan(sid uuid.UUID, sessionKey string, msgs []models.HistoryMessage, userID string, wo writeOpts) (*writePlan, error) {
	if userID == "" {
		userID = s.userID
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return nil, err
	}
	p := &writePlan{sid: sid, name: sessionKey, userID: userID, now: s.clock(), allowInactive: wo.allowInactive,
		rows: make([]*models.Message, len(msgs))}
	for i, m := range msgs {
		row, err := newRow(m, sid, userID, s.userID)
		if err != nil {
			return nil, &models.FieldError{Index: i, Reason: err.Error()}
		}
		for k, v := range wo.extraMeta {
			row.Metadata[k] = v
		}
		p.rows[i] = row
		p.check = p.check || m.ID != ""
	}
	return p, nil
}

// write runs the plan through the driver and turns its outcome into the
// result or the error: one place decides what each outcome means.
func (s *Store) write(ctx context.Context, db bun.IDB, p *writePlan) (StoreResult, error) {
	res := StoreResult{SessionID: p.sid, Keys: make([]string, len(p.rows)), IDs: make([]uuid.UUID, len(p.rows))}
	out, err := s.drv.write(ctx, s, db, p)
	if err != nil {
		return res, err
	}
	switch {
	case out.status == statusNotFound:
		return res, notFound(p.sid)
	case out.status == statusIDTaken:
		for _, e := range out.existing {
			if !e.Mine {
				return res, fieldErr(e.O-1, "id", "already used by another message")
			}
		}
	case out.status != models.StatusActive && !p.allowInactive:
		return res, fmt.Errorf("%w: status is %q", ErrSessionNotActive, out.status)
	}
	skip := make(map[int]*string, len(out.existing))
	for _, e := range out.existing {
		skip[e.O-1] = e.Key
	}
	n := out.first
	for i, r := range p.rows {
		res.IDs[i] = r.ID
		if key, ok := skip[i]; ok {
			res.Existing++
			if key != nil {
				res.Keys[i] = *key
			}
			continue
		}
		res.Keys[i] = compressor.BuildKey(p.sid.String(), n)
		n++
	}
	return res, nil
}

// writeTx is a store call inside tx, step by step: the transactional write
// of the drivers that have no one-statement write (SQLite). Its steps and
// outcomes are those of repository.StoreBatchFunction.
func (s *Store) writeTx(ctx context.Context, tx bun.Tx, p *writePlan) (writeOutcome, error) {
	var out writeOutcome
	if err := s.drv.lock(ctx, tx, p.sid); err != nil {
		return out, fmt.Errorf("lock session: %w", err)
	}
	// Caller ids first: a refused call changes nothing, not even the session.
	if p.check {
		ex, err := existingIDs(ctx, tx, s, p)
		if err != nil {
			return out, err
		}
		out.existing = ex
		for _, e := range ex {
			if !e.Mine {
				return writeOutcome{status: statusIDTaken, existing: ex}, nil
			}
		}
	}
	sess := &models.Session{ID: p.sid, Name: models.Ptr(p.name), Status: models.StatusActive,
		UserID: models.Ptr(p.userID), TenantID: models.Ptr(s.userID), CreatedAt: p.now, UpdatedAt: p.now}
	if _, err := tx.NewInsert().Model(sess).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
		return out, fmt.Errorf("ensure session: %w", err)
	}
	var tenant, status sql.NullString
	if err := tx.NewRaw("SELECT tenant_id, COALESCE(status, 'active') FROM sessions WHERE id = ?", p.sid).
		Scan(ctx, &tenant, &status); err != nil {
		return out, fmt.Errorf("ensure session: %w", err)
	}
	if !tenant.Valid || tenant.String != s.userID {
		return writeOutcome{status: statusNotFound}, nil
	}
	out.status = status.String
	if out.status != models.StatusActive && !p.allowInactive {
		return out, nil
	}
	if _, err := tx.NewUpdate().Model((*models.Session)(nil)).
		Set("updated_at = CASE WHEN updated_at > ? THEN updated_at ELSE ? END", p.now, p.now).Set("deleted_at = NULL").
		Where("id = ?", p.sid).Exec(ctx); err != nil {
		return out, fmt.Errorf("touch session: %w", err)
	}
	var last dbTime
	err := tx.NewRaw(`SELECT COALESCE(SUM(CASE WHEN tenant_id = ? THEN 1 ELSE 0 END), 0), MAX(created_at)
		FROM messages WHERE session_id = ?`, s.userID, p.sid).Scan(ctx, &out.first, &last)
	if err != nil {
		return out, fmt.Errorf("read session position: %w", err)
	}
	// created_at strictly increases within the session, whatever the clock
	// does, so that the peer (which orders by created_at alone) agrees.
	base := p.now
	if last.Valid && !base.After(last.Time) {
		base = last.Time.Add(time.Microsecond)
	}
	skip := make(map[int]bool, len(out.existing))
	for _, e := range out.existing {
		skip[e.O-1] = true
	}
	rows := make([]*models.Message, 0, len(p.rows))
	for i, r := range p.rows {
		if skip[i] {
			continue
		}
		row := *r
		idx, at := out.first+len(rows), base.Add(time.Duration(len(rows))*time.Microsecond)
		row.Metadata = models.JSONMap{}
		for k, v := range r.Metadata {
			row.Metadata[k] = v
		}
		row.Metadata["message_index"] = idx
		row.Metadata["entity_key"] = compressor.BuildKey(p.sid.String(), idx)
		row.CreatedAt, row.UpdatedAt = at, at
		rows = append(rows, &row)
	}
	if err := repository.New[models.Message](tx).Insert(ctx, rows...); err != nil {
		return out, err
	}
	return out, nil
}

// existingIDs finds messages whose caller-given id is already stored; mine
// means in this session and tenant (a retry).
func existingIDs(ctx context.Context, tx bun.Tx, s *Store, p *writePlan) ([]existingID, error) {
	byID := map[uuid.UUID]int{}
	ids := make([]uuid.UUID, 0, len(p.rows))
	for i, r := range p.rows {
		byID[r.ID] = i
		ids = append(ids, r.ID)
	}
	var found []struct {
		ID        uuid.UUID `bun:"id"`
		SessionID uuid.UUID `bun:"session_id"`
		TenantID  *string   `bun:"tenant_id"`
		Key       *string   `bun:"ek"`
	}
	err := tx.NewRaw("SELECT id, session_id, tenant_id, "+s.sql.EntityKey+" AS ek FROM messages WHERE id IN (?)",
		bun.List(ids)).Scan(ctx, &found)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("check message ids: %w", err)
	}
	out := make([]existingID, 0, len(found))
	for _, f := range found {
		out = append(out, existingID{O: byID[f.ID] + 1, Key: f.Key,
			Mine: f.SessionID == p.sid && f.TenantID != nil && *f.TenantID == s.userID})
	}
	return out, nil
}

// newRow builds the row of SPEC §2 for one message, without its position.
func newRow(m models.HistoryMessage, sid uuid.UUID, userID, tenantID string) (*models.Message, error) {
	id := uuid.New()
	if m.ID != "" {
		id = uuid.MustParse(m.ID) // validated
	}
	meta := models.JSONMap{"timestamp": nil}
	if m.Timestamp != nil {
		meta["timestamp"] = *m.Timestamp
	}
	row := &models.Message{
		ID: id, SessionID: sid, Role: m.Role, Content: m.Content, Metadata: meta,
		Tags: models.StringArray{}, GraphEdges: models.JSONList{},
		UserID: models.Ptr(userID), TenantID: models.Ptr(tenantID),
	}
	// The tool fields, agent_schema and model go to metadata for role tool
	// only, and only when truthy, exactly as the peer's writer does.
	if m.Role == models.RoleTool {
		if m.ToolCallID != "" {
			meta["tool_call_id"] = m.ToolCallID
		}
		if m.ToolName != "" {
			meta["tool_name"] = m.ToolName
		}
		if rawTruthy(m.ToolArguments) {
			meta["tool_arguments"] = json.RawMessage(m.ToolArguments)
		}
	}
	for _, f := range m.Extra {
		if string(f.Value) == "null" {
			continue
		}
		switch f.Key {
		case "model", "agent_schema":
			if m.Role == models.RoleTool && rawTruthy(f.Value) {
				meta[f.Key] = f.Value
			}
		case "usage", convert.SourceKey, AgentsSourceKey:
			meta[f.Key] = f.Value
		case "author":
			v, _ := m.ExtraString(f.Key)
			meta["author"] = v
		case "trace_id":
			v, _ := m.ExtraString(f.Key)
			row.TraceID = models.Ptr(v)
		case "span_id":
			v, _ := m.ExtraString(f.Key)
			row.SpanID = models.Ptr(v)
		case "tool_calls":
			var list []json.RawMessage
			if err := json.Unmarshal(f.Value, &list); err != nil {
				return nil, errors.New(`field "tool_calls": must be a list`)
			}
			if len(list) > 0 {
				row.ToolCalls = models.NullJSON(`{"items":` + string(f.Value) + `}`)
			}
		}
	}
	return row, nil
}
