package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/sessionstore"
)

func newStore(t testing.TB, db *repository.DB, user string, tl int) *sessionstore.Store {
	t.Helper()
	s, err := sessionstore.New(db, sessionstore.Options{UserID: user, TruncateLength: tl})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func msg(role, content string) models.HistoryMessage {
	return models.HistoryMessage{Role: models.Role(role), Content: content}
}

func TestSessionUUID(t *testing.T) {
	t.Parallel()
	if got := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/remstore/remstore/session")); got != sessionstore.SessionNamespace {
		t.Fatalf("namespace %s is not the documented derivation %s", sessionstore.SessionNamespace, got)
	}
	u := uuid.New()
	for _, in := range []string{u.String(), strings.ToUpper(u.String()), "{" + u.String() + "}"} {
		if got, err := sessionstore.SessionUUID("alice", in); err != nil || got != u {
			t.Errorf("SessionUUID(%q) = %v, %v", in, got, err)
		}
	}
	// Per user: Python's uuid.uuid5(NS, "alice\0chat-42") and the same for bob.
	for user, want := range map[string]string{"alice": "ed723022-c922-5eb3-b848-00703740a6b1", "bob": "ed6bb8eb-bb18-5691-a8ed-987311c4b57a"} {
		if got, _ := sessionstore.SessionUUID(user, "chat-42"); got.String() != want {
			t.Errorf("%s/chat-42 -> %s, want %s", user, got, want)
		}
	}
	for _, bad := range []string{"", "  ", "a\x00b", "\xff", strings.Repeat("x", 513)} {
		if _, err := sessionstore.SessionUUID("alice", bad); err == nil {
			t.Errorf("SessionUUID(%q) accepted", bad)
		} else if fe, ok := models.AsFieldError(err); !ok || fe.Field != "session_id" {
			t.Errorf("SessionUUID(%q) err %v does not name session_id", bad, err)
		}
	}
}

