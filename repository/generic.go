package repository

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Repository is the peer's generic repository over one bun model T (a struct
// with an `id` primary key and the peer's common columns: user_id,
// deleted_at, created_at, updated_at). It runs on a *bun.DB or a bun.Tx.
type Repository[T any] struct {
	db    bun.IDB
	table *schema.Table
	cols  map[string]bool
	key   *tableKey // shared with WithDB copies: same database, same key
}

// tableKey is the table's primary key, read from the catalog by the first
// Upsert and kept, so a loop of upserts does not ask each time.
type tableKey struct {
	mu   sync.Mutex
	cols []string
}

// New returns a repository of T on db.
func New[T any](db bun.IDB) *Repository[T] {
	t := db.Dialect().Tables().Get(reflect.TypeFor[T]())
	cols := map[string]bool{}
	for _, f := range t.Fields {
		cols[f.Name] = true
	}
	return &Repository[T]{db: db, table: t, cols: cols, key: &tableKey{}}
}

// WithDB returns the same repository on another handle, typically a bun.Tx.
func (r *Repository[T]) WithDB(db bun.IDB) *Repository[T] {
	c := *r
	c.db = db
	return &c
}

// Filter is a condition on one column: Value nil means IS NULL, a slice means
// IN (...), anything else means =.
type Filter struct {
	Column string
	Value  any
}

// Order sorts by one column.
type Order struct {
	Column string
	Desc   bool
}

// Query selects rows for Find and Count. Column names are checked against T's
// columns, so no caller string reaches the SQL text unchecked.
type Query struct {
	Filters []Filter
	// UserID, when set, applies the peer's isolation rule:
	// user_id = UserID OR user_id IS NULL.
	UserID         string
	OrderBy        []Order
	Limit, Offset  int
	IncludeDeleted bool // soft-deleted rows are skipped unless set
}

func (r *Repository[T]) column(name string) (string, error) {
	if !r.cols[name] {
		return "", fmt.Errorf("%s has no column %q", r.table.Name, name)
	}
	return name, nil
}

func (r *Repository[T]) apply(q *bun.SelectQuery, qu Query, forCount bool) (*bun.SelectQuery, error) {
	for _, f := range qu.Filters {
		col, err := r.column(f.Column)
		if err != nil {
			return nil, err
		}
		v := reflect.ValueOf(f.Value)
		switch {
		case f.Value == nil:
			q = q.Where("? IS NULL", bun.Ident(col))
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
			q = q.Where("? IN (?)", bun.Ident(col), bun.List(f.Value))
		default:
			q = q.Where("? = ?", bun.Ident(col), f.Value)
		}
	}
	if qu.UserID != "" {
		q = q.Where("(user_id = ? OR user_id IS NULL)", qu.UserID)
	}
	if !qu.IncludeDeleted {
		q = q.Where("deleted_at IS NULL")
	}
	if forCount {
		return q, nil
	}
	for _, o := range qu.OrderBy {
		col, err := r.column(o.Column)
		if err != nil {
			return nil, err
		}
		if o.Desc {
			q = q.OrderExpr("? DESC", bun.Ident(col))
		} else {
			q = q.OrderExpr("? ASC", bun.Ident(col))
		}
	}
	if qu.Limit > 0 {
		q = q.Limit(int64(qu.Limit))
	}
	if qu.Offset > 0 {
		q = q.Offset(int64(qu.Offset))
	}
	return q, nil
}

// Upsert inserts rows in one statement; a row whose key exists is replaced
// (every column but the key and created_at) and undeleted, as the peer's
// upsert does. The key is the table's primary key as the database has it:
// (id), or (session_id, id) for messages distributed on Citus, where the
// peer's ON CONFLICT (id) has no constraint to match.
func (r *Repository[T]) Upsert(ctx context.Context, rows ...*T) error {
	if len(rows) == 0 {
		return nil
	}
	key, err := r.primaryKey(ctx)
	if err != nil {
		return err
	}
	inKey := map[string]bool{}
	idents := make([]bun.Ident, len(key))
	for i, c := range key {
		inKey[c], idents[i] = true, bun.Ident(c)
	}
	// No RETURNING: bun would scan the returned rows back into rows by
	// position, and a distributed table returns them in shard order.
	q := r.db.NewInsert().Model(&rows).Returning("NULL").On("CONFLICT (?) DO UPDATE", bun.List(idents))
	for _, f := range r.table.Fields {
		switch {
		case inKey[f.Name] || f.Name == "created_at":
		case f.Name == "deleted_at":
			q = q.Set("deleted_at = NULL")
		default:
			q = q.Set("? = EXCLUDED.?", bun.Ident(f.Name), bun.Ident(f.Name))
		}
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("upsert %d %s: %w", len(rows), r.table.Name, err)
	}
	return nil
}

