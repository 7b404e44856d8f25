package repository

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// storedRow is what history assembly needs of a messages row. The database
// store and the in-memory store both produce these, in load order (the
// tenant's rows of one session, soft-deleted ones included, by created_at, id).
type storedRow struct {
	ID        uuid.UUID
	Role      models.Role
	Content   string
	Meta      models.JSONMap
	ToolCalls models.NullJSON
	CreatedAt time.Time
	Deleted   bool
}

func (r storedRow) key() string {
	if k, ok := r.Meta["entity_key"].(string); ok {
		return k
	}
	return ""
}

// compactionStart returns, for the last live compaction summary, its row
// position and the position of the first message it does not cover.
func compactionStart(rows []storedRow) (summary, from int, ok bool) {
	for p := len(rows) - 1; p >= 0; p-- {
		if rows[p].Deleted || rows[p].Meta["compaction"] != true {
			continue
		}
		k, _ := asInt(rows[p].Meta["compacts_before"])
		return p, k, true
	}
	return 0, 0, false
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case float64:
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	}
	return 0, false
}

// buildHistory turns rows into the history of SPEC §3: deleted rows left out,
// the latest compaction summary in place of what it covers (unless
// o.IgnoreCompaction), long assistant messages compressed with their key.
func buildHistory(rows []storedRow, sid uuid.UUID, comp *compressor.Compressor, o LoadOptions) ([]models.HistoryMessage, error) {
	stored := map[string]bool{}
	for _, r := range rows {
		if k := r.key(); k != "" {
			stored[k] = true
		}
	}
	order := make([]int, 0, len(rows))
	if s, from, ok := compactionStart(rows); ok && !o.IgnoreCompaction {
		order = append(order, s)
		for p := from; p < len(rows); p++ {
			if p != s {
				order = append(order, p)
			}
		}
	} else {
		for p := range rows {
			order = append(order, p)
		}
	}
	out := make([]models.HistoryMessage, 0, len(order))
	for _, p := range order {
		r := rows[p]
		if r.Deleted || (!o.Since.IsZero() && !r.CreatedAt.After(o.Since)) {
			continue
		}
		m := toHistory(r)
		if !o.NoCompress && comp.ShouldCompressOnLoad(m) {
			key := r.key()
			if key == "" {
				key = compressor.BuildKey(sid.String(), p)
				// A row without a stored key takes the key of its position,
				// unless another row already holds that key (rows written
				// out of clock order): then it is cut without a key rather
				// than with one that finds another message.
				if stored[key] {
					key = ""
				}
			}
			var err error
			if m, err = comp.Compress(m, key); err != nil {
				return nil, &models.FieldError{Index: p, Field: "content", Reason: err.Error()}
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// toHistory maps a row to the message dict of SPEC §3. Beyond the peer's keys
// it adds author, tool_calls and usage when remstore stored them.
func toHistory(r storedRow) models.HistoryMessage {
	role := r.Role
	if role == "" {
		role = models.RoleAssistant
	}
	ts := models.FormatTimestamp(r.CreatedAt)
	m := models.HistoryMessage{Role: role, Content: r.Content, Timestamp: &ts}
	if role.IsTool() {
		if v, ok := r.Meta["tool_call_id"].(string); ok {
			m.ToolCallID = v
		}
		if v, ok := r.Meta["tool_name"].(string); ok {
			m.ToolName = v
		}
		if v, ok := r.Meta["tool_arguments"]; ok && truthy(v) {
			if b, err := json.Marshal(v); err == nil {
				m.ToolArguments = b
			}
		}
	}
	extra := func(key string, v any) {
		if b, err := json.Marshal(v); err == nil {
			m.Extra = append(m.Extra, models.Field{Key: key, Value: b})
		}
	}
	if v, ok := r.Meta["author"].(string); ok && v != "" {
		extra("author", v)
	}
	if r.ToolCalls != nil {
		var tc struct {
			Items json.RawMessage `json:"items"`
		}
		if json.Unmarshal(r.ToolCalls, &tc) == nil && len(tc.Items) > 2 {
			m.Extra = append(m.Extra, models.Field{Key: "tool_calls", Value: tc.Items})
		}
	}
	if v, ok := r.Meta["usage"]; ok && truthy(v) {
		extra("usage", v)
	}
	return m
}

// truthy is Python's truth value of a decoded JSON value: the peer adds
// tool_arguments only when it is truthy.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
