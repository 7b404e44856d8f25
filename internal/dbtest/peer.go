package dbtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/repository/migrations"
)

// PeerMessage is a message as the Python service's store_session_messages gets it.
type PeerMessage struct {
	Role, Content string
	Timestamp     *string
	ToolCallID    string
	ToolName      string
	ToolArguments any
	// ToolCalls, when not nil, is the list the peer stores in the
	// tool_calls column as {"items": [...]}, on any role, as given.
	ToolCalls any
}

// PeerStore writes msgs the way the Python service does: the session row created
// if missing, then one INSERT per message (its own round trip), metadata
// {message_index: position in this batch, timestamp} plus tool fields for tool
// messages, no entity_key, tool_calls {"items": ToolCalls} when given (else
// left to the column default), created_at from the caller's clock. at(i)
// gives message i's created_at.
func PeerStore(ctx context.Context, db bun.IDB, sessionID uuid.UUID, userID string, msgs []PeerMessage, at func(i int) time.Time) ([]uuid.UUID, error) {
	_, err := db.ExecContext(ctx, `INSERT INTO sessions (id, name, status, user_id, tenant_id, created_at, updated_at)
		VALUES (?, ?, 'active', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		sessionID, sessionID.String(), userID, userID, at(0), at(0))
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for i, m := range msgs {
		meta := map[string]any{"message_index": i, "timestamp": m.Timestamp}
		if m.Role == "tool" {
			if m.ToolCallID != "" {
				meta["tool_call_id"] = m.ToolCallID
			}
			if m.ToolName != "" {
				meta["tool_name"] = m.ToolName
			}
			if m.ToolArguments != nil {
				meta["tool_arguments"] = m.ToolArguments
			}
		}
		b, _ := json.Marshal(meta)
		id := uuid.New()
		if m.ToolCalls != nil {
			calls, _ := json.Marshal(map[string]any{"items": m.ToolCalls})
			_, err = db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tool_calls, user_id, tenant_id, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, sessionID, m.Role, m.Content, string(b), string(calls), userID, userID, at(i), at(i))
		} else {
			_, err = db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, sessionID, m.Role, m.Content, string(b), userID, userID, at(i), at(i))
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// WithoutTenantGuard turns off the tenant guard's triggers on db (a test's
// own database) for the rest of the test, so it can hold what the peer
// wrote before the guard existed: another tenant's rows in a session. A
// no-op where there is no guard (SQLite, Citus).
func WithoutTenantGuard(t testing.TB, db bun.IDB) {
	t.Helper()
	ctx := context.Background()
	for _, tr := range migrations.TenantGuardTriggers() {
		var n int
		// pg_trigger is the database's, not the schema's: Citus tests share
		// one database, a schema each, and a guard on another schema's
		// (undistributed) table is not this one's.
		if err := db.NewRaw("SELECT count(*) FROM pg_trigger WHERE tgname = ? AND tgrelid = to_regclass(?)", tr[1], tr[0]).Scan(ctx, &n); err != nil || n == 0 {
			continue // not PostgreSQL, or no guard on this schema's table
		}
		if _, err := db.ExecContext(ctx, "ALTER TABLE "+tr[0]+" DISABLE TRIGGER "+tr[1]); err != nil {
			t.Fatal(err)
		}
	}
}

// SameSecret gives db the derivation secret every database it is called on
// shares (remstore_secrets; sessionstore/names.go), so that tests that run
// the same calls on several databases and compare the rows (the
// differential test) derive the same private ids.
func SameSecret(t testing.TB, db bun.IDB) {
	t.Helper()
	if _, err := db.NewRaw("UPDATE remstore_secrets SET value = ? WHERE name = 'derive'", strings.Repeat("5e", 32)).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}
