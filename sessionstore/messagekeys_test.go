package sessionstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
)

// The one table of accepted keys says what validation accepts and what a
// row keeps: each extra it lists passes the unknown-key check, and the row
// builder keeps it (for some role) exactly when the table says it is stored.
func TestMessageKeysTableIsWhatTheWriterDoes(t *testing.T) {
	values := []json.RawMessage{json.RawMessage(`"v"`), json.RawMessage(`{"x": 1}`)}
	for _, r := range msgcheck.MessageKeys() {
		stored := !strings.HasPrefix(r.Keeps, "not stored")
		if !r.Extra {
			continue // a HistoryMessage field: read by name in validateBatch and newRow
		}
		t.Run(r.Name, func(t *testing.T) {
			kept, refused := false, true
			for _, role := range []models.Role{models.RoleAssistant, models.RoleTool, models.RoleUser} {
				for _, v := range values {
					m := models.HistoryMessage{Role: role, Content: "x", Extra: []models.Field{{Key: r.Name, Value: v}}}
					err := validateBatch([]models.HistoryMessage{m}, true)
					if err != nil && strings.Contains(err.Error(), "not a message key") {
						t.Fatalf("the table lists %s, validation refuses it: %v", r.Name, err)
					}
					refused = refused && err != nil
					row, err := newRow(m, uuid.New(), "u", "u")
					if err != nil {
						t.Fatal(err)
					}
					_, inMeta := row.Metadata[r.Name]
					kept = kept || inMeta || row.TraceID != nil || row.SpanID != nil || row.ToolCalls != nil
				}
			}
			// A key refused as an extra whatever its value (tool_calls: a
			// HistoryMessage field) is kept by its field's path.
			if !refused && kept != stored {
				t.Fatalf("%s: kept %v, the table says %q", r.Name, kept, r.Keeps)
			}
		})
	}
	m := models.HistoryMessage{Role: models.RoleUser, Content: "x", Extra: []models.Field{{Key: "contnet", Value: json.RawMessage(`"x"`)}}}
	if err := validateBatch([]models.HistoryMessage{m}, false); err == nil || !strings.Contains(err.Error(), `did you mean "content"`) {
		t.Fatalf("a key outside the table: %v", err)
	}
}
