package sessionstore

import (
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

// MessageKey is one key a store accepts in a history message and where a
// stored row keeps it.
type MessageKey struct {
	Name  string
	Keeps string // where the row keeps it, in words (docs/reference.md)
}

// keyRule is a MessageKey with what the writer does with it. messageKeys is
// the one table of accepted keys: validation refuses any other key, newRow
// keeps each extra as its rule says, and docs/reference.md prints it
// (remstore reference). A new key is a row here.
type keyRule struct {
	MessageKey
	// extra: carried in HistoryMessage.Extra (the others are its fields,
	// which validateBatch and newRow read by name).
	extra bool
	// check refuses a bad value of an extra (nil: any JSON); skipJSON
	// leaves out the JSON size and depth check.
	check    func(i int, m models.HistoryMessage, f models.Field, decoded bool) error
	skipJSON bool
	// put keeps an extra's value in the row (nil: not stored).
	put func(row *models.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field)
}

// toMetadata keeps an extra's JSON as metadata[key].
func toMetadata(_ *models.Message, meta models.JSONMap, _ models.HistoryMessage, f models.Field) {
	meta[f.Key] = f.Value
}

// toMetadataWhereKept keeps it where keeps says, when truthy (the peer's rule).
func toMetadataWhereKept(_ *models.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field) {
	if keeps(m.Role, f.Key) && rawTruthy(f.Value) {
		meta[f.Key] = f.Value
	}
}

var messageKeys = []keyRule{
	{MessageKey: MessageKey{"role", "column `role`"}},
	{MessageKey: MessageKey{"content", "column `content`"}},
	{MessageKey: MessageKey{"timestamp", "`metadata.timestamp` (the row's `created_at` is the store's clock)"}},
	{MessageKey: MessageKey{"id", "column `id` (a new UUID when absent)"}},
	{MessageKey: MessageKey{"tool_call_id", "`metadata.tool_call_id`, on a `tool` row"}},
	{MessageKey: MessageKey{"tool_name", "`metadata.tool_name`, on a `tool` row"}},
	{MessageKey: MessageKey{"tool_arguments", "`metadata.tool_arguments`, on a `tool` row"}},
	{MessageKey: MessageKey{"tool_calls", "column `tool_calls` (`{\"items\": [...]}`), on an assistant row"},
		extra: true, check: func(i int, _ models.HistoryMessage, f models.Field, _ bool) error {
			// The decoder reads the key into HistoryMessage.ToolCalls; a
			// Go caller that put it in Extra would bypass its checks.
			return fieldErr(i, f.Key, "set HistoryMessage.ToolCalls, not an extra key")
		}},
	{MessageKey: MessageKey{"_compressed", "not stored: it describes a load"}},
	{MessageKey: MessageKey{"_original_length", "not stored: it describes a load"}},
	{MessageKey: MessageKey{"_entity_key", "not stored: the store gives the row its own key"}},
	{MessageKey: MessageKey{"trace_id", "column `trace_id`"}, extra: true, check: checkIDString,
		put: func(row *models.Message, _ models.JSONMap, m models.HistoryMessage, f models.Field) {
			v, _ := m.ExtraString(f.Key)
			row.TraceID = models.Ptr(v)
		}},
	{MessageKey: MessageKey{"span_id", "column `span_id`"}, extra: true, check: checkIDString,
		put: func(row *models.Message, _ models.JSONMap, m models.HistoryMessage, f models.Field) {
			v, _ := m.ExtraString(f.Key)
			row.SpanID = models.Ptr(v)
		}},
	{MessageKey: MessageKey{"model", "`metadata.model`, on an assistant or `tool` row"}, extra: true, put: toMetadataWhereKept},
	{MessageKey: MessageKey{"agent_schema", "`metadata.agent_schema`, on a `tool` row"}, extra: true, put: toMetadataWhereKept},
	{MessageKey: MessageKey{"author", "`metadata.author`"}, extra: true,
		check: func(i int, m models.HistoryMessage, f models.Field, _ bool) error {
			s, ok := m.ExtraString(f.Key)
			if !ok {
				return fieldErr(i, f.Key, "must be a string")
			}
			return CheckText(i, f.Key, s, models.MaxAgentName)
		},
		put: func(_ *models.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field) {
			v, _ := m.ExtraString(f.Key)
			meta[f.Key] = v
		}},
	{MessageKey: MessageKey{"usage", "`metadata.usage`"}, extra: true, put: toMetadata,
		check: func(i int, _ models.HistoryMessage, f models.Field, _ bool) error {
			if len(f.Value) == 0 || f.Value[0] != '{' {
				return fieldErr(i, f.Key, "must be an object of token counts")
			}
			return nil
		}},
	{MessageKey: MessageKey{convert.SourceKey, "`metadata.pydantic_ai`: the pydantic-ai message it came from, which must agree with the row; its files, thinking and other parts are in the row's view"},
		extra: true, put: toMetadata, check: checkSource},
	{MessageKey: MessageKey{AgentsSourceKey, "`metadata.openai_agents`: the Agents SDK item it came from, which must agree with the row; its images, files and hosted tools' output are in the row's view"},
		extra: true, put: toMetadata, check: checkSource},
	{MessageKey: MessageKey{ReasoningKey, "`metadata.reasoning`, on an assistant row, in forms its provider issued (signed thinking, encrypted content; no free text)"}, extra: true, put: toMetadata,
		check: func(i int, m models.HistoryMessage, f models.Field, _ bool) error {
			return checkReasoning(i, m.Role, f.Value)
		}},
	{MessageKey: MessageKey{"compaction", "not stored: a full load's mark of a summary (the summary's row keeps its own)"},
		extra: true, skipJSON: true},
}

// extraRules are messageKeys' extras by name.
var extraRules = func() map[string]*keyRule {
	m := map[string]*keyRule{}
	for i := range messageKeys {
		if messageKeys[i].extra {
			m[messageKeys[i].Name] = &messageKeys[i]
		}
	}
	return m
}()

// writableKeys are the names of messageKeys, in order.
var writableKeys = func() []string {
	out := make([]string, len(messageKeys))
	for i, k := range messageKeys {
		out[i] = k.Name
	}
	return out
}()

// MessageKeys are the keys a store accepts, in order, and where a row keeps
// each.
func MessageKeys() []MessageKey {
	out := make([]MessageKey, len(messageKeys))
	for i, k := range messageKeys {
		out[i] = k.MessageKey
	}
	return out
}

func checkIDString(i int, m models.HistoryMessage, f models.Field, _ bool) error {
	s, ok := m.ExtraString(f.Key)
	if !ok && string(f.Value) != "null" {
		return fieldErr(i, f.Key, "must be a string")
	}
	return CheckText(i, f.Key, s, models.MaxIDLen)
}

// checkSource holds a source to its row (issue 42, M4): a pydantic-ai
// message decoded again must give this row (skipped for the decoder's own
// rows, decoded). An Agents SDK item is held to its row by the row's view
// (visible.Of, in validateBatch), which maps it as the Python client does.
func checkSource(i int, m models.HistoryMessage, f models.Field, decoded bool) error {
	if len(f.Value) == 0 || f.Value[0] != '{' {
		return fieldErr(i, f.Key, "must be an object")
	}
	if f.Key == convert.SourceKey && !decoded {
		if reason := convert.CheckSource(m); reason != "" {
			return fieldErr(i, f.Key, "%s", reason)
		}
	}
	return nil
}
