package viewer_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/memtest"
	"github.com/remstore/remstore/models"
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
			r, err := st.StoreMessages(ctx, name, batch, "")
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
