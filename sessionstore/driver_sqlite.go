package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/repository/table"
)

// sqliteDriver runs every call through bun. A store call is one transaction
// (a savepoint inside a caller's); SQLite's BEGIN IMMEDIATE (the _txlock
// Open sets) already serializes writers, so there is no lock to take.
type sqliteDriver struct{}

func (sqliteDriver) write(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error) {
	var out writeOutcome
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = writeGo(ctx, tx, s, p, sqliteDriver{}.lock)
		return err
	})
	return out, err
}

func (sqliteDriver) eachRow(ctx context.Context, c conn, q rowsArgs, fn func(storedRow) error) error {
	return eachRowSQL(ctx, c, q, fn)
}

func (sqliteDriver) queryRow(ctx context.Context, c conn, query string, args []any, dest ...any) error {
	return queryRowSQL(ctx, c, query, args, dest...)
}

func (sqliteDriver) lock(context.Context, bun.IDB, uuid.UUID) error { return nil }

// writeGo is a store call inside tx, step by step: the Go writer, for the
// databases without the store function. Its steps, outcomes and rows are
// those of the store function (store_batch_v8.sql), which the differential
// test (differential_test.go) checks on random scripts; lock takes the
// session's write lock where the database has one.
func writeGo(ctx context.Context, tx bun.Tx, s *Store, p *writePlan, lock func(context.Context, bun.IDB, uuid.UUID) error) (writeOutcome, error) {
	if err := lock(ctx, tx, p.sid); err != nil {
		return writeOutcome{}, fmt.Errorf("lock session: %w", err)
	}
	out, done, err := precheck(ctx, tx, s, p)
	if done || err != nil {
		return out, err
	}
	// The limits, and the session counted, before anything is written.
	q := BunTx(tx)
	if err := p.limits.checkNewSession(ctx, q, p.sid, s.userID); err != nil {
		return out, err
	}
	first, kept, err := nextPosition(ctx, q, p.sid, s.userID)
	if err != nil {
		return out, fmt.Errorf("read session position: %w", err)
	}
	if err := p.limits.messages().check(first, len(p.rows)-len(out.existing)); err != nil {
		return out, err
	}
	sess := &table.Session{ID: p.sid, Name: models.Ptr(p.name), Status: models.StatusActive,
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
	if _, err := tx.NewUpdate().Model((*table.Session)(nil)).
		Set("updated_at = CASE WHEN updated_at > ? THEN updated_at ELSE ? END", p.now, p.now).Set("deleted_at = NULL").
		Where("id = ?", p.sid).Exec(ctx); err != nil {
		return out, fmt.Errorf("touch session: %w", err)
	}
	var last dbTime
	if err := tx.NewRaw(`SELECT MAX(created_at) FROM messages WHERE session_id = ?`, p.sid).Scan(ctx, &last); err != nil {
		return out, fmt.Errorf("read session position: %w", err)
	}
	out.first = first
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
	rows := make([]*table.Message, 0, len(p.rows))
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
		key := compressor.BuildKey(p.sid.String(), idx)
		row.Metadata["message_index"] = idx
		row.Metadata["entity_key"] = key
		out.keys = append(out.keys, key)
		row.CreatedAt, row.UpdatedAt = at, at
		rows = append(rows, &row)
	}
	if err := repository.New[table.Message](tx).Insert(ctx, rows...); err != nil {
		return out, err
	}
	if len(rows) > 0 {
		out.last = rows[len(rows)-1].ID.String()
		// Added to a kept count (it holds other writers' rows since), set
		// after a count, as the store function does.
		if _, err := tx.NewRaw(keepPositions.Bun(), keepPositions.BunArgs(&positionsParams{Sid: p.sid, Tenant: s.userID,
			N: out.first + len(rows), Last: rows[len(rows)-1].ID, Kept: kept, Written: len(rows)})...).Exec(ctx); err != nil {
			return out, fmt.Errorf("keep session position: %w", err)
		}
	}
	return out, nil
}

