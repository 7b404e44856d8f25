package repository_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

func newSession(user string) *models.Session {
	return &models.Session{
		ID:     uuid.New(),
		Name:   models.Ptr("s"),
		Status: models.StatusActive,
		UserID: models.Ptr(user), TenantID: models.Ptr(user),
	}
}

// A row written through Repository[T] reads back field for field, on both dialects.
func TestRepositoryRoundTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		sessions := repository.New[models.Session](db)
		msgs := repository.New[models.Message](db)
		s := newSession("alice")
		if err := sessions.Upsert(ctx, s); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2024, 1, 15, 10, 30, 0, 123456000, time.UTC)
		want := models.Message{
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
		if err := msgs.Upsert(ctx, &want); err != nil {
			t.Fatal(err)
		}
		got, err := msgs.Get(ctx, want.ID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		got.CreatedAt, got.UpdatedAt = got.CreatedAt.UTC(), got.UpdatedAt.UTC()
		// JSONB normalizes whitespace; compare the parsed value.
		if !dbtest.JSONEqual(t, got.ToolCalls, want.ToolCalls) {
			t.Errorf("tool_calls = %s, want %s", got.ToolCalls, want.ToolCalls)
		}
		got.ToolCalls, want.ToolCalls = nil, nil
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("round trip:\n got %#v\nwant %#v", *got, want)
		}
	})
}

func json(n int64) any { return stdjson.Number(strconv.FormatInt(n, 10)) }

// Upsert replaces and undeletes; the isolation rule hides other users' rows
// but not rows without a user.
func TestRepositoryUpsertIsolationDelete(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		r := repository.New[models.Session](db)
		a, shared := newSession("alice"), newSession("x")
		shared.UserID = nil
		if err := r.Upsert(ctx, a, shared); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Get(ctx, a.ID, "bob"); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("bob sees alice's session: err=%v", err)
		}
		if _, err := r.Get(ctx, shared.ID, "bob"); err != nil {
			t.Fatalf("row without user_id hidden from bob: %v", err)
		}
		if err := r.SoftDelete(ctx, a.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Get(ctx, a.ID, "alice"); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("soft-deleted row still found: %v", err)
		}
		if err := r.SoftDelete(ctx, a.ID, "alice"); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("second soft delete: %v", err)
		}
		n, err := r.Count(ctx, repository.Query{IncludeDeleted: true})
		if err != nil || n != 2 {
			t.Fatalf("count with deleted = %d, %v; want 2", n, err)
		}
		a.Name = models.Ptr("renamed")
		a.CreatedAt = time.Time{}
		if err := r.Upsert(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, err := r.Get(ctx, a.ID, "alice")
		if err != nil {
			t.Fatalf("upsert did not undelete: %v", err)
		}
		if *got.Name != "renamed" {
			t.Errorf("name = %q", *got.Name)
		}
		if err := r.Delete(ctx, a.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if n, _ := r.Count(ctx, repository.Query{IncludeDeleted: true}); n != 1 {
			t.Errorf("after hard delete count = %d, want 1", n)
		}
	})
}

func TestRepositoryFind(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		r := repository.New[models.Session](db)
		base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, st := range []string{"active", "error", "active", "completed", "active"} {
			s := newSession("alice")
			s.Status, s.CreatedAt = st, base.Add(time.Duration(i)*time.Minute)
			s.Name = models.Ptr(string(rune('a' + i)))
			if err := r.Upsert(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.Find(ctx, repository.Query{
			Filters: []repository.Filter{{Column: "status", Value: []string{"active", "error"}}},
			UserID:  "alice",
			OrderBy: []repository.Order{{Column: "created_at", Desc: true}},
			Limit:   2, Offset: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range got {
			names = append(names, *s.Name)
		}
		if strings.Join(names, "") != "cb" {
			t.Errorf("names = %v, want [c b]", names)
		}
		if n, _ := r.Count(ctx, repository.Query{Filters: []repository.Filter{{Column: "status", Value: "active"}}}); n != 3 {
			t.Errorf("count active = %d", n)
		}
		if _, err := r.Find(ctx, repository.Query{OrderBy: []repository.Order{{Column: "id; DROP TABLE sessions"}}}); err == nil {
			t.Error("unknown order column accepted")
		}
		if _, err := r.Find(ctx, repository.Query{Filters: []repository.Filter{{Column: "nope", Value: 1}}}); err == nil {
			t.Error("unknown filter column accepted")
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
