package badinput

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/cli"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

type badCase struct {
	File, Expect, Field, Note string
	data                      []byte
}

func corpus(t *testing.T) []badCase {
	t.Helper()
	b, err := os.ReadFile(fixtures.Path("bad", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []badCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		if cs[i].data, err = os.ReadFile(fixtures.Path("bad", cs[i].File)); err != nil {
			t.Fatal(err)
		}
	}
	return append(cs, generated()...)
}

// generated are the cases too large to check in.
func generated() []badCase {
	many := func(n int) []byte {
		var b bytes.Buffer
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"role":"user","content":"m%d"}`, i)
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	big := func(n int) []byte { return []byte(`[{"role":"assistant","content":"` + strings.Repeat("x", n) + `"}]`) }
	return []badCase{
		{File: "50MB message", Expect: "accept", Note: "under the 64 MiB per-message cap; HTTP's 32 MiB body cap answers 413", data: big(50 << 20)},
		{File: "64 MiB + 1 message", Expect: "reject", Field: "content", data: big(sessionstore.MaxContentBytes + 1)},
		{File: "100k messages", Expect: "accept", Note: "the per-call cap is 100,000", data: many(100_000)},
		{File: "100,001 messages", Expect: "reject", Field: "messages", data: many(100_001)},
	}
}

func count(t *testing.T, db *repository.DB, key string) int {
	t.Helper()
	// By the session's name, whatever user the key was mapped for.
	n, err := db.NewSelect().Table("messages").Where("session_id IN (SELECT id FROM sessions WHERE name = ?)", key).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestLibrary(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	st, _ := sessionstore.New(db, sessionstore.Options{UserID: "A"})
	for i, c := range corpus(t) {
		key := fmt.Sprintf("lib-%d", i)
		msgs, err := models.DecodeHistory(c.data)
		if err == nil {
			_, err = st.Store(context.Background(), key, msgs, sessionstore.StoreOptions{})
		}
		switch {
		case c.Expect == "accept" && err != nil:
			t.Errorf("%s: rejected: %v", c.File, err)
		case c.Expect == "reject" && err == nil:
			t.Errorf("%s: accepted", c.File)
		case c.Expect == "reject":
			fe, ok := models.AsFieldError(err)
			if !ok || (c.Field != "" && fe.Field != c.Field) {
				t.Errorf("%s: error %v does not name field %q", c.File, err, c.Field)
			}
			if n := count(t, db, key); n != 0 {
				t.Errorf("%s: %d rows written by a rejected call", c.File, n)
			}
		}
	}
	// SQL in every string stayed data: the tables are there and the text verbatim.
	h, err := st.Load(context.Background(), fmt.Sprintf("lib-%d", indexOf(t, "sql_injection_strings.json")), sessionstore.LoadOptions{})
	if err != nil || len(h) != 1 || h[0].Content != "Robert'); DROP TABLE sessions;--" || h[0].ToolCallID != "user'; DROP TABLE messages; --" {
		t.Fatalf("injection strings not stored verbatim: %+v %v", h, err)
	}
	for _, bad := range []string{"", strings.Repeat("s", 600), "a\x00b"} {
		if _, err := st.Store(context.Background(), bad, []models.HistoryMessage{{Role: "user"}}, sessionstore.StoreOptions{}); err == nil {
			t.Errorf("session id %q accepted", bad)
		}
	}
}

func indexOf(t *testing.T, file string) int {
	for i, c := range corpus(t) {
		if c.File == file {
			return i
		}
	}
	t.Fatalf("no case %s", file)
	return -1
}

func TestCLI(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "bad.db")
	for i, c := range corpus(t) {
		var out, errb bytes.Buffer
		getenv := func(k string) (string, bool) {
			if k == "REMSTORE_DB" {
				return dbPath, true
			}
			return "", false
		}
		code := cli.RunWith(context.Background(), cli.Options{Getenv: getenv, Dir: t.TempDir()},
			[]string{"store", "--session-id", fmt.Sprintf("cli-%d", i)}, bytes.NewReader(c.data), &out, &errb)
		want := map[string]int{"accept": 0, "reject": 2}[c.Expect]
		if code != want {
			t.Errorf("%s: exit %d, want %d: %s", c.File, code, want, errb.String())
		}
		if code != 0 && (strings.Count(errb.String(), "\n") != 1 || c.Field != "" && !strings.Contains(errb.String(), `"`+c.Field+`"`)) {
			t.Errorf("%s: stderr %q: want one line naming %q", c.File, errb.String(), c.Field)
		}
	}
	for _, args := range [][]string{{"store", "--session-id", ""}, {"store", "--session-id", strings.Repeat("s", 600)}} {
		var errb bytes.Buffer
		if code := cli.RunWith(context.Background(), cli.Options{Getenv: func(string) (string, bool) { return dbPath, true }},
			args, strings.NewReader(`[{"role":"user"}]`), io.Discard, &errb); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errb.String())
		}
	}
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	api, err := httpapi.New(httpapi.Options{Stores: storesOf(t, db, 0), Insecure: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range corpus(t) {
		key := fmt.Sprintf("http-%d", i)
		r := httptest.NewRequest("POST", "/v1/sessions/"+key+"/messages", bytes.NewReader(c.data))
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		want, field := map[string]int{"accept": 201, "reject": 400}[c.Expect], c.Field
		if len(c.data) > httpapi.DefaultMaxBodyBytes {
			want, field = 413, "body"
		}
		if w.Code != want {
			t.Errorf("%s: %d, want %d: %.200s", c.File, w.Code, want, w.Body.String())
			continue
		}
		if w.Code >= 400 {
			var eb httpapi.ErrorBody
			if json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Error.Code == "" || (field != "" && !strings.HasSuffix(eb.Error.Field, field)) {
				t.Errorf("%s: error body %s does not name %q", c.File, w.Body.String(), field)
			}
			if n := count(t, db, key); n != 0 {
				t.Errorf("%s: %d rows written by a rejected request", c.File, n)
			}
		}
	}
}

// SQL in the session id and the user id is data too, on both databases.
func TestInjectionInIDs(t *testing.T) {
	t.Parallel()
	evil := []string{"'; DROP TABLE messages; --", `x" OR 1=1 --`, "a'); DELETE FROM sessions; --", "\\'; SELECT pg_sleep(10); --"}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			ctx := context.Background()
			for _, e := range evil {
				st, err := sessionstore.New(db, sessionstore.Options{UserID: e})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.Store(ctx, e, []models.HistoryMessage{{Role: "user", Content: e}}, sessionstore.StoreOptions{UserID: e}); err != nil {
					t.Fatalf("%q: %v", e, err)
				}
				h, err := st.Load(ctx, e, sessionstore.LoadOptions{})
				if err != nil || len(h) != 1 || h[0].Content != e {
					t.Fatalf("%q: %+v %v", e, h, err)
				}
				info, _, err := st.GetSession(ctx, e, sessionstore.LoadOptions{})
				if err != nil || info.Name != e || info.TenantID != e || info.UserID != e {
					t.Fatalf("%q: session %+v %v", e, info, err)
				}
				if _, err := st.Lookup(ctx, "session-"+e+"-msg-0"); err == nil {
					t.Fatalf("%q: a key with SQL in it resolved", e)
				}
			}
			n, err := db.NewSelect().Table("messages").Count(ctx)
			if err != nil || int(n) != len(evil) {
				t.Fatalf("messages table: %d rows, %v", n, err)
			}
		})
	}
}

// API keys never reach the access log.
func TestAPIKeysNotLogged(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	const key = "secret-key-do-not-log-0123"
	api, err := httpapi.New(httpapi.Options{Stores: storesOf(t, dbtest.NewSQLite(t), 0), APIKeys: []httpapi.APIKey{{Key: key}},
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range []string{"Bearer " + key, "Bearer wrong-" + key} {
		r := httptest.NewRequest("GET", "/v1/sessions", nil)
		r.Header.Set("Authorization", auth)
		api.ServeHTTP(httptest.NewRecorder(), r)
	}
	if log.Len() == 0 || strings.Contains(log.String(), key) {
		t.Fatalf("access log %q", log.String())
	}
}

// storesOf builds the stores of db as serve does (tests: T given, storage on).
func storesOf(t testing.TB, db *repository.DB, truncate int) *sessionstore.Stores {
	t.Helper()
	s, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: truncate})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
