package repository

import (
	"context"
	"fmt"
	"reflect"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Repository is the generic repository over one bun model T (a struct with
// the Python service's common columns, deleted_at among them): the inserts and the
// filtered reads and counts the session store makes of whole rows (fork,
// the Go writer, a session by id). It runs on a *bun.DB or a bun.Tx.
type Repository[T any] struct {
	db    bun.IDB
	table *schema.Table
	cols  map[string]bool
}

// New returns a repository of T on db.
func New[T any](db bun.IDB) *Repository[T] {
	t := db.Dialect().Tables().Get(reflect.TypeFor[T]())
	cols := map[string]bool{}
	for _, f := range t.Fields {
		cols[f.Name] = true
	}
	return &Repository[T]{db: db, table: t, cols: cols}
}

// Filter is a condition on one column: Value nil means IS NULL, a slice means
// IN (...), anything else means =.
type Filter struct {
	Column string
	Value  any
}

// Query selects rows for Find and Count. Column names are checked against T's
// columns, so no caller string reaches the SQL text unchecked.
type Query struct {
	Filters        []Filter
	Limit          int  // 0: no limit
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
	if !qu.IncludeDeleted {
		q = q.Where("deleted_at IS NULL")
	}
	if qu.Limit > 0 && !forCount {
		q = q.Limit(int64(qu.Limit))
	}
	return q, nil
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

// Count returns how many rows match qu (its limit ignored).
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
