package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/internal/words"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Search finds the tenant's live messages (or sessions) across all its
// sessions: by the words of their content (every word of the query, each a
// word or the start of one, case-insensitive), by tool name or agent name
// (a case-insensitive substring), or by REM LOOKUP key. What a word is is
// decided once, in internal/words, for every database; content search
// reads the index migration 16 made of those words: remstore_search_docs
// on PostgreSQL (search_index.go keeps it), FTS5 on SQLite. Which rows a
// tenant sees and the order (newest first) are decided here for both.

// Search kinds (SearchOptions.In).
const (
	SearchContent = "content"
	SearchTool    = "tool"
	SearchKey     = "key"
	SearchAgent   = "agent"
)

// SearchKinds are the kinds in the order a form offers them.
var searchKinds = []string{SearchContent, SearchTool, SearchKey, SearchAgent}

// SearchKinds are what a search may look in (a copy).
func SearchKinds() []string { return slices.Clone(searchKinds) }

// Search limits.
const (
	DefaultSearchLimit = 50
	MaxSearchLimit     = 200
	MaxSearchQuery     = 256 // code points
	maxSearchWords     = 16
	snippetContext     = 80 // code points either side of the first match
)

// SearchOptions say what to look for.
type SearchOptions struct {
	Query string
	In    string // SearchContent (default), SearchTool, SearchKey or SearchAgent
	Limit int    // 0 = DefaultSearchLimit; at most MaxSearchLimit
	// Narrowing a content or tool search: only messages of
	// this role, of this session (a key or UUID), of sessions whose agent
	// name holds Agent (any case), stored at or after After and before
	// Before; Offset skips that many hits of the newest first
	// (SearchResult.More says whether a next page exists).
	Role    string
	Session string
	Agent   string
	// Tool narrows to tool results of a tool, and answers that called
	// one, whose name holds Tool (any case).
	Tool          string
	After, Before time.Time
	Offset        int
	// CaughtUp says the caller has just run CatchUpSearch (serve does,
	// before taking the searcher's budget): the search does not catch the
	// index up again, and the caller reports what CatchUpSearch said.
	CaughtUp bool
}

// MaxSearchOffset bounds SearchOptions.Offset: paging deeper reads and
// drops as many rows each time.
const MaxSearchOffset = 10_000

// SearchResult is one page of hits and whether more follow.
type SearchResult struct {
	Hits []SearchHit `json:"hits"`
	More bool        `json:"more"` // a page at Offset+Limit has hits
	// Indexing: messages stored lately may not be found yet, because the
	// search index (PostgreSQL) is catching up with the writes.
	Indexing bool `json:"indexing,omitempty"`
}

// SearchHit is models.SearchHit.
type SearchHit = models.SearchHit

// searchWords are the words of a query under the one rule (internal/words).
func searchWords(q string) []string { return words.Query(q, maxSearchWords) }

