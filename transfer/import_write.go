package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/sessionstore"
)

// writer writes batches: each in its own transaction, or (atomic) all in
// one, committed by finish.
type writer struct {
	db            *repository.DB
	scoped, atomc bool
	limits        sessionstore.Limits
	conn          *pgxpool.Conn // PostgreSQL: one connection of the pool for the import
	open          bool          // PostgreSQL, atomic: the transaction has begun
	tx            *bun.Tx       // SQLite, atomic
}

func newWriter(ctx context.Context, db *repository.DB, scoped, atomic bool, limits sessionstore.Limits) (*writer, error) {
	w := &writer{db: db, scoped: scoped, atomc: atomic, limits: limits}
	var err error
	switch {
	case db.Postgres():
		if w.conn, err = db.Pool.Acquire(ctx); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	case atomic:
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		w.tx = &tx
	}
	return w, nil
}

// reader is where the import reads the database: its own transaction on
// SQLite when it holds one (the only writer connection; another would wait
// for it for ever), the pool otherwise.
func (w *writer) reader() bun.IDB {
	if w.tx != nil {
		return *w.tx
	}
	return w.db.DB
}

// write writes one batch and returns how many messages were new. A batch
// the database refuses is bad input naming its lines, never an outage.
func (w *writer) write(ctx context.Context, b importBatchIn) (int, error) {
	var n int
	var err error
	if w.db.Postgres() {
		n, err = w.writePG(ctx, b)
	} else {
		n, err = w.writeSQLite(ctx, b)
	}
	if err != nil && (repository.IsConstraintViolation(err) || repository.IsDataException(err)) {
		return 0, &models.FieldError{Index: -1, Field: fmt.Sprintf("lines %d-%d", b.firstLine, b.lastLine),
			Reason: "the database refused the batch: " + firstLine(err)}
	}
	if errors.Is(err, sessionstore.ErrLimit) {
		return 0, fmt.Errorf("lines %d-%d: %w", b.firstLine, b.lastLine, err)
	}
	return n, err
}

// checkLimits checks, in the batch's transaction q and before anything of
// it is written, that the batch passes no limit: its session records, and
// fresh, the messages it adds (those not in the table yet).
func (w *writer) checkLimits(ctx context.Context, q sessionstore.LimitTx, b importBatchIn, fresh []*table.Message) error {
	if w.limits == (sessionstore.Limits{}) {
		return nil
	}
	var lb sessionstore.ImportBatch
	for _, s := range b.sessions {
		lb.Sessions = append(lb.Sessions, sessionstore.ImportSession{ID: s.ID, Tenant: s.TenantID})
	}
	type pair struct {
		session uuid.UUID
		tenant  string
	}
	at := map[pair]int{}
	for _, m := range fresh {
		if m.TenantID == nil { // no one's: no limit counts it
			continue
		}
		k := pair{m.SessionID, *m.TenantID}
		if i, ok := at[k]; ok {
			lb.Messages[i].N++
			continue
		}
		at[k] = len(lb.Messages)
		lb.Messages = append(lb.Messages, sessionstore.ImportMessages{Session: m.SessionID, Tenant: *m.TenantID, N: 1})
	}
	return w.limits.CheckImport(ctx, q, lb)
}

// pgxTx is the import's transaction on PostgreSQL as the limits' check
// runs in it.
type pgxTx struct{ c *pgx.Conn }

func (pgxTx) Postgres() bool { return true }

func (q pgxTx) QueryRow(ctx context.Context, query string, args []any, dest ...any) error {
	return q.c.QueryRow(ctx, repository.Numbered(query), args...).Scan(dest...)
}

func (q pgxTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.c.Exec(ctx, repository.Numbered(query), args...)
	return err
}

