package sessionstore_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// A compressed load has the database cut long answers (only their first and
// last T code points and their length cross the wire); the result must be
// byte for byte the compressor's cut of the full text, for any text: 1- to
// 4-byte characters, combining marks, ZWJ sequences, CRLF, lengths around 2T.
func TestServerCutEqualsClientCut(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		alphabet := []string{"a", "é", "日", "😀", "e\u0301", "\u200d", "\r\n", " ", "ß", "👩‍👩‍👧"}
		rng := rand.New(rand.NewPCG(7, 9))
		for _, T := range []int{1, 3, 7, 50} {
			s := newStore(t, db, "A", T)
			var msgs []models.HistoryMessage
			var peer []dbtest.PeerMessage // the empty role: only the peer writes it
			for range 40 {
				var b strings.Builder
				n := []int{2*T - 1, 2 * T, 2*T + 1, rng.IntN(6*T + 3)}[rng.IntN(4)]
				for b.Len() == 0 || len([]rune(b.String())) < n {
					b.WriteString(alphabet[rng.IntN(len(alphabet))])
				}
				role := []string{"assistant", "assistant", "", "model", "user", "tool"}[rng.IntN(6)]
				if role == "" {
					peer = append(peer, dbtest.PeerMessage{Role: role, Content: b.String()})
					continue
				}
				msgs = append(msgs, models.HistoryMessage{Role: models.Role(role), Content: b.String()})
			}
			// and one past cutWholeBytes, which even the default load
			// cuts on the server
			msgs = append(msgs, models.HistoryMessage{Role: models.RoleAssistant, Content: strings.Repeat("é日😀", 1000)})
			key := "cut-" + string(rune('a'+T))
			res := store(t, s, key, msgs...)
			base := time.Now().Add(time.Hour)
			if _, err := dbtest.PeerStore(ctx, db, res.SessionID, "A", peer, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
				t.Fatal(err)
			}
			// A load cuts short answers in Go and long ones on the
			// server; here both cuts are checked on every answer.
			got, err := s.Load(ctx, key, sessionstore.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			onServer, err := sessionstore.CutOnServer(s).Load(ctx, key, sessionstore.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			full, _ := s.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
			c, _ := compressor.New(T)
			cut := 0
			for i, m := range full {
				want := m
				if c.ShouldCompressOnLoad(m) {
					want, _ = c.Compress(m, got[i].EntityKey)
					cut++
				}
				for how, got := range map[string][]models.HistoryMessage{"in Go": got, "on the server": onServer} {
					if got[i].Content != want.Content || got[i].Compressed != want.Compressed || got[i].OriginalLength != want.OriginalLength || got[i].EntityKey != want.EntityKey {
						t.Fatalf("T=%d message %d (%s, %d code points), cut %s:\n got %q\nwant %q", T, i, m.Role, len([]rune(m.Content)), how, got[i].Content, want.Content)
					}
				}
			}
			if cut == 0 {
				t.Fatalf("T=%d: nothing was cut; the test proved nothing", T)
			}
			if n, err := sessionstore.ServerCuts(s, key); err != nil || n != cut {
				t.Fatalf("T=%d: the database cut %d answers, the compressor %d (%v)", T, n, cut, err)
			}
		}
	})
}
