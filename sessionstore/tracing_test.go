package sessionstore_test

import (
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 41: each store, load and lookup is a span with the session and the
// user, its database round trips child spans, and a message stored without
// trace ids carries the store span's, on every database.
func TestSpans(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			db := d.New(t)
			s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", TracerProvider: tp, TruncateLength: 10})
			if err != nil {
				t.Fatal(err)
			}
			given := msg("user", "traced by the caller")
			given.Extra = append(given.Extra, models.Field{Key: "trace_id", Value: []byte(`"caller-trace"`)})
			res, err := s.Store(ctx, "chat-1", []models.HistoryMessage{given, msg("assistant", strings.Repeat("long answer ", 10))}, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load(ctx, "chat-1", sessionstore.LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Lookup(ctx, "REM LOOKUP "+res.Keys[1]); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			byName := map[string]tracetest.SpanStub{}
			for _, sp := range spans {
				byName[sp.Name] = sp
				if !sp.EndTime.After(sp.StartTime) {
					t.Errorf("%s: no duration (%v to %v)", sp.Name, sp.StartTime, sp.EndTime)
				}
			}
			for _, name := range []string{"remstore.store", "remstore.load", "remstore.lookup", "remstore.db store", "remstore.db rows", "remstore.db row"} {
				if _, ok := byName[name]; !ok {
					t.Fatalf("no %s span among %d", name, len(spans))
				}
			}
			attrs := func(sp tracetest.SpanStub) map[string]string {
				m := map[string]string{}
				for _, a := range sp.Attributes {
					m[string(a.Key)] = a.Value.String()
				}
				return m
			}
			store := byName["remstore.store"]
			if a := attrs(store); a["remstore.session"] != "chat-1" || a["enduser.id"] != "alice" || a["remstore.messages"] != "2" || a["remstore.stored"] != "2" ||
				a["remstore.session.id"] != res.SessionID.String() {
				t.Fatalf("store span attributes: %v", a)
			}
			if a := attrs(byName["remstore.load"]); a["remstore.session"] != "chat-1" || a["remstore.messages"] != "2" {
				t.Fatalf("load span attributes: %v", a)
			}
			if db := byName["remstore.db store"]; db.Parent.SpanID() != store.SpanContext.SpanID() {
				t.Fatal("the database span is not the store's child")
			}
			// The row the caller traced keeps its id; the other links to
			// the store span.
			var rows []struct {
				TraceID string `bun:"trace_id"`
				SpanID  string `bun:"span_id"`
			}
			if err := db.NewRaw("SELECT COALESCE(trace_id, '') AS trace_id, COALESCE(span_id, '') AS span_id FROM messages WHERE session_id = ? ORDER BY created_at",
				res.SessionID).Scan(ctx, &rows); err != nil {
				t.Fatal(err)
			}
			want := [][2]string{{"caller-trace", ""}, {store.SpanContext.TraceID().String(), store.SpanContext.SpanID().String()}}
			if len(rows) != 2 || rows[0].TraceID != want[0][0] || rows[0].SpanID != want[0][1] || rows[1].TraceID != want[1][0] || rows[1].SpanID != want[1][1] {
				t.Fatalf("stored trace ids %+v, want %v", rows, want)
			}
		})
	}
}