// finish commits (ok) or rolls back the atomic transaction and lets go of
// the connection.
func (w *writer) finish(ctx context.Context, ok bool) error {
	var err error
	switch {
	case w.conn != nil:
		if w.open {
			stmt := "ROLLBACK"
			if ok {
				stmt = "COMMIT"
			}
			_, err = w.conn.Exec(ctx, stmt)
		}
		w.conn.Release()
	case w.tx != nil && ok:
		err = w.tx.Commit()
	case w.tx != nil:
		err = w.tx.Rollback()
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

func (w *writer) writeSQLite(ctx context.Context, b importBatchIn) (int, error) {
	msgs := make([]*table.Message, len(b.msgs))
	for i, im := range b.msgs {
		msgs[i] = im.m
		if err := msgs[i].Metadata.Scan([]byte(im.meta)); err != nil {
			return 0, err
		}
		if err := msgs[i].GraphEdges.Scan([]byte(im.edges)); err != nil {
			return 0, err
		}
	}
	inserted := 0
	body := func(ctx context.Context, tx bun.Tx) error {
		fresh := msgs
		if len(msgs) > 0 {
			ids := make([]uuid.UUID, len(msgs))
			for i, m := range msgs {
				ids[i] = m.ID
			}
			var have []struct {
				ID        uuid.UUID `bun:"id"`
				SessionID uuid.UUID `bun:"session_id"`
				TenantID  *string   `bun:"tenant_id"`
				Role      string    `bun:"role"`
				Content   string    `bun:"content"`
			}
			if err := tx.NewRaw("SELECT id, session_id, tenant_id, role, content FROM messages WHERE id IN (?)", bun.List(ids)).Scan(ctx, &have); err != nil {
				return fmt.Errorf("check ids: %w", err)
			}
			if len(have) > 0 {
				there := make(map[uuid.UUID]stored, len(have))
				for _, h := range have {
					sum := sha256.Sum256([]byte(h.Content))
					there[h.ID] = stored{session: h.SessionID, tenant: h.TenantID, role: h.Role, digest: hex.EncodeToString(sum[:])}
				}
				if err := sameAsStored(b, msgs, there); err != nil {
					return err
				}
				fresh = nil
				for _, m := range msgs {
					if _, ok := there[m.ID]; !ok {
						fresh = append(fresh, m)
					}
				}
			}
		}
		if err := w.checkLimits(ctx, sessionstore.BunTx(tx), b, fresh); err != nil {
			return err
		}
		if len(b.sessions) > 0 {
			if _, err := tx.NewInsert().Model(&b.sessions).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
				return fmt.Errorf("import sessions: %w", err)
			}
		}
		if len(msgs) == 0 {
			return nil
		}
		res, err := tx.NewInsert().Model(&msgs).On("CONFLICT (id) DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("import messages: %w", err)
		}
		n, _ := res.RowsAffected()
		inserted = int(n)
		_, err = tx.NewRaw("DELETE FROM "+migrations.PositionsTable+" WHERE session_id IN (?)", bun.List(sessionsOf(msgs))).Exec(ctx)
		return err
	}
	if w.tx != nil {
		return inserted, body(ctx, *w.tx)
	}
	return inserted, w.db.RunInTx(ctx, nil, body)
}

// sessionsOf lists the sessions msgs go into. An import forgets their kept
// positions (migrations.PositionsTable): its rows may sort before a store's
// last row, so the next store counts the session once.
func sessionsOf(msgs []*table.Message) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	var out []uuid.UUID
	for _, m := range msgs {
		if !seen[m.SessionID] {
			seen[m.SessionID] = true
			out = append(out, m.SessionID)
		}
	}
	return out
}

// copyColumns are the messages columns an import writes, in the order its
// COPY rows hold them.
var copyColumns = []string{"id", "session_id", "role", "content", "tool_calls", "graph_edges", "metadata", "tags",
	"trace_id", "span_id", "user_id", "tenant_id", "created_at", "updated_at", "deleted_at"}

// CopyColumns are the messages columns an import COPYs, in order (a copy).
func CopyColumns() []string { return slices.Clone(copyColumns) }

// writePG runs one batch on the import's pgx connection: sessions inserted,
// messages COPYed into the table, skipping ids that exist. The transaction
// is spelt out in SQL on the connection the import holds, so that an atomic
// import spans batches.
func (w *writer) writePG(ctx context.Context, b importBatchIn) (int, error) {
	var sessSQL string
	if len(b.sessions) > 0 {
		sessSQL = w.db.NewInsert().Model(&b.sessions).On("CONFLICT (id) DO NOTHING").String()
	}
	rows := make([][]any, len(b.msgs))
	msgs := make([]*table.Message, len(b.msgs))
	for i, im := range b.msgs {
		m := im.m
		msgs[i] = m
		meta, edges := string(im.meta), string(im.edges)
		var toolCalls any
		if m.ToolCalls != nil {
			toolCalls = string(m.ToolCalls)
		}
		tags := []string(m.Tags)
		if tags == nil {
			tags = []string{}
		}
		// uuid as [16]byte: pgx encodes it directly; a string would be
		// parsed back into a UUID row by row.
		rows[i] = []any{[16]byte(m.ID), [16]byte(m.SessionID), string(m.Role), m.Content, toolCalls, edges, meta, tags,
			m.TraceID, m.SpanID, m.UserID, m.TenantID, m.CreatedAt, m.UpdatedAt, m.DeletedAt}
	}
	var inserted int64
	err := func() error {
		c := w.conn.Conn()
		if !w.open {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				return fmt.Errorf("import: %w", err)
			}
			w.open = true
		}
		err := func() error {
			probed := false
			if w.limits != (sessionstore.Limits{}) {
				// The limits count what the batch adds: the rows not in
				// the table yet, found before anything is written.
				fresh, freshMsgs, err := withoutExisting(ctx, c, b, msgs, rows, w.scoped)
				if err != nil {
					return fmt.Errorf("import: %w", err)
				}
				if err := w.checkLimits(ctx, pgxTx{c}, b, freshMsgs); err != nil {
					return err
				}
				rows, probed = fresh, true
			}
			if sessSQL != "" {
				if _, err := c.Exec(ctx, sessSQL); err != nil {
					return fmt.Errorf("import sessions: %w", err)
				}
			}
			if len(rows) == 0 {
				return nil
			}
			// A fresh batch goes straight into the table with COPY. Where
			// the server refuses it (an id already there: a resumed import;
			// Citus reports that as XX000, not 23505), the batch is copied
			// again without the rows the table holds, and a second refusal
			// is the answer. Probing first on every batch cost a sixth of an
			// import (it is paid under limits, which count what is new).
			n, err := copyRows(ctx, c, rows)
			if refused(err) && !probed {
				var fresh [][]any
				if fresh, _, err = withoutExisting(ctx, c, b, msgs, rows, w.scoped); err == nil {
					n, err = copyRows(ctx, c, fresh)
				}
			}
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			inserted = n
			ids := sessionsOf(msgs)
			sids := make([]string, len(ids))
			for i, id := range ids {
				sids[i] = id.String()
			}
			if _, err := c.Exec(ctx, "DELETE FROM "+migrations.PositionsTable+" WHERE session_id = ANY($1::uuid[])", sids); err != nil {
				return fmt.Errorf("import: %w", err)
			}
			return nil
		}()
		if w.atomc {
			return err // finish commits or rolls back
		}
		stmt := "COMMIT"
		if err != nil {
			stmt = "ROLLBACK"
		}
		w.open = false
		if _, cerr := c.Exec(ctx, stmt); err == nil && cerr != nil {
			err = fmt.Errorf("import: %w", cerr)
		}
		return err
	}()
	return int(inserted), err
}

