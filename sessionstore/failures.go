package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

// Failed steps per session, for a list of sessions (issue 41): the rows that
// may record one are narrowed on the server by the cheap tests
// convert.Failure itself makes first (a tool result naming a status or an
// error, a pydantic-ai source naming a retry or a content filter, an Agents
// SDK item naming a refusal, or any of them holding an escape), and
// convert.Failure decides on each: the rule stays in one place, the SQL only
// leaves out what it would never mark (TestFailedStepsCounted runs every
// kind of failure through both).

// failureNarrowing is the server's part, per dialect (true: PostgreSQL),
// with the sessions, the tenant and the tool roles as arguments; LIKE with
// '!' as its escape, so a backslash is a backslash on both databases.
var failureNarrowing = map[bool]string{true: failureQuery(true), false: failureQuery(false)}

func failureQuery(pg bool) string {
	src, agents := `json_extract(metadata, '$.`+convert.SourceKey+`')`, `json_extract(metadata, '$.`+AgentsSourceKey+`')`
	if pg {
		src, agents = `(metadata->'`+convert.SourceKey+`')::text`, `(metadata->'`+AgentsSourceKey+`')::text`
	}
	return `SELECT session_id, role, content, ` + src + `, ` + agents + ` FROM messages
		WHERE session_id IN (?) AND tenant_id = ? AND deleted_at IS NULL AND (
			role IN (?) AND (content LIKE '%status%' ESCAPE '!' OR content LIKE '%error%' ESCAPE '!' OR content LIKE '%\%' ESCAPE '!')
			OR ` + src + ` LIKE '%retry-%' ESCAPE '!' OR ` + src + ` LIKE '%content!_filter%' ESCAPE '!' OR ` + src + ` LIKE '%\%' ESCAPE '!'
			OR ` + agents + ` LIKE '%refusal%' ESCAPE '!')`
}

// toolRoles are the roles whose rows are tool results.
func toolRoles() []string {
	var out []string
	for _, r := range models.Roles() {
		if r.IsTool() {
			out = append(out, string(r))
		}
	}
	return out
}

// failedSteps counts each session's failed steps among ids (the tenant's
// live messages).
func (s *Store) failedSteps(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]int, error) {
	out := map[uuid.UUID]int{}
	rows, err := s.db.QueryContext(ctx, failureNarrowing[s.sql.Postgres], bun.List(ids), s.userID, bun.List(toolRoles()))
	if err != nil {
		return nil, fmt.Errorf("failed steps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sid uuid.UUID
		var role, content string
		var src, agents *string
		if err := rows.Scan(&sid, &role, &content, &src, &agents); err != nil {
			return nil, fmt.Errorf("failed steps: %w", err)
		}
		m := models.HistoryMessage{Role: models.Role(role), Content: content}
		for _, f := range []struct {
			key string
			v   *string
		}{{convert.SourceKey, src}, {AgentsSourceKey, agents}} {
			if f.v == nil {
				continue
			}
			var b bytes.Buffer // as a load gives it: compact
			if json.Compact(&b, []byte(*f.v)) == nil {
				m.Extra = append(m.Extra, models.Field{Key: f.key, Value: b.Bytes()})
			}
		}
		if convert.Failure(m) != "" {
			out[sid]++
		}
	}
	return out, rows.Err()
}
