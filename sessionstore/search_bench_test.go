package sessionstore_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// BenchmarkSearch searches one user's 1,000,000 messages on PostgreSQL
// (REMSTORE_BENCH_SEARCH_N sets the number; REMSTORE_BENCH_QUICK=1, as CI
// runs benchmarks once, 10,000): 1,000 sessions, each message 30 words of a
// 5,000-word vocabulary (a word is in about 0.6% of the messages), one
// message in 100,000 carrying a rare word, one in 10 the word "common".
// The rows are made by SQL (the schema migrated by remstore, so the write
// path's trigger notes each one), then indexed as serve's indexer would
// (IndexSearch); what is timed is Store.Search as the viewer calls it, 50
// results, with nothing waiting to be indexed.
func BenchmarkSearch(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("REMSTORE_BENCH_SEARCH_N")); err == nil && v > 0 {
		n = v
	} else if os.Getenv("REMSTORE_BENCH_QUICK") == "1" {
		n = 10_000
	}
	ctx := context.Background()
	db := dbtest.NewPostgres(b)
	start := time.Now()
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO sessions (id, name, tenant_id, user_id, status, created_at, updated_at)
		 SELECT md5('s' || s)::uuid, 'session ' || s, 'bench', 'bench', 'active', now(), now() FROM generate_series(0, 999) s`, nil},
		{`INSERT INTO messages (id, session_id, role, content, tenant_id, user_id, created_at, metadata)
		 SELECT md5('m' || i)::uuid, md5('s' || (i % 1000))::uuid, CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
		   array_to_string(ARRAY(SELECT 'w' || ((i::bigint * 7919 + k * 104729) % 5000) FROM generate_series(1, 30) k), ' ')
		   || CASE WHEN i % 100000 = 7 THEN ' zebracorn' ELSE '' END || CASE WHEN i % 10 = 3 THEN ' common' ELSE '' END,
		   'bench', 'bench', now() - (? - i) * interval '1 millisecond', '{}'::jsonb
		 FROM generate_series(0, ? - 1) i`, []any{n, n}},
		{`ANALYZE sessions`, nil},
	} {
		if _, err := db.ExecContext(ctx, st.q, st.args...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d messages made in %s", n, time.Since(start).Round(time.Second))
	start = time.Now()
	r, err := sessionstore.IndexSearch(ctx, db, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE messages; ANALYZE "+migrations.SearchDocsTable); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d messages indexed in %s", r.Indexed, time.Since(start).Round(100*time.Millisecond))
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, q, in string }{
		{"rare_word", "zebracorn", "content"},
		{"word_in_0.6pct", "w4242", "content"},
		{"word_in_10pct", "common", "content"},
		{"two_words", "w4242 common", "content"},
		{"word_in_10pct_page_20", "common", "content_offset"},
		{"prefix", "zebra", "content"},
		{"agent", "nobody", "agent"},
	} {
		b.Run(c.name, func(b *testing.B) {
			hits := 0
			for b.Loop() {
				o := sessionstore.SearchOptions{Query: c.q, In: c.in}
				if c.in == "content_offset" { // the 20th page of 50
					o.In, o.Offset = "content", 950
				}
				h, err := s.Search(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			b.ReportMetric(float64(hits), "hits")
		})
	}
}