func (o *SearchOptions) check() error {
	o.Query = strings.TrimSpace(o.Query)
	switch {
	case o.In == "":
		o.In = SearchContent
	case !slices.Contains(searchKinds, o.In):
		return fieldErr(-1, "in", "%q is not %s", o.In, strings.Join(searchKinds, ", "))
	}
	if err := models.CheckText(-1, "q", o.Query, MaxSearchQuery); err != nil {
		return err
	}
	if o.Query == "" {
		return fieldErr(-1, "q", "empty: type what to search for")
	}
	if o.In == SearchContent && len(searchWords(o.Query)) == 0 {
		return fieldErr(-1, "q", "no word in %q: content search finds words (letters and digits, a CJK character, an emoji)", o.Query)
	}
	if o.Limit == 0 {
		o.Limit = DefaultSearchLimit
	}
	if o.Limit < 1 || o.Limit > MaxSearchLimit {
		return fieldErr(-1, "limit", "must be from 1 to %d (0 or absent: %d)", MaxSearchLimit, DefaultSearchLimit)
	}
	if o.Offset < 0 || o.Offset > MaxSearchOffset {
		return fieldErr(-1, "offset", "must be from 0 to %d", MaxSearchOffset)
	}
	narrowed := o.Role != "" || o.Session != "" || o.Agent != "" || o.Tool != "" || !o.After.IsZero() || !o.Before.IsZero() || o.Offset > 0
	if narrowed && o.In != SearchContent && o.In != SearchTool {
		return fieldErr(-1, "in", "role, session, agent, tool, after, before and offset narrow a content or tool search, not %q", o.In)
	}
	if o.Role != "" {
		if err := models.CheckRole(-1, models.Role(o.Role)); err != nil {
			return fieldErr(-1, "role", "%q is not a role (%s)", msgcheck.Truncate(o.Role, 40), strings.Join(roleNames(), ", "))
		}
	}
	for _, f := range []struct{ name, v string }{{"agent", o.Agent}, {"tool", o.Tool}} {
		if err := models.CheckText(-1, f.name, f.v, MaxSearchQuery); err != nil {
			return err
		}
	}
	if !o.After.IsZero() && !o.Before.IsZero() && !o.Before.After(o.After) {
		return fieldErr(-1, "before", "must be after after")
	}
	return nil
}

// roleNames are the roles a store accepts, for messages.
func roleNames() []string {
	var out []string
	for _, r := range models.Roles() {
		out = append(out, string(r))
	}
	return out
}

// likePattern is a case-insensitive substring pattern for LIKE ... ESCAPE '\'.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(q)) + "%"
}

// searchQueries are the statements per dialect (true: PostgreSQL), before
// searchFilters and searchTail. Each takes the match, then the filters',
// the tenant, the limit and the offset, and returns session id, name,
// agent, role, time, the first 4,000 characters, key and tool name; they
// differ only in how JSON is read and which index matches the words.
var searchQueries = map[bool]struct{ content, tool string }{
	true: {
		// The candidates search_docs.go found in remstore_search_docs, pair
		// by pair.
		content: searchSelectFrom(true, `m.metadata->>'tool_name'`, `unnest(?::uuid[], ?::uuid[]) AS h(sid, mid)
			JOIN messages m ON m.session_id = h.sid AND m.id = h.mid`),
		tool: searchSelect(true, `COALESCE(m.metadata->>'tool_name', (SELECT c->>'name' FROM `+pgCalls+` c WHERE lower(c->>'name') LIKE ? ESCAPE '\' LIMIT 1))`) +
			toolMatch[true],
	},
	false: {
		content: searchSelect(false, `json_extract(m.metadata, '$.tool_name')`) + ` AND m.rowid IN (SELECT rowid FROM remstore_search WHERE remstore_search MATCH ?)`,
		tool: searchSelect(false, `COALESCE(json_extract(m.metadata, '$.tool_name'), (SELECT json_extract(c.value, '$.name') FROM `+liteCalls+` c WHERE lower(json_extract(c.value, '$.name')) LIKE ? ESCAPE '\' LIMIT 1))`) +
			toolMatch[false],
	},
}

// toolMatch is what a tool search finds, and what its Tool filter keeps: a
// tool row of a tool whose name holds the pattern, or an answer that
// called one (two pattern arguments).
var toolMatch = map[bool]string{
	true: ` AND (m.role = 'tool' AND lower(m.metadata->>'tool_name') LIKE ? ESCAPE '\'
			OR m.role IN ('assistant', '') AND EXISTS (SELECT 1 FROM ` + pgCalls + ` c WHERE lower(c->>'name') LIKE ? ESCAPE '\'))`,
	false: ` AND (m.role = 'tool' AND lower(json_extract(m.metadata, '$.tool_name')) LIKE ? ESCAPE '\'
			OR m.role IN ('assistant', '') AND EXISTS (SELECT 1 FROM ` + liteCalls + ` c WHERE lower(json_extract(c.value, '$.name')) LIKE ? ESCAPE '\'))`,
}

