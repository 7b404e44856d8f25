package sessionstore_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/transfer"
)

// Every row every write path produces is one the peer can read (SPEC §2):
// non-null role, content and timestamps; graph_edges a JSON array, metadata
// a JSON object, tags an array (never NULL), tool_calls NULL or an object with
// items; the session rows likewise. The peer validates every row of a session
// before it filters by tenant, so one bad row empties the session for all.
func TestRowsThePeerCanRead(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 10)
		long := strings.Repeat("long answer ", 10)
		tc := msg("assistant", "calling")
		tc.ToolCalls = []models.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}
		paiCalls := 0
		paths := map[string]func() error{
			"one message": func() error {
				_, err := s.Store(ctx, "one", []models.HistoryMessage{msg("user", "hi")}, sessionstore.StoreOptions{})
				return err
			},
			"batch": func() error {
				_, err := s.Store(ctx, "batch", []models.HistoryMessage{msg("user", "q"), tc,
					{Role: "tool", Content: "{}", ToolCallID: "c1", ToolName: "f", ToolArguments: []byte(`{"a":1}`)}, msg("assistant", long)}, sessionstore.StoreOptions{UserID: "caller"})

				return err
			},
			"caller ids": func() error {
				m := msg("user", "with id")
				m.ID = uuid.NewString()
				_, err := s.Store(ctx, "ids", []models.HistoryMessage{m, msg("assistant", long)}, sessionstore.StoreOptions{})
				return err
			},
			"ensure session": func() error { _, err := s.EnsureSession(ctx, "ensured", ""); return err },
			"status with reason": func() error {
				_, err := s.SetStatus(ctx, "batch", "cancelled", "stopped by the user")
				return err
			},
			"update": func() error {
				name := "renamed"
				_, err := s.UpdateSession(ctx, "one", sessionstore.SessionUpdate{Name: &name, Settings: map[string]any{"k": 1}})
				return err
			},
			"fork": func() error {
				_, err := s.Fork(ctx, "batch", sessionstore.ForkOptions{NewSessionKey: "forked"})
				return err
			},
			"compact": func() error {
				_, err := s.Compact(ctx, "ids", sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: 1})
				return err
			},
			"pydantic-ai": func() error {
				b, err := os.ReadFile("../fixtures/pydantic-ai/2-tools.json")
				if err != nil {
					return err
				}
				in, err := convert.DecodePydanticAI(bytes.NewReader(b))
				if err != nil {
					return err
				}
				for _, m := range in.Messages {
					if len(m.ToolCalls) > 0 {
						paiCalls++
					}
				}
				_, err = s.Store(ctx, "pai", in.Messages, sessionstore.StoreOptions{})
				return err
			},
			"pop and clear": func() error {
				if _, _, err := s.PopMessage(ctx, "pai"); err != nil {
					return err
				}
				_, err := s.ClearMessages(ctx, "one")
				return err
			},
			"import": func() error { // records without the JSON and array columns
				sid, at := uuid.NewString(), `"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"`
				in := `{"kind":"session","id":"` + sid + `","status":"active","tenant_id":"A",` + at + "}\n" +
					`{"kind":"message","id":"` + uuid.NewString() + `","session_id":"` + sid + `","role":"user","content":"imported","tenant_id":"A",` + at + "}\n"
				_, err := transfer.Import(ctx, db, strings.NewReader(in), transfer.ImportOptions{AllTenants: true})
				return err
			},
		}
		for _, name := range []string{"one message", "batch", "caller ids", "ensure session", "status with reason", "update", "fork", "compact",
			"pydantic-ai", "pop and clear", "import"} {
			if err := paths[name](); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		pg := repository.IsPostgres(db)
		isArray, isObject := "json_type(%s) = 'array'", "json_type(%s) = 'object'"
		tagsOK := "tags IS NOT NULL AND tags LIKE '{%'"
		if pg {
			isArray, isObject = "jsonb_typeof(%s) = 'array'", "jsonb_typeof(%s) = 'object'"
			tagsOK = "tags IS NOT NULL"
		}
		f := func(format, col string) string { return strings.Replace(format, "%s", col, 1) }
		checks := map[string]string{
			"messages": "role IS NOT NULL AND content IS NOT NULL AND created_at IS NOT NULL AND updated_at IS NOT NULL AND " +
				f(isArray, "graph_edges") + " AND " + f(isObject, "metadata") + " AND " + tagsOK +
				" AND (tool_calls IS NULL OR " + f(isObject, "tool_calls") + ")",
			"sessions": "status IS NOT NULL AND created_at IS NOT NULL AND updated_at IS NOT NULL AND " +
				f(isArray, "graph_edges") + " AND " + f(isObject, "metadata") + " AND " + tagsOK,
		}
		for table, ok := range checks {
			var total, good int
			if err := db.NewRaw("SELECT count(*), COALESCE(SUM(CASE WHEN "+ok+" THEN 1 ELSE 0 END), 0) FROM "+table).Scan(ctx, &total, &good); err != nil {
				t.Fatal(err)
			}
			if total == 0 || good != total {
				t.Errorf("%s: %d of %d rows the peer cannot read", table, total-good, total)
			}
		}
		var withItems int
		if err := db.NewRaw("SELECT count(*) FROM messages WHERE tool_calls IS NOT NULL").Scan(ctx, &withItems); err != nil || paiCalls == 0 || withItems != 2+paiCalls {
			t.Errorf("tool_calls rows: %d, want the call, its fork copy and %d pydantic-ai answers %v", withItems, paiCalls, err)
		}
	})
}
