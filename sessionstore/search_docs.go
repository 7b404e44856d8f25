package sessionstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/remstore/remstore/repository/migrations"
)

// Content search on PostgreSQL reads remstore_search_docs (migration 16,
// search_index.go) for candidates, newest first, and then the messages
// themselves for what a hit shows and whether it is still live. Two ways to
// the candidates, by what is cheap:
//   - a word in many messages: walk the tenant's newest docs (an index
//     range) and test each one's stored words; 10% of messages hold it,
//     so 50 hits are found in about 500 rows; a word in 0.6% in about
//     13,000 (a second walk, as long as the first one's rate says);
//   - otherwise the GIN index: every match fetched and the newest kept,
//     few rows because the word is rare (the walk found too few).
//
// Rows the messages then drop (deleted since they were indexed) are made
// up for by asking for more candidates, up to maxSearchCandidates.
const (
	firstWalk           = 1000 // docs walked first; 20 per hit asked, if more
	maxSearchWalk       = 50_000
	maxSearchCandidates = 50_000
)

var (
	// The narrowing filters (searchFilters) name m.role, m.session_id,
	// m.created_at and s.agent_name: columns docs have too. The walk takes
	// the first three (role and time: walkable).
	walkHead = `SELECT m.session_id, m.message_id FROM (SELECT session_id, message_id, created_at, words FROM ` + migrations.SearchDocsTable + ` m
		WHERE m.tenant_id = ?`
	walkTail = ` ORDER BY m.created_at DESC, m.message_id DESC LIMIT ?) m
		JOIN sessions s ON s.id = m.session_id
		WHERE s.deleted_at IS NULL AND m.words @@ ?::tsquery
		ORDER BY m.created_at DESC, m.message_id DESC LIMIT ?`
	ginQuery = `SELECT m.session_id, m.message_id FROM ` + migrations.SearchDocsTable + ` m
		JOIN sessions s ON s.id = m.session_id
		WHERE s.deleted_at IS NULL AND m.words @@ ?::tsquery AND m.tenant_id = ?`
	// Ordered by an expression the recent index cannot give: the planner
	// would otherwise walk that index for a rare word too, testing every
	// row (456 ms at 1M against 0.8 ms through the GIN index).
	ginTail = ` ORDER BY m.created_at + interval '0 s' DESC, m.message_id DESC LIMIT ?`
)

// tsQuery is every word, each a lexeme or the start of one, as tsquery text:
// 'lisb':* & 'trip':*. Cast to tsquery, not parsed by a text search
// configuration, so the lexemes are the words as internal/words made them.
func tsQuery(ws []string) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(w) + "':*"
	}
	return strings.Join(parts, " & ")
}

// searchDocs is SearchPage's content search on PostgreSQL.
// filters narrow the docs, rowFilters the messages (the same and the tool).
func (s *Store) searchDocs(ctx context.Context, o SearchOptions, filters string, args []any, rowFilters string, rowArgs []any) (SearchResult, error) {
	var indexing bool
	if !o.CaughtUp {
		var err error
		if indexing, err = s.catchUp(ctx); err != nil {
			return SearchResult{}, err
		}
	}
	tsq := tsQuery(searchWords(o.Query))
	need := o.Offset + o.Limit + 1
	// The walk when the narrowing leaves most rows in (role, time); a
	// session, an agent or a tool is few rows, found through the index (a
	// tool's rows are told apart by the messages themselves: candidates
	// are asked for until enough of them are its).
	walk := o.Session == "" && o.Agent == "" && o.Tool == "" && 20*need <= maxSearchWalk
	var hits []SearchHit
	var ids []uuid.UUID
	for k := need; ; k = min(k*4, maxSearchCandidates) {
		sids, mids, err := s.docCandidates(ctx, tsq, filters, args, k, walk)
		if err != nil {
			return SearchResult{}, err
		}
		walk = false
		if len(mids) == 0 {
			break
		}
		text := searchQueries[true].content + rowFilters + searchOrder
		hits, ids, err = s.searchRows(ctx, o, text, append(append([]any{pgdialect.Array(texts(sids)), pgdialect.Array(texts(mids))}, rowArgs...), s.userID))
		if err != nil {
			return SearchResult{}, err
		}
		if len(hits) >= need || len(mids) < k || k == maxSearchCandidates {
			break
		}
	}
	from := min(o.Offset, len(hits))
	r, err := s.searchPage(ctx, hits[from:], ids[from:], o.Limit)
	r.Indexing = indexing
	return r, err
}

// docCandidates are the k newest docs matching tsq (fewer if fewer match):
// by the walk when asked and it finds k, else by the GIN index.
func (s *Store) docCandidates(ctx context.Context, tsq, filters string, args []any, k int, walk bool) (sids, mids []uuid.UUID, err error) {
	read := func(q string, args ...any) error {
		sids, mids = sids[:0], mids[:0]
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var sid, mid uuid.UUID
			if err := rows.Scan(&sid, &mid); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			sids, mids = append(sids, sid), append(mids, mid)
		}
		return rows.Err()
	}
	if walk {
		// A first short walk says how common the word is; a second walk
		// long enough for k hits at that rate, when that is short enough,
		// beats fetching every match. A word the first walk did not meet
		// is rare: the GIN index.
		window := min(max(firstWalk, 20*k), maxSearchWalk)
		for range 2 {
			if err := read(walkHead+filters+walkTail, append(append([]any{s.userID}, args...), window, tsq, k)...); err != nil || len(mids) == k {
				return sids, mids, err
			}
			if len(mids) == 0 {
				break
			}
			next := int(float64(k) / float64(len(mids)) * float64(window) * 1.5)
			if next > maxSearchWalk || next <= window {
				break
			}
			window = next
		}
	}
	err = read(ginQuery+filters+ginTail, append(append([]any{tsq, s.userID}, args...), k)...)
	return sids, mids, err
}

// CatchUpSearch indexes, on PostgreSQL, what the search index has not
// taken in yet, for a quarter of a second at most, when o is a content
// search, marks o CaughtUp, and says whether some still waits. A search
// does it first anyway; serve does it before taking the searcher's
// budget, so that indexing everyone's writes is not charged to one
// user's search.
func (s *Store) CatchUpSearch(ctx context.Context, o *SearchOptions) (indexing bool, err error) {
	if err := s.on(); err != nil || !s.sql.Postgres || o.In != "" && o.In != SearchContent {
		return false, err
	}
	o.CaughtUp = true
	return s.catchUp(ctx)
}

// catchUp indexes what waits before a search, for searchCatchUp at most,
// and says whether some still waits. A catch-up that fails (a connection
// that may not write, a store inside a caller's transaction, an indexer
// error) costs the search nothing but the words not yet in: the search
// reads the index as it is and says whether some still waits.
func (s *Store) catchUp(ctx context.Context) (bool, error) {
	if s.db.pool == nil {
		return false, nil
	}
	r, err := indexSearch(ctx, s.db.pool, searchCatchUp, searchCatchUp)
	if err == nil {
		return r.Pending, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var waiting bool
	if err := s.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM `+migrations.SearchQueueTable+`)`).Scan(ctx, &waiting); err != nil {
		return false, fmt.Errorf("search: %w", err)
	}
	return waiting, nil
}
