package sessionstore

import (
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/visible"
)

// put keeps an extra's value in the row. The keys a store accepts and their
// checks are internal/msgcheck's table; this is where a row keeps the extras
// that are stored (an extra without a put is not stored).
type put func(row *table.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field)

// toMetadata keeps an extra's JSON as metadata[key].
func toMetadata(_ *table.Message, meta models.JSONMap, _ models.HistoryMessage, f models.Field) {
	meta[f.Key] = f.Value
}

// toMetadataWhereKept keeps it where msgcheck.Keeps says, when truthy (the
// Python service's rule).
func toMetadataWhereKept(_ *table.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field) {
	if msgcheck.Keeps(m.Role, f.Key) && msgcheck.RawTruthy(f.Value) {
		meta[f.Key] = f.Value
	}
}

var puts = map[string]put{
	"trace_id": func(row *table.Message, _ models.JSONMap, m models.HistoryMessage, f models.Field) {
		v, _ := m.ExtraString(f.Key)
		row.TraceID = models.Ptr(v)
	},
	"span_id": func(row *table.Message, _ models.JSONMap, m models.HistoryMessage, f models.Field) {
		v, _ := m.ExtraString(f.Key)
		row.SpanID = models.Ptr(v)
	},
	"model":        toMetadataWhereKept,
	"agent_schema": toMetadataWhereKept,
	"author": func(_ *table.Message, meta models.JSONMap, m models.HistoryMessage, f models.Field) {
		v, _ := m.ExtraString(f.Key)
		meta[f.Key] = v
	},
	"usage":              toMetadata,
	convert.SourceKey:    toMetadata,
	visible.AgentsKey:    toMetadata,
	visible.ReasoningKey: toMetadata,
}
