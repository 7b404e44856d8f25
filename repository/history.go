package repository

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// storedRow is what history assembly needs of a messages row. The database
// store reads exactly these fields (not the whole metadata document) and the
// in-memory store derives them; both list them in load order (the tenant's
// rows of one session, soft-deleted ones included, by created_at, id).
type storedRow struct {
	ID             uuid.UUID
	Role           models.Role
	Content        string
	Key            string          // metadata.entity_key
	ToolCallID     string          // metadata.tool_call_id
	ToolName       string          // metadata.tool_name
	ToolArgs       json.RawMessage // metadata.tool_arguments
	Author         string          // metadata.author
	Usage          json.RawMessage // metadata.usage
	ToolCalls      json.RawMessage // tool_calls.items
	Compaction     bool            // metadata.compaction
	CompactsBefore int             // metadata.compacts_before
	CreatedAt      time.Time
	Deleted        bool
}

func (r storedRow) key() string { return r.Key }

// rowFromMessage derives a storedRow from a full row (in-memory store).
func rowFromMessage(m *models.Message) storedRow {
	r := storedRow{ID: m.ID, Role: m.Role, Content: m.Content, CreatedAt: m.CreatedAt, Deleted: m.DeletedAt != nil}
	str := func(k string) string { v, _ := m.Metadata[k].(string); return v }
	raw := func(k string) json.RawMessage {
		if v, ok := m.Metadata[k]; ok && v != nil {
			b, _ := json.Marshal(v)
			return b
		}
		return nil
	}
	r.Key, r.ToolCallID, r.ToolName, r.Author = str("entity_key"), str("tool_call_id"), str("tool_name"), str("author")
	r.ToolArgs, r.Usage = raw("tool_arguments"), raw("usage")
	r.Compaction = m.Metadata["compaction"] == true
	r.CompactsBefore, _ = asInt(m.Metadata["compacts_before"])
	if m.ToolCalls != nil {
		var tc struct {
			Items json.RawMessage `json:"items"`
		}
		if json.Unmarshal(m.ToolCalls, &tc) == nil {
			r.ToolCalls = tc.Items
		}
	}
	return r
}

// compactionStart returns, for the last live compaction summary, its row
// position and the position of the first message it does not cover.
func compactionStart(rows []storedRow) (summary, from int, ok bool) {
	for p := len(rows) - 1; p >= 0; p-- {
		if !rows[p].Deleted && rows[p].Compaction {
			return p, rows[p].CompactsBefore, true
		}
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
		m, ok, err := historyOf(rows[p], p, sid, comp, stored, o)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// historyOf is one row of a load: ok is false for a row the load leaves out
// (soft-deleted, or not after o.Since). stored holds the keys other rows
// carry; nil means none can collide with a positional key.
func historyOf(r storedRow, p int, sid uuid.UUID, comp *compressor.Compressor, stored map[string]bool, o LoadOptions) (models.HistoryMessage, bool, error) {
	if r.Deleted || (!o.Since.IsZero() && !r.CreatedAt.After(o.Since)) {
		return models.HistoryMessage{}, false, nil
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
			return m, false, &models.FieldError{Index: p, Field: "content", Reason: err.Error()}
		}
	}
	return m, true, nil
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
		m.ToolCallID, m.ToolName = r.ToolCallID, r.ToolName
		if rawTruthy(r.ToolArgs) {
			m.ToolArguments = r.ToolArgs
		}
	}
	if r.Author != "" {
		b, _ := json.Marshal(r.Author)
		m.Extra = append(m.Extra, models.Field{Key: "author", Value: b})
	}
	if len(r.ToolCalls) > 2 && r.ToolCalls[0] == '[' {
		m.Extra = append(m.Extra, models.Field{Key: "tool_calls", Value: r.ToolCalls})
	}
	if rawTruthy(r.Usage) {
		m.Extra = append(m.Extra, models.Field{Key: "usage", Value: r.Usage})
	}
	return m
}

// rawTruthy is Python's truth value of a JSON value: the peer adds
// tool_arguments only when it is truthy (not null, false, 0, "", [] or {}).
func rawTruthy(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	switch t {
	case "", "null", "false", `""`, "[]", "{}":
		return false
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f != 0
	}
	if t[0] == '[' || t[0] == '{' {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return truthy(v)
		}
	}
	return true
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
