package sessionstore_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// H1 of issue 42, the tenant's part: configurable limits per user, refused
// with 409 limit_reached naming the field, nothing written; a resend of what
// is stored already still gets its answer at the limit.
func TestLimits(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", Limits: sessionstore.Limits{SessionMessages: 5, Sessions: 2}})
			if err != nil {
				t.Fatal(err)
			}
			three := func() []models.HistoryMessage {
				return []models.HistoryMessage{msg("user", "a"), msg("assistant", "b"), msg("user", "c")}
			}
			if _, err := s.StoreMessages(ctx, "s1", three(), ""); err != nil {
				t.Fatal(err)
			}
			limited := func(err error, field string) {
				t.Helper()
				var le *sessionstore.LimitError
				c := sessionstore.Classify(err)
				if !errors.As(err, &le) || !errors.Is(err, sessionstore.ErrLimit) || c.Code != "limit_reached" || c.Field != field || c.Kind.HTTPStatus() != 409 {
					t.Fatalf("want a limit on %s: %v (%+v)", field, err, c)
				}
			}
			_, err = s.StoreMessages(ctx, "s1", three(), "")
			limited(err, "messages")
			if h, _ := s.Load(ctx, "s1", sessionstore.LoadOptions{}); len(h) != 3 {
				t.Fatalf("a refused store wrote: %d messages", len(h))
			}
			last := []models.HistoryMessage{{Role: "user", Content: "d", ID: uuid.NewString()}, {Role: "assistant", Content: "e", ID: uuid.NewString()}}
			if _, err := s.StoreMessages(ctx, "s1", last, ""); err != nil {
				t.Fatalf("up to the limit: %v", err)
			}
			if res, err := s.StoreMessages(ctx, "s1", last, ""); err != nil || res.Existing != 2 {
				t.Fatalf("a resend at the limit: %+v %v", res, err)
			}
			// Sessions: two; a third is refused; a purge makes room.
			if _, err := s.StoreMessages(ctx, "s2", three()[:1], ""); err != nil {
				t.Fatal(err)
			}
			_, err = s.StoreMessages(ctx, "s3", three()[:1], "")
			limited(err, "session_id")
			if _, err := s.SessionInfo(ctx, "s3"); err == nil {
				t.Fatal("the refused session exists")
			}
			if err := s.DeleteSession(ctx, "s2", true); err != nil {
				t.Fatal(err)
			}
			if _, err := s.StoreMessages(ctx, "s3", three()[:1], ""); err != nil {
				t.Fatalf("after a purge: %v", err)
			}
			// Another user has limits of its own.
			bob, _ := sessionstore.New(db, sessionstore.Options{UserID: "bob", Limits: sessionstore.Limits{Sessions: 2}})
			if _, err := bob.StoreMessages(ctx, "s1", three(), ""); err != nil {
				t.Fatalf("bob: %v", err)
			}
		})
	}
}