// Rows carry exactly the metadata of SPEC §2; load gives the dicts of §3.
func TestStoreRowsAndLoad(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "tenant-1", 10)
		ts := "2024-01-15T10:30:00Z"
		long := strings.Repeat("é", 15) + "MIDDLE" + strings.Repeat("ü", 15)
		in := []models.HistoryMessage{
			{Role: "user", Content: "hello", Timestamp: &ts},
			{Role: "assistant", Content: long, ID: "0b7e2a7c-52a8-4cfb-8f0b-7b2d5e9c1a11",
				ToolCalls: []models.ToolCall{{ID: "c1", Name: "search", Arguments: "{}"}}, Extra: []models.Field{{Key: "trace_id", Value: []byte(`"tr"`)}}},
			{Role: "tool", Content: `{"ok":true}`, ToolCallID: "c1", ToolName: "search", ToolArguments: []byte(`{"q":"x"}`),
				Extra: []models.Field{{Key: "model", Value: []byte(`"gpt"`)}}},
			{Role: "system", Content: strings.Repeat("s", 50)},
			{Role: "user", Content: strings.Repeat("u", 50)},
		}
		res, err := s.Store(ctx, "chat-1", in, sessionstore.StoreOptions{UserID: "caller"})
		if err != nil {
			t.Fatal(err)
		}
		sid, _ := s.SessionUUID("chat-1")
		if res.SessionID != sid || len(res.Keys) != 5 || res.Keys[4] != fmt.Sprintf("session-%s-msg-4", sid) {
			t.Fatalf("result %+v", res)
		}
		rows, err := repository.New[table.Message](db).Find(ctx, repository.Query{
			Filters: []repository.Filter{{Column: "session_id", Value: sid}}})
		if err != nil || len(rows) != 5 {
			t.Fatalf("rows %d, %v", len(rows), err)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].CreatedAt.Before(rows[j].CreatedAt) })
		for i, r := range rows {
			if *r.TenantID != "tenant-1" || *r.UserID != "caller" || r.Content != in[i].Content {
				t.Errorf("row %d: tenant %v user %v", i, *r.TenantID, *r.UserID)
			}
			if fmt.Sprint(r.Metadata["message_index"]) != fmt.Sprint(i) || r.Metadata["entity_key"] != res.Keys[i] {
				t.Errorf("row %d metadata %v", i, r.Metadata)
			}
			if i > 0 && !r.CreatedAt.After(rows[i-1].CreatedAt) {
				t.Errorf("created_at not strictly increasing at %d", i)
			}
		}
		if rows[0].Metadata["timestamp"] != ts || rows[1].Metadata["timestamp"] != nil {
			t.Errorf("timestamps %v %v", rows[0].Metadata["timestamp"], rows[1].Metadata["timestamp"])
		}
		if rows[1].ID.String() != in[1].ID || *rows[1].TraceID != "tr" || rows[0].ToolCalls != nil {
			t.Errorf("id/trace/tool_calls: %v %v %s", rows[1].ID, rows[1].TraceID, rows[0].ToolCalls)
		}
		if !dbtest.JSONEqual(t, rows[1].ToolCalls, []byte(`{"items":[{"id":"c1","name":"search","arguments":"{}"}]}`)) {
			t.Errorf("tool_calls %s", rows[1].ToolCalls)
		}
		m := rows[2].Metadata
		if m["tool_call_id"] != "c1" || m["tool_name"] != "search" || m["model"] != "gpt" || fmt.Sprint(m["tool_arguments"]) != "map[q:x]" {
			t.Errorf("tool metadata %v", m)
		}
		sess, err := sessionRow(ctx, db, sid)
		if err != nil || *sess.Name != "chat-1" || sess.Status != "active" || *sess.TenantID != "tenant-1" || *sess.UserID != "caller" {
			t.Fatalf("session %+v %v", sess, err)
		}

		got, err := s.Load(ctx, "chat-1", sessionstore.LoadOptions{})
		if err != nil || len(got) != 5 {
			t.Fatalf("load %d %v", len(got), err)
		}
		wantLong := strings.Repeat("é", 10) + "\n\n... [Message truncated - REM LOOKUP " + res.Keys[1] + " to recover full content] ...\n\n" + strings.Repeat("ü", 10)
		if got[1].Content != wantLong || got[1].OriginalLength != 36 || got[1].EntityKey != res.Keys[1] {
			t.Errorf("compressed %q", got[1].Content)
		}
		if got[3].Compressed || got[4].Compressed {
			t.Error("system or user message compressed")
		}
		if got[2].ToolCallID != "c1" || got[2].ToolName != "search" || string(got[2].ToolArguments) != `{"q":"x"}` {
			t.Errorf("tool message %+v", got[2])
		}
		if *got[0].Timestamp != models.FormatTimestamp(rows[0].CreatedAt) {
			t.Errorf("timestamp %s", *got[0].Timestamp)
		}
		full, err := s.Lookup(ctx, "REM LOOKUP "+got[1].EntityKey)
		if err != nil || full != long {
			t.Fatalf("lookup = %q, %v", full, err)
		}
		if full, err := s.LookupIndex(ctx, "chat-1", 1); err != nil || full != long {
			t.Fatalf("lookup index = %q, %v", full, err)
		}
		other := newStore(t, db, "tenant-2", 10)
		if _, err := other.Lookup(ctx, got[1].EntityKey); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("other tenant lookup: %v", err)
		}
		if h, _ := other.Load(ctx, "chat-1", sessionstore.LoadOptions{}); len(h) != 0 {
			t.Fatalf("other tenant loaded %d messages", len(h))
		}
		exp, err := s.Expand(ctx, got)
		if err != nil || exp[1].Content != long || exp[1].Compressed {
			t.Fatalf("expand: %v", err)
		}
		// A retried call with the same ids writes nothing again.
		res2, err := s.Store(ctx, "chat-1", in[1:2], sessionstore.StoreOptions{UserID: "caller"})
		if err != nil || res2.Existing != 1 || res2.Keys[0] != res.Keys[1] {
			t.Fatalf("retry: %+v %v", res2, err)
		}
		if n, _ := repository.New[table.Message](db).Count(ctx, repository.Query{}); n != 5 {
			t.Fatalf("retry wrote a row: %d", n)
		}
	})
}