// copyRows COPYs rows into messages under a savepoint, so a failed copy
// leaves the transaction usable.
func copyRows(ctx context.Context, c *pgx.Conn, rows [][]any) (int64, error) {
	if _, err := c.Exec(ctx, "SAVEPOINT import_copy"); err != nil {
		return 0, err
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"messages"}, copyColumns, pgx.CopyFromRows(rows))
	if err != nil {
		_, _ = c.Exec(ctx, "ROLLBACK TO SAVEPOINT import_copy")
		return 0, fmt.Errorf("copy: %w", err)
	}
	_, err = c.Exec(ctx, "RELEASE SAVEPOINT import_copy")
	return n, err
}

// withoutExisting drops the rows whose id the table already holds (within
// the batch's sessions once the tables are distributed), and returns the
// rows left and their messages.
func withoutExisting(ctx context.Context, c *pgx.Conn, b importBatchIn, msgs []*table.Message, rows [][]any, scoped bool) ([][]any, []*table.Message, error) {
	// As text: the connection speaks the simple protocol (see repository.Open).
	ids := make([]string, len(msgs))
	var sids []string
	seen := map[uuid.UUID]bool{}
	for i, m := range msgs {
		ids[i] = m.ID.String()
		if !seen[m.SessionID] {
			seen[m.SessionID] = true
			sids = append(sids, m.SessionID.String())
		}
	}
	probe, args := "SELECT id, session_id, tenant_id, role, encode(sha256(convert_to(content, 'UTF8')), 'hex') FROM messages WHERE id = ANY($1::uuid[])", []any{ids}
	if scoped {
		probe, args = probe+" AND session_id = ANY($2::uuid[])", append(args, sids)
	}
	rs, err := c.Query(ctx, probe, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("check ids: %w", err)
	}
	there := map[uuid.UUID]stored{}
	for rs.Next() {
		var id uuid.UUID
		var st stored
		if err := rs.Scan(&id, &st.session, &st.tenant, &st.role, &st.digest); err != nil {
			rs.Close()
			return nil, nil, fmt.Errorf("check ids: %w", err)
		}
		there[id] = st
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("check ids: %w", err)
	}
	if err := sameAsStored(b, msgs, there); err != nil {
		return nil, nil, err
	}
	var fresh [][]any
	var freshMsgs []*table.Message
	for i, m := range msgs {
		if _, ok := there[m.ID]; !ok {
			fresh, freshMsgs = append(fresh, rows[i]), append(freshMsgs, m)
		}
	}
	return fresh, freshMsgs, nil
}

// stored is what an import compares of a message already in the table.
type stored struct {
	session      uuid.UUID
	tenant       *string
	role, digest string // digest: SHA-256 of the content, hex
}

// sameAsStored is the one rule for a record whose id the table holds: it is
// skipped when it is that message (a resumed import, or the same record
// twice in a file), and refused naming its line when it is another one
// (another session, tenant, role or text): skipping it would drop it without
// a word.
func sameAsStored(b importBatchIn, msgs []*table.Message, there map[uuid.UUID]stored) error {
	for i, m := range msgs {
		st, ok := there[m.ID]
		if !ok {
			continue
		}
		sum := sha256.Sum256([]byte(m.Content))
		same := st.session == m.SessionID && (st.tenant == nil) == (m.TenantID == nil) &&
			(st.tenant == nil || *st.tenant == *m.TenantID) && st.role == string(m.Role) && st.digest == hex.EncodeToString(sum[:])
		if !same {
			return lineErr(b.msgLines[i], "id", "%s is stored already as another message (its session, tenant, role or text differ): an import skips only the messages it already wrote", m.ID)
		}
	}
	return nil
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return msg[:i]
	}
	return msg
}

// refused is an error the server answered with (not a lost connection).
func refused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}
