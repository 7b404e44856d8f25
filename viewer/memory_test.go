package viewer_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/memtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// H1 of issue 42, the viewer's part: the session page built the whole
// session for every request (totals and one page of 500 drawn). It streams
// now: the page of a session ten times longer costs about the same.
func TestSessionPageMemoryFlat(t *testing.T) {
	db := dbtest.NewPostgres(t)
	stores := storesOf(t, db, viewerT)
	st, err := stores.For("alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	batch := make([]models.HistoryMessage, 1000)
	for i := range batch {
		batch[i] = models.HistoryMessage{Role: "assistant", Content: fmt.Sprintf("%d %s", i, strings.Repeat("long answer text ", 40))}
	}
	ids := map[string]string{}
	for name, n := range map[string]int{"small": 2000, "large": 20000} {
		for range n / 1000 {
			r, err := st.Store(ctx, name, batch, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = r.SessionID.String()
		}
	}
	api, err := httpapi.New(httpapi.Options{Stores: stores, UI: true, APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: httptest.NewServer(api)}
	t.Cleanup(f.srv.Close)
	c, _ := f.client(t, aliceKey, "alice")
	for _, view := range []struct{ query, last, next string }{
		{"", `id="m499"`, `id="m500"`},
		{"?view=pydantic", "from=500&amp;view=pydantic", ""},
	} {
		peak := func(name string) uint64 {
			return memtest.PeakHeap(func() {
				resp, err := c.Get(f.srv.URL + "/ui/sessions/" + ids[name] + view.query)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.Contains(string(b), view.last) || view.next != "" && strings.Contains(string(b), view.next) {
					t.Fatalf("%s%s: %d, page %.300s", name, view.query, resp.StatusCode, b)
				}
			})
		}
		small, large := peak("small"), peak("large")
		for range 2 {
			small, large = min(small, peak("small")), min(large, peak("large"))
		}
		t.Logf("session page%s: peak heap above baseline: 2,000 messages %d KiB, 20,000 messages %d KiB (%.2fx)",
			view.query, small>>10, large>>10, float64(large)/float64(max(small, 1)))
		// The old code: 5.6 MB and 18.6 MB (3.3x) for the history; a tenth
		// of the messages is drawn in both, so the stream's pages cost the
		// same.
		if large > 2*small+(2<<20) {
			t.Fatalf("%s: 20k messages peaked at %d bytes, 2k at %d: memory grows with the session", view.query, large, small)
		}
	}
}

// The audit page's memory follows the session's dump, not the session
// (issue 55): it read every row of the session into an index (90 MB for
// 200k messages, 601 MB for 8 pages at once). It reads the dump first now
// and keeps, of the rows streaming past, only those its calls saw: the page
// of a session ten times longer costs about the same, and so do 8 at once.
func TestAuditPageMemoryFlat(t *testing.T) {
	db := dbtest.NewPostgres(t)
	stores := storesOf(t, db, viewerT)
	st, err := stores.For("alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	batch := make([]models.HistoryMessage, 1000)
	ids := map[string]string{}
	sizes := map[string]int{"small": 4000, "large": 40000}
	for name, n := range sizes {
		for b := range n / 1000 {
			for i := range batch {
				role := models.RoleUser
				if i%2 == 1 {
					role = models.RoleAssistant
				}
				batch[i] = models.HistoryMessage{Role: role, Content: fmt.Sprintf("%s %d", name, b*1000+i)}
			}
			r, err := st.Store(ctx, name, batch, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = r.SessionID.String()
		}
		// Three calls, each of which saw the session's last 20 messages.
		seen, err := st.Load(ctx, name, sessionstore.LoadOptions{LastN: 20})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := audit.Append(ctx, dir, ids[name], audit.Invocation{Timestamp: time.Now(), Prompt: fmt.Sprint("call ", i), RawSessionHistory: seen}); err != nil {
				t.Fatal(err)
			}
		}
	}
	api, err := httpapi.New(httpapi.Options{Stores: stores, UI: true, AuditDir: dir, APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: httptest.NewServer(api)}
	t.Cleanup(f.srv.Close)
	c, _ := f.client(t, aliceKey, "alice")
	page := func(name string) {
		resp, err := c.Get(f.srv.URL + "/ui/sessions/" + ids[name] + "/audit")
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Count(string(b), `class="call-link"`) != 3 || !strings.Contains(string(b), "call 2") {
			t.Errorf("%s: %d, page %.300s", name, resp.StatusCode, b)
		}
	}
	peak := func(name string, at int) uint64 {
		return memtest.PeakHeap(func() {
			var wg sync.WaitGroup
			for range at {
				wg.Add(1)
				go func() { defer wg.Done(); page(name) }()
			}
			wg.Wait()
		})
	}
	small, large := peak("small", 1), peak("large", 1)
	for range 2 {
		small, large = min(small, peak("small", 1)), min(large, peak("large", 1))
	}
	eight := peak("large", 8)
	t.Logf("audit page: peak heap above baseline: %d messages %d KiB, %d messages %d KiB (%.2fx); 8 at once on the larger %d KiB",
		sizes["small"], small>>10, sizes["large"], large>>10, float64(large)/float64(max(small, 1)), eight>>10)
	if large > 2*small+(2<<20) {
		t.Fatalf("%d messages peaked at %d bytes, %d at %d: memory grows with the session", sizes["large"], large, sizes["small"], small)
	}
}