// The invariant of SPEC §4 over generated sessions.
func TestLookupInvariantProperty(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		dbtest.WithoutTenantGuard(t, db) // B's rows in A's session: the peer's, from before the guard
		const T = 8
		alphabet := []string{"a", "é", "日", "😀", "e\u0301", "\n", " ", "ß"}
		rng := rand.New(rand.NewPCG(1, 2))
		text := func(tag string) string {
			n := 2*T - 3 + rng.IntN(8) // around 2T
			var b strings.Builder
			b.WriteString(tag)
			for range n {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			return b.String()
		}
		roles := []string{"user", "assistant", "assistant", "tool", "system"}
		for range 6 {
			// A owns the session; B's rows come the peer's way (the peer lets
			// another tenant write into a session, remstore does not).
			sid := uuid.New()
			key := sid.String()
			a, b := newStore(t, db, "A", T), newStore(t, db, "B", T)
			clock := time.Now().UTC()
			var earlier []models.HistoryMessage
			for batch := range 5 {
				var msgs []models.HistoryMessage
				var bm []dbtest.PeerMessage
				for range 1 + rng.IntN(5) {
					r := roles[rng.IntN(len(roles))]
					m := msg(r, text("A:"))
					if r == "tool" {
						m.ToolCallID = "c"
					}
					msgs = append(msgs, m)
					bm = append(bm, dbtest.PeerMessage{Role: r, Content: text("B:")})
				}
				if _, err := a.Store(ctx, key, msgs, sessionstore.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
				bclock := time.Now().UTC()
				if _, err := dbtest.PeerStore(ctx, db, sid, "B", bm, func(i int) time.Time { return bclock.Add(time.Duration(i) * time.Microsecond) }); err != nil {
					t.Fatal(err)
				}
				if batch%2 == 1 { // the peer writes to A's history too
					var pm []dbtest.PeerMessage
					for range 3 {
						pm = append(pm, dbtest.PeerMessage{Role: "assistant", Content: text("P:")})
					}
					clock = time.Now().UTC().Add(time.Duration(batch) * time.Second)
					if _, err := dbtest.PeerStore(ctx, db, sid, "A", pm, func(i int) time.Time { return clock.Add(time.Duration(i) * time.Millisecond) }); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(2) == 0 { // soft-delete one of A's rows
					if _, err := db.ExecContext(ctx, `UPDATE messages SET deleted_at = ? WHERE id = (
						SELECT id FROM messages WHERE session_id = ? AND tenant_id = 'A' AND deleted_at IS NULL ORDER BY content LIMIT 1)`,
						time.Now().UTC(), sid); err != nil {
						t.Fatal(err)
					}
				}
				cur := checkInvariant(t, ctx, a, b, key)
				// Keys remstore stored still resolve to the same text. (A key
				// the peer's way, a live position, moves when a row before it
				// is deleted, in the peer as here: SPEC §4.)
				for _, m := range earlier {
					var live int
					if err := db.NewRaw("SELECT count(*) FROM messages WHERE "+db.SQL().EntityKey+" = ? AND deleted_at IS NULL",
						m.EntityKey).Scan(ctx, &live); err != nil {
						t.Fatal(err)
					}
					if !strings.HasPrefix(m.Content, "A:") || live == 0 {
						continue // a deleted row's key now means a live position, as in the peer
					}
					full, err := a.Lookup(ctx, m.EntityKey)
					if errors.Is(err, repository.ErrNotFound) {
						continue // its row was soft-deleted since
					}
					if err != nil || !strings.HasPrefix(full, m.Content[:T/2]) {
						t.Fatalf("earlier key %s now gives %q, %v", m.EntityKey, full, err)
					}
				}
				earlier = append(earlier, cur...)
			}
		}
	})
}

// checkInvariant loads A's history and checks every compressed message's key.
func checkInvariant(t *testing.T, ctx context.Context, a, b *sessionstore.Store, key string) []models.HistoryMessage {
	t.Helper()
	comp, err := a.Load(ctx, key, sessionstore.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loadEachMatches(t, a, key, sessionstore.LoadOptions{})
	full, err := a.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
	if err != nil || len(full) != len(comp) {
		t.Fatalf("loads differ: %d vs %d, %v", len(full), len(comp), err)
	}
	var out []models.HistoryMessage
	for i, m := range comp {
		if !m.Compressed {
			if m.Content != full[i].Content {
				t.Fatalf("uncompressed message %d differs", i)
			}
			continue
		}
		if m.Role != "assistant" {
			t.Fatalf("message %d with role %s compressed", i, m.Role)
		}
		if m.EntityKey == "" {
			continue
		}
		got, err := a.Lookup(ctx, m.EntityKey)
		if err != nil || got != full[i].Content {
			t.Fatalf("message %d key %s: got %q, %v; want %q", i, m.EntityKey, got, err, full[i].Content)
		}
		if got, err := b.Lookup(ctx, m.EntityKey); err == nil && !strings.HasPrefix(got, "B:") {
			t.Fatalf("tenant B read A's message %d", i)
		}
		out = append(out, m)
	}
	return out
}

// The peer writes with its own clock, here behind remstore's: its row sorts
// before rows already there. Every key the load hands out still finds its text.
func TestPeerClockSkew(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 4)
		long := func(c string) string { return strings.Repeat(c, 12) }
		if _, err := s.Store(ctx, "skew", []models.HistoryMessage{msg("assistant", long("a")), msg("assistant", long("b"))}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		sid, _ := s.SessionUUID("skew")
		past := time.Now().UTC().Add(-time.Hour)
		if _, err := dbtest.PeerStore(ctx, db, sid, "A", []dbtest.PeerMessage{{Role: "assistant", Content: long("p")}, {Role: "assistant", Content: long("q")}},
			func(i int) time.Time { return past.Add(time.Duration(i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		b := newStore(t, db, "B", 4)
		checkInvariant(t, ctx, s, b, "skew")
	})
}

// Rows the peer wrote load in order with keys equal to the peer's own.
func TestLoadPeerRows(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		sid := uuid.New()
		base := time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)
		body := strings.Repeat("x", 450)
		var pm []dbtest.PeerMessage
		for i := range 6 {
			role := []string{"user", "assistant", "tool"}[i%3]
			pm = append(pm, dbtest.PeerMessage{Role: role, Content: fmt.Sprintf("%d%s", i, body), ToolCallID: "call_1", ToolName: "search", ToolArguments: map[string]any{"q": i}})
		}
		// two batches: message_index restarts at 0 in the second, as the peer writes it
		if _, err := dbtest.PeerStore(ctx, db, sid, "alice", pm[:3], func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		if _, err := dbtest.PeerStore(ctx, db, sid, "alice", pm[3:], func(i int) time.Time { return base.Add(time.Duration(10+i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		s := newStore(t, db, "alice", 200)
		got, err := s.Load(ctx, sid.String(), sessionstore.LoadOptions{})
		if err != nil || len(got) != 6 {
			t.Fatalf("load %d %v", len(got), err)
		}
		for i, m := range got {
			if !strings.HasPrefix(m.Content, fmt.Sprint(i)) {
				t.Errorf("order: message %d is %q", i, m.Content[:3])
			}
			if m.Role == "assistant" {
				want := fmt.Sprintf("session-%s-msg-%d", sid, i) // the peer's key for this row
				if m.EntityKey != want {
					t.Errorf("key %q, want %q", m.EntityKey, want)
				}
				if full, err := s.Lookup(ctx, m.EntityKey); err != nil || full != pm[i].Content {
					t.Errorf("lookup %s: %v", m.EntityKey, err)
				}
			}
			if m.Role == "tool" && (m.ToolCallID != "call_1" || m.ToolName != "search" || string(m.ToolArguments) != fmt.Sprintf(`{"q":%d}`, i)) {
				t.Errorf("tool %d: %+v", i, m)
			}
		}
		if *got[0].Timestamp != "2024-01-15T10:30:00+00:00" {
			t.Errorf("timestamp %s", *got[0].Timestamp)
		}
		// remstore appends after the peer's rows.
		res, err := s.Store(ctx, sid.String(), []models.HistoryMessage{msg("user", "next")}, sessionstore.StoreOptions{})
		if err != nil || res.Keys[0] != fmt.Sprintf("session-%s-msg-6", sid) {
			t.Fatalf("append: %+v %v", res, err)
		}
	})
}

// 8 writers x 200 batches into one session: nothing lost, indexes 0..N-1
// unique and gap-free, each batch contiguous, each call told the keys of
// its own rows. On PostgreSQL the calls that meet in line run merged
// (turns.go): writer 0 sends caller ids and writer 1 another user id, which
// keep their calls apart.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 200)
		const writers, batches = 8, 200
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		var keysMu sync.Mutex
		keyOf := map[string]string{} // content -> the key its call was told
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range batches {
					size := 1 + (w+b)%3
					var msgs []models.HistoryMessage
					for i := range size {
						m := msg("user", fmt.Sprintf("w%d-b%d-%d/%d", w, b, i, size))
						if w == 0 {
							m.ID = uuid.NewString()
						}
						msgs = append(msgs, m)
					}
					user := ""
					if w == 1 {
						user = "someone-else"
					}
					res, err := s.Store(ctx, "busy", msgs, sessionstore.StoreOptions{UserID: user})
					if err != nil {
						errs <- err
						return
					}
					keysMu.Lock()
					for i, m := range msgs {
						keyOf[m.Content] = res.Keys[i]
					}
					keysMu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var stored []struct {
			Content string
			Key     string
		}
		sk := db.SQL().EntityKey
		if err := db.NewRaw("SELECT content, "+sk+" AS key FROM messages WHERE tenant_id = 'A' AND "+sk+" LIKE 'session-%'").Scan(ctx, &stored); err != nil {
			t.Fatal(err)
		}
		told := 0
		for _, r := range stored {
			if k, ok := keyOf[r.Content]; ok {
				told++
				if k != r.Key {
					t.Fatalf("%q: the call was told key %s, the row holds %s", r.Content, k, r.Key)
				}
			}
		}
		if told != len(keyOf) {
			t.Fatalf("%d of %d rows found by content", told, len(keyOf))
		}
		if n := sessionstore.MergedCalls(s); db.Postgres() && n == 0 {
			t.Error("no call ran merged: the test no longer meets turns.go's groups")
		} else {
			t.Logf("%d calls ran merged into another's", n)
		}
		got, err := s.Load(ctx, "busy", sessionstore.LoadOptions{NoCompress: true})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for w := range writers {
			for b := range batches {
				want += 1 + (w+b)%3
			}
		}
		if len(got) != want {
			t.Fatalf("%d messages, want %d", len(got), want)
		}
		for i := 0; i < len(got); {
			var w, b, k, size int
			fmt.Sscanf(got[i].Content, "w%d-b%d-%d/%d", &w, &b, &k, &size)
			for j := range size {
				if got[i+j].Content != fmt.Sprintf("w%d-b%d-%d/%d", w, b, j, size) {
					t.Fatalf("batch w%d-b%d interleaved at %d: %q", w, b, i+j, got[i+j].Content)
				}
			}
			i += size
		}
		sid, _ := s.SessionUUID("busy")
		var idx []int
		if err := db.NewRaw("SELECT "+map[bool]string{true: "(metadata->>'message_index')::int", false: "json_extract(metadata, '$.message_index')"}[repository.IsPostgres(db)]+
			" FROM messages WHERE session_id = ? ORDER BY created_at, id", sid).Scan(ctx, &idx); err != nil {
			t.Fatal(err)
		}
		for i, n := range idx {
			if n != i {
				t.Fatalf("message_index %d at position %d", n, i)
			}
		}
	})
}

// A bad message in the middle of a batch, or a failure inside the
// transaction, writes nothing.
func TestFailedBatchWritesNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 200)
		taken := uuid.New().String()
		if _, err := s.Store(ctx, "other", []models.HistoryMessage{{Role: "user", Content: "x", ID: taken}}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			bad   models.HistoryMessage
			field string
		}{
			{msg("user", "nul \x00 byte"), "content"},
			{msg("user", "bad \xff utf8"), "content"},
			{msg(strings.Repeat("r", 65), "x"), "role"},
			{models.HistoryMessage{Role: "user", ID: "not-a-uuid"}, "id"},
			{models.HistoryMessage{Role: "tool", ToolArguments: []byte(`{"a":"\u0000"}`)}, "tool_arguments"},
			{models.HistoryMessage{Role: "tool", ToolArguments: []byte(strings.Repeat("[", 300) + strings.Repeat("]", 300))}, "tool_arguments"},
			{models.HistoryMessage{Role: "user", Extra: []models.Field{{Key: "trace_id", Value: []byte(`"` + strings.Repeat("t", 300) + `"`)}}}, "trace_id"},
			{models.HistoryMessage{Role: "user", ID: taken}, "id"}, // found inside the transaction
		}
		for _, tc := range cases {
			batch := []models.HistoryMessage{msg("user", "first"), tc.bad, msg("user", "last")}
			_, err := s.Store(ctx, "atomic", batch, sessionstore.StoreOptions{})
			fe, ok := models.AsFieldError(err)
			if !ok || fe.Index != 1 || fe.Field != tc.field {
				t.Errorf("%s: err = %v, want a FieldError for message 1 field %s", tc.field, err, tc.field)
			}
		}
		if got, _ := s.Load(ctx, "atomic", sessionstore.LoadOptions{}); len(got) != 0 {
			t.Fatalf("%d messages written by failed batches", len(got))
		}
		if _, err := s.Store(ctx, "x", nil, sessionstore.StoreOptions{UserID: strings.Repeat("u", 300)}); err == nil {
			t.Error("oversized user id accepted")
		}
	})
}