// primaryKey is the conflict key of Upsert: (id) on SQLite, the catalog's
// primary key on PostgreSQL (read once per repository).
func (r *Repository[T]) primaryKey(ctx context.Context) ([]string, error) {
	if !IsPostgres(r.db) {
		return []string{"id"}, nil
	}
	r.key.mu.Lock()
	defer r.key.mu.Unlock()
	if r.key.cols == nil {
		pk, err := PrimaryKey(ctx, r.db, r.table.Name)
		if err != nil {
			return nil, err
		}
		if len(pk) == 0 {
			pk = []string{"id"}
		}
		r.key.cols = pk
	}
	return r.key.cols, nil
}

// Insert writes new rows, at most 1,000 to a statement (bun inlines every
// value, and one statement per row would be a round trip each).
func (r *Repository[T]) Insert(ctx context.Context, rows ...*T) error {
	for lo := 0; lo < len(rows); lo += insertChunk {
		part := rows[lo:min(lo+insertChunk, len(rows))]
		if _, err := r.db.NewInsert().Model(&part).Returning("NULL").Exec(ctx); err != nil {
			return fmt.Errorf("insert %d %s: %w", len(part), r.table.Name, err)
		}
	}
	return nil
}

const insertChunk = 1000

// Get returns the row with this id. With userID set it applies the isolation
// rule (user_id = userID OR user_id IS NULL). Soft-deleted rows are not found.
func (r *Repository[T]) Get(ctx context.Context, id uuid.UUID, userID string) (*T, error) {
	row := new(T)
	q, _ := r.apply(r.db.NewSelect().Model(row).Where("id = ?", id), Query{UserID: userID}, true)
	if err := q.Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.table.Name, id, interpret(err))
	}
	return row, nil
}

// Find returns the rows matching qu.
func (r *Repository[T]) Find(ctx context.Context, qu Query) ([]T, error) {
	var rows []T
	q, err := r.apply(r.db.NewSelect().Model(&rows), qu, false)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", r.table.Name, err)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("find %s: %w", r.table.Name, err)
	}
	return rows, nil
}

// Count returns how many rows match qu (ordering and paging ignored).
func (r *Repository[T]) Count(ctx context.Context, qu Query) (int, error) {
	q, err := r.apply(r.db.NewSelect().Model((*T)(nil)), qu, true)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", r.table.Name, err)
	}
	n, err := q.Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", r.table.Name, err)
	}
	return int(n), nil
}

// SoftDelete sets deleted_at on the row (isolation rule as in Get).
// ErrNotFound when no live row matches.
func (r *Repository[T]) SoftDelete(ctx context.Context, id uuid.UUID, userID string) error {
	q := r.db.NewUpdate().Model((*T)(nil)).
		Set("deleted_at = ?", time.Now().UTC()).
		Set("updated_at = ?", time.Now().UTC()).
		Where("id = ?", id).Where("deleted_at IS NULL")
	if userID != "" {
		q = q.Where("(user_id = ? OR user_id IS NULL)", userID)
	}
	return r.affected(q.Exec(ctx))("soft delete", id)
}

// Delete removes the row for good (isolation rule as in Get).
func (r *Repository[T]) Delete(ctx context.Context, id uuid.UUID, userID string) error {
	q := r.db.NewDelete().Model((*T)(nil)).Where("id = ?", id)
	if userID != "" {
		q = q.Where("(user_id = ? OR user_id IS NULL)", userID)
	}
	return r.affected(q.Exec(ctx))("delete", id)
}

type execResult interface{ RowsAffected() (int64, error) }

func (r *Repository[T]) affected(res execResult, err error) func(string, uuid.UUID) error {
	return func(op string, id uuid.UUID) error {
		if err != nil {
			return fmt.Errorf("%s %s %s: %w", op, r.table.Name, id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s %s %s: %w", op, r.table.Name, id, ErrNotFound)
		}
		return nil
	}
}
