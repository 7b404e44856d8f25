package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/transfer"
)

// seed writes varied data: two tenants, tool metadata, tool_calls, a
// soft-deleted row, rows the peer wrote, big integers in JSON.
func seed(t *testing.T, db *repository.DB) {
	t.Helper()
	ctx := context.Background()
	for _, tenant := range []string{"A", "B"} {
		s := newStore(t, db, tenant, 200)
		for i := range 3 {
			ts := "2024-01-15T10:30:00Z"
			msgs := []models.HistoryMessage{
				{Role: "user", Content: fmt.Sprintf("%s question %d «é» 😀", tenant, i), Timestamp: &ts},
				{Role: "assistant", Content: strings.Repeat("long answer ", 50), Extra: []models.Field{
					{Key: "trace_id", Value: []byte(`"trace-1"`)}},
					ToolCalls: []models.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":1}`}}},
				{Role: "tool", Content: `{"n": 12345678901234567890}`, ToolCallID: "c1", ToolName: "search",
					ToolArguments: []byte(`{"q":1,"big":9007199254740993,"f":1.5}`)},
			}
			if _, err := s.Store(ctx, fmt.Sprintf("chat-%d", i), msgs, sessionstore.StoreOptions{UserID: "caller"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, "UPDATE messages SET deleted_at = ? WHERE role = 'user' AND tenant_id = 'A' AND content LIKE '%question 1%'",
		time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	sid := uuid.New()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := dbtest.PeerStore(ctx, db, sid, "A", []dbtest.PeerMessage{{Role: "user", Content: "peer"}, {Role: "tool", Content: "x", ToolCallID: "p", ToolArguments: []any{1, "a"}}},
		func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
		t.Fatal(err)
	}
}

func newStore(t testing.TB, db *repository.DB, user string, tl int) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.New(db, sessionstore.Options{UserID: user, TruncateLength: tl})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func export(t *testing.T, db *repository.DB, o transfer.ExportOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := transfer.Export(context.Background(), db, &b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// export -> import -> export gives identical bytes, between every pair of
// dialects.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	for _, from := range dbtest.Dialects {
		for _, to := range dbtest.Dialects {
			t.Run(from.Name+"_to_"+to.Name, func(t *testing.T) {
				t.Parallel()
				src := from.New(t)
				seed(t, src)
				first := export(t, src, transfer.ExportOptions{})
				if bytes.Count(first, []byte("\n")) != 7+20 { // 3 chats per tenant + 1 peer session; 18 + 2 messages
					t.Fatalf("export has %d lines", bytes.Count(first, []byte("\n")))
				}
				dst := to.New(t)
				st, err := transfer.Import(context.Background(), dst, bytes.NewReader(first), transfer.ImportOptions{BatchSize: 4, AllTenants: true})
				if err != nil {
					t.Fatal(err)
				}
				if st.Messages != 20 || st.Inserted != 20 || st.Skipped != 0 || st.Sessions != 7 {
					t.Fatalf("stats %+v", st)
				}
				second := export(t, dst, transfer.ExportOptions{})
				if !bytes.Equal(first, second) {
					t.Fatalf("exports differ:\n%s\n----\n%s", first, second)
				}
				// the imported store works: loads, keys resolve
				s := newStore(t, dst, "A", 200)
				h, err := s.Load(context.Background(), "chat-0", sessionstore.LoadOptions{})
				if err != nil || len(h) != 3 || !h[1].Compressed {
					t.Fatalf("load after import: %d %v", len(h), err)
				}
				if full, err := s.Lookup(context.Background(), h[1].EntityKey); err != nil || !strings.HasPrefix(full, "long answer") {
					t.Fatalf("lookup after import: %v", err)
				}
			})
		}
	}
}

type failAfter struct {
	r io.Reader
	n int
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("killed")
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// An import that dies halfway and is run again ends with every message once.
func TestImportResumes(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			src := d.New(t)
			seed(t, src)
			data := export(t, src, transfer.ExportOptions{})
			dst := d.New(t)
			ctx := context.Background()
			_, err := transfer.Import(ctx, dst, &failAfter{r: bytes.NewReader(data), n: len(data) / 2}, transfer.ImportOptions{BatchSize: 3, AllTenants: true})
			if err == nil {
				t.Fatal("the killed import did not fail")
			}
			partial, _ := repository.New[table.Message](dst).Count(ctx, repository.Query{IncludeDeleted: true})
			if partial == 0 || partial >= 20 {
				t.Fatalf("partial import wrote %d messages; the test needs a real half", partial)
			}
			// Batches of 5 against the 3 of the first run: one batch holds
			// rows already there and new ones (a COPY that meets an existing
			// id, then the probe).
			st, err := transfer.Import(ctx, dst, bytes.NewReader(data), transfer.ImportOptions{BatchSize: 5, AllTenants: true})
			if err != nil {
				t.Fatal(err)
			}
			if st.Inserted+st.Skipped != 20 || st.Skipped != partial || partial%5 == 0 {
				t.Fatalf("resume stats %+v after %d", st, partial)
			}
			if got := export(t, dst, transfer.ExportOptions{}); !bytes.Equal(got, data) {
				t.Fatal("after resuming, the export differs from the source")
			}
		})
	}
}

func TestExportTenantScoped(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	seed(t, db)
	b := export(t, db, transfer.ExportOptions{TenantID: "B", SessionID: "chat-1"})
	// B's chat-1 is B's own session (keys map per user): its row and 3 messages, nothing of A's.
	if bytes.Count(b, []byte(`"kind":"message"`)) != 3 || bytes.Count(b, []byte(`"tenant_id":"B"`)) != 4 || bytes.Contains(b, []byte("A question")) {
		t.Fatalf("tenant B export:\n%s", b)
	}
	// A's chat-1 by its UUID is not found for B, and nothing is written.
	aid, _ := sessionstore.SessionUUID("A", "chat-1")
	var out bytes.Buffer
	if _, err := transfer.Export(context.Background(), db, &out, transfer.ExportOptions{TenantID: "B", SessionID: aid.String()}); !errors.Is(err, sessionstore.ErrNotFound) || out.Len() != 0 {
		t.Fatalf("B exported A's session: %v %q", err, out.String())
	}
	if _, err := transfer.Import(context.Background(), db, strings.NewReader(`{"kind":"nope"}`), transfer.ImportOptions{AllTenants: true}); err == nil {
		t.Fatal("unknown record accepted")
	}
}

// A record whose id the table holds as another message (issue 42: the same
// id in two import batches was skipped without a word) is refused naming its
// line; the same record twice, in two batches, is written once.
func TestImportRefusesAnIDTakenByAnotherMessage(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			src := d.New(t)
			seed(t, src)
			data := export(t, src, transfer.ExportOptions{})
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			var msgLine string
			for _, l := range lines {
				if strings.Contains(l, `"kind":"message"`) && strings.Contains(l, `question 0`) {
					msgLine = l
					break
				}
			}
			if msgLine == "" {
				t.Fatal("no message record to repeat")
			}
			ctx := context.Background()
			// The same record again at the end, in a later batch: written once.
			dup := append(append([]string{}, lines...), msgLine)
			dst := d.New(t)
			st, err := transfer.Import(ctx, dst, strings.NewReader(strings.Join(dup, "\n")+"\n"), transfer.ImportOptions{BatchSize: 3, AllTenants: true})
			if err != nil || st.Inserted != 20 || st.Skipped != 1 {
				t.Fatalf("the same record twice: %+v %v", st, err)
			}
			// Its id with another text, in a later batch: refused, naming the line.
			forged := strings.Replace(msgLine, "question 0", "a different question", 1)
			bad := append(append([]string{}, lines...), forged)
			dst2 := d.New(t)
			_, err = transfer.Import(ctx, dst2, strings.NewReader(strings.Join(bad, "\n")+"\n"), transfer.ImportOptions{BatchSize: 3, AllTenants: true})
			want := fmt.Sprintf("line %d", len(bad))
			if fe, ok := models.AsFieldError(err); !ok || fe.Field != want || !strings.Contains(fe.Reason, "stored already as another message") {
				t.Fatalf("an id taken by another message: %v (want field %q)", err, want)
			}
			n, _ := repository.New[table.Message](dst2).Count(ctx, repository.Query{IncludeDeleted: true})
			if n != 20 {
				t.Errorf("%d messages after the refused batch", n)
			}
			var content string
			if err := dst2.QueryRowContext(ctx, "SELECT content FROM messages WHERE content LIKE '%different question%'").Scan(&content); err == nil {
				t.Error("the forged record was written")
			}
		})
	}
}
