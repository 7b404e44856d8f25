package repository_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
)

func newSession(user string) *table.Session {
	return &table.Session{
		ID:     uuid.New(),
		Name:   models.Ptr("s"),
		Status: models.StatusActive,
		UserID: models.Ptr(user), TenantID: models.Ptr(user),
	}
}

// A row written through Repository[T] reads back field for field, on every dialect.
func TestRepositoryRoundTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		sessions := repository.New[table.Session](db.DB)
		msgs := repository.New[table.Message](db.DB)
		s := newSession("alice")
		if err := sessions.Insert(ctx, s); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2024, 1, 15, 10, 30, 0, 123456000, time.UTC)
		want := table.Message{
			ID: uuid.New(), SessionID: s.ID, Role: models.RoleTool,
			Content:    "héllo \"quoted\" 'single' \\ 🎉",
			ToolCalls:  models.NullJSON(`{"items":[{"id":"c1","name":"search"}]}`),
			GraphEdges: models.JSONList{map[string]any{"to": "x"}},
			Metadata: models.JSONMap{
				"message_index": json(3), "big": json(9007199254740993),
				"nested": map[string]any{"a": []any{json(1), "b"}},
			},
			Tags:      models.StringArray{"a", "b c", `q"uote`, `back\slash`, "", "NULL", "x,y"},
			TraceID:   models.Ptr("trace"),
			SpanID:    nil,
			UserID:    models.Ptr("alice"),
			TenantID:  models.Ptr("alice"),
			CreatedAt: at, UpdatedAt: at.Add(time.Second),
		}
		if err := msgs.Insert(ctx, &want); err != nil {
			t.Fatal(err)
		}
		rows, err := msgs.Find(ctx, repository.Query{Filters: []repository.Filter{{Column: "id", Value: want.ID}}})
		if err != nil || len(rows) != 1 {
			t.Fatalf("find the message: %d rows, %v", len(rows), err)
		}
		got := rows[0]
		got.CreatedAt, got.UpdatedAt = got.CreatedAt.UTC(), got.UpdatedAt.UTC()
		// JSONB normalizes whitespace; compare the parsed value.
		if !dbtest.JSONEqual(t, got.ToolCalls, want.ToolCalls) {
			t.Errorf("tool_calls = %s, want %s", got.ToolCalls, want.ToolCalls)
		}
		got.ToolCalls, want.ToolCalls = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
		}
	})
}

func json(n int64) any { return stdjson.Number(strconv.FormatInt(n, 10)) }

// Find and Count filter by value, by a list and by NULL, skip soft-deleted
// rows unless asked, take a limit, and refuse a column T does not have.
// Inserts of more than one statement's worth of rows all arrive.
func TestRepositoryFind(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		r := repository.New[table.Session](db.DB)
		gone := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		var rows []*table.Session
		for i, st := range []string{"active", "error", "active", "completed", "active"} {
			s := newSession("alice")
			s.Status = st
			s.Name = models.Ptr(string(rune('a' + i)))
			if i == 4 {
				s.DeletedAt = &gone
			}
			if i == 1 {
				s.AgentName = models.Ptr("agent")
			}
			rows = append(rows, s)
		}
		if err := r.Insert(ctx, rows...); err != nil {
			t.Fatal(err)
		}
		names := func(q repository.Query) string {
			t.Helper()
			got, err := r.Find(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range got {
				out = append(out, *s.Name)
			}
			sort.Strings(out)
			return strings.Join(out, "")
		}
		for _, c := range []struct {
			q    repository.Query
			want string
		}{
			{repository.Query{Filters: []repository.Filter{{Column: "status", Value: []string{"active", "error"}}}}, "abc"},
			{repository.Query{Filters: []repository.Filter{{Column: "status", Value: "active"}}, IncludeDeleted: true}, "ace"},
			{repository.Query{Filters: []repository.Filter{{Column: "agent_name", Value: nil}}}, "acd"},
			{repository.Query{Filters: []repository.Filter{{Column: "id", Value: rows[3].ID}}}, "d"},
		} {
			if got := names(c.q); got != c.want {
				t.Errorf("%+v: %q, want %q", c.q, got, c.want)
			}
		}
		if got, _ := r.Find(ctx, repository.Query{Limit: 2}); len(got) != 2 {
			t.Errorf("limit 2: %d rows", len(got))
		}
		if n, _ := r.Count(ctx, repository.Query{Filters: []repository.Filter{{Column: "status", Value: "active"}}, Limit: 1}); n != 2 {
			t.Errorf("count live active = %d, want 2 (the limit ignored)", n)
		}
		if n, _ := r.Count(ctx, repository.Query{IncludeDeleted: true}); n != 5 {
			t.Errorf("count with deleted = %d, want 5", n)
		}
		if _, err := r.Find(ctx, repository.Query{Filters: []repository.Filter{{Column: "id; DROP TABLE sessions", Value: 1}}}); err == nil {
			t.Error("unknown filter column accepted")
		}
		many := make([]*table.Message, 2500)
		for i := range many {
			many[i] = &table.Message{ID: uuid.New(), SessionID: rows[0].ID, Role: models.RoleUser, Content: strconv.Itoa(i)}
		}
		if err := repository.New[table.Message](db.DB).Insert(ctx, many...); err != nil {
			t.Fatal(err)
		}
		if n, _ := repository.New[table.Message](db.DB).Count(ctx, repository.Query{}); n != 2500 {
			t.Errorf("inserted 2,500 messages in chunks, count %d", n)
		}
	})
}

func TestOpenBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"postgres://user:secret@127.0.0.1:1/db?connect_timeout=2", "mysql://x", "postgres://%zz", ""} {
		_, err := repository.Open(context.Background(), u)
		if err == nil || !errors.Is(err, repository.ErrUnavailable) {
			t.Errorf("Open(%q) = %v, want ErrUnavailable", u, err)
			continue
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) error leaks the password or spans lines: %q", u, err)
		}
	}
}