// The calls an answer stored (the tool_calls column's items), as rows: a
// tool search finds an answer by the tools it called. Another
// writer's column that is not {"items": [...]} has none.
const (
	pgCalls   = `jsonb_array_elements(CASE WHEN jsonb_typeof(m.tool_calls->'items') = 'array' THEN m.tool_calls->'items' ELSE '[]'::jsonb END)`
	liteCalls = `json_each(CASE WHEN json_type(m.tool_calls, '$.items') = 'array' THEN json_extract(m.tool_calls, '$.items') ELSE '[]' END)`
)

// positionsQuery counts, for each hit, the tenant's live messages from the
// hit before it in its session (or the session's start) up to it; the sums
// per session are the hits' positions: where an uncompacted load has
// them (lookup --index counts removed rows too, as keys do). Counting from the start for every hit read
// 50 x 20,000 index entries for 50 hits in a session of 20,000 (550 ms a
// search cold, 117 ms warm); the rows between hits are read once now
// (7 ms). One statement for all the hits, joined on the session (the
// distribution column on Citus, which plans no correlated subquery over a
// subquery), after the limit: one range of the (session_id, created_at,
// id) index per hit.
var positionsQuery = map[bool]string{true: positionsSQL("'-infinity'::timestamptz", "'00000000-0000-0000-0000-000000000000'::uuid"),
	false: positionsSQL("''", "''")} // SQLite keeps both as text

// positionsSQL is positionsQuery with minAt and minID before any row: the
// range from the hit before is a row comparison, so it bounds an index
// range (as an OR of conditions it was a filter over every pair).
func positionsSQL(minAt, minID string) string {
	return `SELECT h.id AS id, h.session_id AS sid, h.k AS k, count(p.id) AS n, h.deleted_at IS NULL AND h.created_at IS NOT NULL AS live FROM (
	SELECT id, session_id, tenant_id, created_at, deleted_at, row_number() OVER w AS k,
		COALESCE(lag(created_at) OVER w, ` + minAt + `) AS pat, COALESCE(lag(id) OVER w, ` + minID + `) AS pid
	FROM messages WHERE id IN (?) AND session_id IN (?) AND tenant_id = ?
	WINDOW w AS (PARTITION BY session_id ORDER BY created_at, id)) h
	LEFT JOIN messages p ON p.session_id = h.session_id AND p.tenant_id = h.tenant_id AND p.deleted_at IS NULL
		AND (p.created_at, p.id) < (h.created_at, h.id) AND (p.created_at, p.id) >= (h.pat, h.pid)
	GROUP BY h.id, h.session_id, h.k, h.deleted_at, h.created_at`
}

// searchSelect is the rows and joins of a message search, live rows of live
// sessions, each the row's tenant's: another tenant's session holding the
// tenant's rows (written before the tenant guard, or where there is none)
// is not the tenant's to name (nor its agent to narrow by), as a load
// of it is not. A row without a created_at is in no load, nor in search.
func searchSelect(pg bool, tool string) string { return searchSelectFrom(pg, tool, "messages m") }

// searchSelectFrom is searchSelect over rows of messages m that from gives.
func searchSelectFrom(pg bool, tool, from string) string {
	if pg {
		return `SELECT m.session_id, s.name, s.agent_name, m.role, m.created_at, left(m.content, 4000),
			m.metadata->>'entity_key', ` + tool + `, m.id
			FROM ` + from + ` JOIN sessions s ON s.id = m.session_id
			WHERE s.deleted_at IS NULL AND m.deleted_at IS NULL AND s.tenant_id = m.tenant_id AND m.created_at IS NOT NULL`
	}
	return `SELECT m.session_id, s.name, s.agent_name, m.role, m.created_at, substr(m.content, 1, 4000),
		json_extract(m.metadata, '$.entity_key'), ` + tool + `, m.id
		FROM ` + from + ` JOIN sessions s ON s.id = m.session_id
		WHERE s.deleted_at IS NULL AND m.deleted_at IS NULL AND s.tenant_id = m.tenant_id AND m.created_at IS NOT NULL`
}