func TestStorageDisabled(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "A", Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Store(ctx, "k", []models.HistoryMessage{msg("user", "x")}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, "k", sessionstore.LoadOptions{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("load = %v, %v", got, err)
	}
	if _, err := s.Lookup(ctx, "session-k-msg-0"); !errors.Is(err, repository.ErrNotFound) {
		t.Fatal(err)
	}
	if n, _ := repository.New[table.Message](db).Count(ctx, repository.Query{}); n != 0 {
		t.Fatalf("disabled store wrote %d rows", n)
	}
}

// The lookup query is an index probe, not a scan, on 100k rows.
func TestLookupUsesIndex(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	ctx := context.Background()
	sid := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id, name) VALUES (?, 'big')`, sid); err != nil {
		t.Fatal(err)
	}
	_, err := db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, created_at)
		SELECT gen_random_uuid(), ?, 'assistant', repeat('x', 500),
		       jsonb_build_object('message_index', g, 'entity_key', 'session-' || ? || '-msg-' || g), 'A',
		       now() + g * interval '1 microsecond'
		FROM generate_series(0, 99999) g`, sid, sid.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE messages"); err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("session-%s-msg-77777", sid)
	var plan []string
	if err := db.NewRaw("EXPLAIN SELECT content FROM messages WHERE metadata->>'entity_key' = ? AND tenant_id = ? AND deleted_at IS NULL LIMIT 1", key, "A").Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	if strings.Contains(p, "Seq Scan") || !strings.Contains(p, "remstore_messages_entity_key") {
		t.Fatalf("lookup plan is not an index probe:\n%s", p)
	}
	s := newStore(t, db, "A", 200)
	if got, err := s.Lookup(ctx, key); err != nil || len(got) != 500 {
		t.Fatalf("lookup: %d %v", len(got), err)
	}
}