// precheck takes the write's steps before anything is written, as the
// store function does: caller ids (a refused call changes nothing, not even
// the session), the guard, and a resend stored whole. done says out is the
// call's answer.
func precheck(ctx context.Context, tx bun.Tx, s *Store, p *writePlan) (out writeOutcome, done bool, err error) {
	// Caller ids first: a refused call changes nothing, not even the session.
	if p.check {
		ex, err := existingIDs(ctx, tx, s, p)
		if err != nil {
			return out, true, err
		}
		out.existing = ex
		for _, e := range ex {
			if !e.Mine {
				return writeOutcome{status: statusIDTaken, existing: ex}, true, nil
			}
		}
		for _, e := range ex {
			if !e.Same {
				return writeOutcome{status: statusIDReused, existing: ex}, true, nil
			}
		}
	}
	// The guard, before anything is written (a resend of a call stored
	// whole is a retry, answered below).
	if p.expect != "" && len(out.existing) < len(p.rows) {
		last, err := lastLive(ctx, tx, p.sid, s.userID)
		if err != nil {
			return out, true, fmt.Errorf("read the session's last message: %w", err)
		}
		if last != p.expect {
			return writeOutcome{status: statusMoved, existing: out.existing, last: last}, true, nil
		}
	}
	// A resend stored whole already: answered from what it stored, the
	// session untouched.
	if p.check && len(out.existing) == len(p.rows) {
		if err := tx.NewRaw("SELECT COALESCE(status, 'active') FROM sessions WHERE id = ?", p.sid).Scan(ctx, &out.status); err != nil {
			return out, true, fmt.Errorf("read the session: %w", err)
		}
		if p.expect != "" {
			last, err := lastLive(ctx, tx, p.sid, s.userID)
			if err != nil {
				return out, true, fmt.Errorf("read the session's last message: %w", err)
			}
			out.last = last
		}
		return out, true, nil
	}
	return out, false, nil
}

// lastLive is the id of the tenant's last live message of session sid, or
// Empty, as the store function reads it for a guarded store.
func lastLive(ctx context.Context, tx bun.IDB, sid uuid.UUID, tenant string) (string, error) {
	var id uuid.UUID
	err := tx.NewRaw(`SELECT id FROM messages WHERE session_id = ? AND tenant_id = ? AND deleted_at IS NULL
		ORDER BY created_at DESC, id DESC LIMIT 1`, sid, tenant).Scan(ctx, &id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return lastName(id), nil // uuid.Nil without a row: Empty
}

// nextPosition is the position of the tenant's next row in session sid, as
// the store function finds it (store_batch_v8.sql): the kept count (other
// writers' rows are added to it as they arrive, migration 14), or the rows
// counted once when there is no usable count; kept says which.
func nextPosition(ctx context.Context, q LimitTx, sid uuid.UUID, tenant string) (n int, kept bool, err error) {
	err = q.QueryRow(ctx, `SELECT c.n FROM `+migrations.PositionsTable+` c
		JOIN messages m ON m.session_id = ? AND m.id = c.last_id AND m.tenant_id = ?
		WHERE c.session_id = ? AND c.tenant_id = ?`, []any{sid, tenant, sid, tenant}, &n)
	if err == nil {
		return n, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	err = q.QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_id = ? AND tenant_id = ?`, []any{sid, tenant}, &n)
	return n, false, err
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
		Role      *string   `bun:"role"`
		Content   *string   `bun:"content"`
	}
	err := tx.NewRaw("SELECT id, session_id, tenant_id, "+s.sql.EntityKey+" AS ek, role, content FROM messages WHERE id IN (?)",
		bun.List(ids)).Scan(ctx, &found)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("check message ids: %w", err)
	}
	out := make([]existingID, 0, len(found))
	for _, f := range found {
		r := p.rows[byID[f.ID]]
		out = append(out, existingID{O: byID[f.ID] + 1, Key: f.Key,
			Mine: f.SessionID == p.sid && f.TenantID != nil && *f.TenantID == s.userID,
			Same: f.Role != nil && *f.Role == string(r.Role) && f.Content != nil && *f.Content == r.Content})
	}
	// In the order of the call, as the function's jsonb_agg(... ORDER BY
	// r.o): a refusal names the first message whose id is taken.
	slices.SortFunc(out, func(a, b existingID) int { return a.O - b.O })
	return out, nil
}

// positionsParams are keepPositions' parameters.
type positionsParams struct {
	Sid     uuid.UUID `sql:"sid"`
	Tenant  string    `sql:"tenant"`
	N       int       `sql:"n"`       // the count after this write, when set
	Last    uuid.UUID `sql:"last"`    // the last row written
	Kept    bool      `sql:"kept"`    // add to the kept count instead
	Written int       `sql:"written"` // rows written
}

// keepPositions sets or adds to the session's kept count.
var keepPositions = repository.NewNamed[positionsParams](`INSERT INTO ` + migrations.PositionsTable + ` AS c (session_id, tenant_id, n, last_id)
	VALUES (@sid, @tenant, @n, @last)
	ON CONFLICT (session_id, tenant_id) DO UPDATE SET n = CASE WHEN @kept THEN c.n + @written ELSE excluded.n END, last_id = excluded.last_id`)