// searchOrder is the tenant's rows, newest first; searchTail one page of them.
const (
	searchOrder = ` AND m.tenant_id = ? ORDER BY m.created_at DESC, m.id DESC`
	searchTail  = searchOrder + ` LIMIT ? OFFSET ?`
)

// searchAgentQuery finds sessions by agent name; the same on both dialects.
const searchAgentQuery = `SELECT id, name, agent_name FROM sessions WHERE lower(agent_name) LIKE ? ESCAPE '\' AND tenant_id = ? AND deleted_at IS NULL
	ORDER BY updated_at DESC, id DESC LIMIT ?`

// Search runs o for the store's tenant: SearchPage's hits.
func (s *Store) Search(ctx context.Context, o SearchOptions) ([]SearchHit, error) {
	r, err := s.SearchPage(ctx, o)
	return r.Hits, err
}

// SearchPage runs o for the store's tenant: the hits of one page, newest
// first, and whether another follows.
func (s *Store) SearchPage(ctx context.Context, o SearchOptions) (SearchResult, error) {
	if err := s.on(); err != nil {
		return SearchResult{}, err
	}
	if err := o.check(); err != nil {
		return SearchResult{}, err
	}
	if o.In == SearchKey {
		hits, err := s.searchKey(ctx, o.Query)
		return SearchResult{Hits: hits}, err
	}
	if o.In == SearchAgent {
		hits, err := s.searchAgent(ctx, o)
		return SearchResult{Hits: hits}, err
	}
	docFilters, docArgs, err := s.searchFilters(ctx, o)
	if errors.Is(err, ErrNotFound) { // a session the tenant does not have holds no hit
		return SearchResult{}, nil
	}
	if err != nil {
		return SearchResult{}, err
	}
	tool, toolArgs := s.toolFilter(o)
	filters, args := docFilters+tool, append(slices.Clone(docArgs), toolArgs...)
	if o.In == SearchContent && s.sql.Postgres {
		return s.searchDocs(ctx, o, docFilters, docArgs, filters, args)
	}
	q := searchQueries[s.sql.Postgres]
	var text string
	var lead []any
	switch o.In {
	case SearchContent: // SQLite: each word, or a word it begins: "lisb"* "trip"*
		ws := searchWords(o.Query)
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = `"` + w + `"*` // a word holds no quote (internal/words)
		}
		text, lead = q.content, []any{strings.Join(parts, " ")}
	case SearchTool: // the select's call name, a tool row's name, an answer's calls
		m := likePattern(o.Query)
		text, lead = q.tool, []any{m, m, m}
	}
	text += filters + searchTail
	args = append(append(lead, args...), s.userID, o.Limit+1, o.Offset)
	hits, ids, err := s.searchRows(ctx, o, text, args)
	if err != nil {
		return SearchResult{}, err
	}
	return s.searchPage(ctx, hits, ids, o.Limit)
}