func TestSessionNameAndBestEffort(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 200)
		sid, err := s.EnsureSession(ctx, "named", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := rename(ctx, s, "named", "Trip planning"); err != nil {
			t.Fatal(err)
		}
		sess, err := sessionRow(ctx, db, sid)
		if err != nil || *sess.Name != "Trip planning" {
			t.Fatalf("session %+v %v", sess, err)
		}
		if err := rename(ctx, newStore(t, db, "B", 200), "named", "x"); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("other tenant renamed the session: %v", err)
		}
		be := sessionstore.BestEffort{Store: s}
		in := []models.HistoryMessage{msg("user", "ok"), msg("user", "bad\x00")}
		if out := be.Append(ctx, "named", in, sessionstore.StoreOptions{}); len(out) != 2 {
			t.Fatalf("best-effort store returned %d messages", len(out))
		}
		if got := be.Load(ctx, "named", sessionstore.LoadOptions{}); len(got) != 0 {
			t.Fatalf("failed batch was written: %d", len(got))
		}
		if got := be.Load(ctx, "", sessionstore.LoadOptions{}); got == nil || len(got) != 0 {
			t.Fatalf("best-effort load of a bad key = %v", got)
		}
		if _, ok := be.Lookup(ctx, "session-x-msg-0"); ok {
			t.Fatal("lookup found something")
		}
	})
}

// sessionRow reads a session's row as it is stored.
func sessionRow(ctx context.Context, db *repository.DB, sid uuid.UUID) (*table.Session, error) {
	rows, err := repository.New[table.Session](db).Find(ctx, repository.Query{Filters: []repository.Filter{{Column: "id", Value: sid}}})
	if err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("session %s: %d rows, %v", sid, len(rows), err)
	}
	return &rows[0], nil
}

// rename sets a session's name through UpdateSession.
func rename(ctx context.Context, s *sessionstore.Store, key, name string) error {
	_, err := s.UpdateSession(ctx, key, sessionstore.SessionUpdate{Name: &name})
	return err
}