// searchRows runs a search statement (searchSelect's columns) and reads its
// hits, and each hit's message id.
func (s *Store) searchRows(ctx context.Context, o SearchOptions, text string, args []any) ([]SearchHit, []uuid.UUID, error) {
	rows, err := s.db.QueryContext(ctx, text, args...)
	if err != nil {
		if strings.Contains(err.Error(), "no such table: remstore_search") {
			return nil, nil, fmt.Errorf("%w (content search needs migration 16)", repository.ErrNotMigrated)
		}
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var hits []SearchHit
	var ids []uuid.UUID
	for rows.Next() {
		var h SearchHit
		var sid string
		var name, agent, key, tool *string
		var created dbTime
		var content string
		var id uuid.UUID
		if err := rows.Scan(&sid, &name, &agent, &h.Role, &created, &content, &key, &tool, &id); err != nil {
			return nil, nil, fmt.Errorf("search: %w", err)
		}
		h.SessionID, _ = uuid.Parse(sid)
		h.SessionName, h.AgentName, h.Key, h.ToolName = deref(name), deref(agent), deref(key), deref(tool)
		h.Timestamp = models.FormatTimestamp(created.Time)
		h.Snippet = snippet(content, o)
		hits = append(hits, h)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	return hits, ids, nil
}

// searchPage is the page of hits (read one past the page), whether more
// follow, and each hit's position.
func (s *Store) searchPage(ctx context.Context, hits []SearchHit, ids []uuid.UUID, limit int) (SearchResult, error) {
	r := SearchResult{Hits: hits}
	if len(hits) > limit { // the one asked past the page: a next page exists
		r.Hits, r.More, ids = hits[:limit], true, ids[:limit]
	}
	return r, s.positions(ctx, r.Hits, ids)
}

// toolFilter is o's Tool narrowing, read off the messages themselves (the
// docs of PostgreSQL's index do not keep tool names): a clause to follow
// searchFilters', and its arguments.
func (s *Store) toolFilter(o SearchOptions) (string, []any) {
	if o.Tool == "" {
		return "", nil
	}
	return toolMatch[s.sql.Postgres], []any{likePattern(o.Tool), likePattern(o.Tool)}
}

// searchFilters are the clauses and arguments of o's narrowing but the
// tool (toolFilter), in the
// order the statement takes them. A session is named by key or UUID and
// resolved as everywhere (sessionOf); one the tenant does not have is
// ErrNotFound.
func (s *Store) searchFilters(ctx context.Context, o SearchOptions) (string, []any, error) {
	var b strings.Builder
	var args []any
	if o.Role != "" {
		b.WriteString(` AND m.role = ?`)
		args = append(args, o.Role)
	}
	if o.Session != "" {
		sid, _, err := s.sessionOf(ctx, o.Session) // ErrNotFound: the tenant has none by that key
		if err != nil {
			return "", nil, err
		}
		b.WriteString(` AND m.session_id = ?`)
		args = append(args, sid.String())
	}
	if o.Agent != "" {
		b.WriteString(` AND lower(s.agent_name) LIKE ? ESCAPE '\'`)
		args = append(args, likePattern(o.Agent))
	}
	// created_at as each database compares it: a timestamp on PostgreSQL,
	// the text bun stores on SQLite (UTC, trailing zeros dropped, which
	// sorts as the instants do).
	at := func(t time.Time) any {
		if s.sql.Postgres {
			return t
		}
		return t.UTC().Format("2006-01-02 15:04:05.999999-07:00")
	}
	if !o.After.IsZero() {
		b.WriteString(` AND m.created_at >= ?`)
		args = append(args, at(o.After))
	}
	if !o.Before.IsZero() {
		b.WriteString(` AND m.created_at < ?`)
		args = append(args, at(o.Before))
	}
	return b.String(), args, nil
}

// hitCount is a row of positionsQuery.
type hitCount struct {
	ID  uuid.UUID `bun:"id"`
	SID uuid.UUID `bun:"sid"`
	K   int       `bun:"k"` // the hit's rank in its session, oldest first
	N   int       `bun:"n"` // live rows from the hit before it (or the start)
	// Live is false for a row removed since the search found it: it keeps
	// its place in the chain (the next hit counts from it) but has none in
	// a load; nor has a row without a created_at (a key search finds it by
	// its stored key).
	Live bool `bun:"live"`
}

// positions sets each hit's Index (positionsQuery): the sums of each
// session's counts, oldest hit first.
func (s *Store) positions(ctx context.Context, hits []SearchHit, ids []uuid.UUID) error {
	if len(hits) == 0 {
		return nil
	}
	var sids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, h := range hits {
		if !seen[h.SessionID] {
			seen[h.SessionID] = true
			sids = append(sids, h.SessionID)
		}
	}
	var got []hitCount
	if err := s.db.NewRaw(positionsQuery[s.sql.Postgres], bun.List(ids), bun.List(sids), s.userID).Scan(ctx, &got); err != nil {
		return fmt.Errorf("search positions: %w", err)
	}
	slices.SortFunc(got, func(a, b hitCount) int {
		if c := bytes.Compare(a.SID[:], b.SID[:]); c != 0 {
			return c
		}
		return a.K - b.K
	})
	sum := make(map[uuid.UUID]int, len(got))
	at := make(map[uuid.UUID]int, len(got))
	for i, g := range got {
		if i > 0 && got[i-1].SID == g.SID {
			g.N += sum[got[i-1].ID]
		}
		sum[g.ID] = g.N
		if g.Live {
			at[g.ID] = g.N
		}
	}
	// A hit whose row was popped or purged since the search found it has
	// no place in a load: -1, as a session hit.
	for i := range hits {
		if n, ok := at[ids[i]]; ok {
			hits[i].Index = n
		} else {
			hits[i].Index = -1
		}
	}
	return nil
}

func (s *Store) searchAgent(ctx context.Context, o SearchOptions) ([]SearchHit, error) {
	rows, err := s.db.QueryContext(ctx, searchAgentQuery, likePattern(o.Query), s.userID, o.Limit)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var hits []SearchHit
	for rows.Next() {
		var sid string
		var name, agent *string
		if err := rows.Scan(&sid, &name, &agent); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		id, _ := uuid.Parse(sid)
		hits = append(hits, SearchHit{SessionID: id, SessionName: deref(name), AgentName: deref(agent), Index: -1})
	}
	return hits, rows.Err()
}

// searchKey is a lookup that says where the message is.
func (s *Store) searchKey(ctx context.Context, key string) ([]SearchHit, error) {
	k, err := ParseLookupKey(key)
	if err != nil {
		if fe, ok := models.AsFieldError(err); ok {
			fe.Field = "q" // the key searched is the query, as every other search's
		}
		return nil, err
	}
	content, id, err := s.lookupMessage(ctx, key)
	if err != nil {
		if Classify(err).Kind == NotFound {
			return nil, nil
		}
		return nil, err
	}
	// No place until positions finds one in the tenant's own session: an
	// opaque key names none, and a row in another tenant's session (from
	// before the tenant guard) is in no load of this tenant's.
	h := SearchHit{Role: string(models.RoleAssistant), Index: -1, Key: k.Raw, Snippet: clip(content, 0, 2*snippetContext)}
	if !k.Opaque {
		if sid, err := SessionUUID(s.userID, k.SessionID); err == nil {
			if sess, err := s.getSession(ctx, s.db, sid); err == nil {
				h.SessionID = sid
				info := infoOf(sess)
				h.SessionName, h.AgentName = info.Name, info.AgentName
				// A stored key's index counts removed rows: the hit's Index
				// is its place in a load, as every other hit's, found from
				// the row the lookup found.
				hits := []SearchHit{h}
				if err := s.positions(ctx, hits, []uuid.UUID{id}); err != nil {
					return nil, err
				}
				h = hits[0]
			}
		}
	}
	return []SearchHit{h}, nil
}

// snippet is the text around the first match of the query in content.
func snippet(content string, o SearchOptions) string {
	at := -1
	if o.In == SearchContent {
		at = words.First(content, searchWords(o.Query))
	} else if i := strings.Index(strings.ToLower(content), strings.ToLower(o.Query)); i >= 0 {
		// Lower-casing can change byte lengths: the same code point index
		// on the original.
		at = len(string([]rune(content)[:utf8.RuneCountInString(strings.ToLower(content)[:i])]))
	}
	if at < 0 {
		return clip(content, 0, 2*snippetContext)
	}
	cp := utf8.RuneCountInString(content[:at])
	return clip(content, max(0, cp-snippetContext), 2*snippetContext)
}

// clip is n code points of s from code point from, with … where it cut.
func clip(s string, from, n int) string {
	r := []rune(s)
	if from > len(r) {
		from = len(r)
	}
	end := min(len(r), from+n)
	out := string(r[from:end])
	if from > 0 {
		out = "…" + out
	}
	if end < len(r) {
		out += "…"
	}
	return out
}
