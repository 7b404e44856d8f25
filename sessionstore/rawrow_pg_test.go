package sessionstore

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/remstore/remstore/models"
)

// TestRawRowFormats reads each kind of column rawRow decodes from the bytes
// pgx's own codecs write, in the binary and the text format (a load on a
// pool gets binary; the simple protocol text), and holds both to the value
// encoded: pgx is the oracle, as rows.Scan was.
func TestRawRowFormats(t *testing.T) {
	m := pgtype.NewMap()
	at := time.Date(2026, 11, 26, 10, 0, 0, 123456000, time.UTC)
	far := time.Date(1650, 1, 2, 3, 4, 5, 6000, time.UTC) // before y2k by more than time.Duration spans
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		enc := func(oid uint32, v any) []byte {
			b, err := m.Encode(oid, format, v, nil)
			if err != nil {
				t.Fatalf("encode %v as %d: %v", v, oid, err)
			}
			return b
		}
		cols := []struct {
			oid uint32
			val any
		}{
			{pgtype.UUIDOID, id}, {pgtype.VarcharOID, "assistant"}, {pgtype.TextOID, "héllo"}, {pgtype.Int4OID, int32(-1)},
			{pgtype.Int8OID, int64(1 << 40)}, {pgtype.BoolOID, true}, {pgtype.JSONBOID, map[string]any{"a": []int{1, 2}}},
			{pgtype.TimestamptzOID, at}, {pgtype.TimestamptzOID, far}, {pgtype.TimestampOID, at}, {pgtype.JSONOID, []int{3}},
		}
		r := rawRow{m: m}
		for _, c := range cols {
			r.fds = append(r.fds, pgconn.FieldDescription{DataTypeOID: c.oid, Format: format})
			r.vals = append(r.vals, enc(c.oid, c.val))
		}
		r.fds = append(r.fds, pgconn.FieldDescription{DataTypeOID: pgtype.TextOID, Format: format})
		r.vals = append(r.vals, nil) // NULL
		name := map[int16]string{0: "text", 1: "binary"}[format]
		if got, ok := r.uuid(0); !ok || got != id {
			t.Errorf("%s uuid: %v %v", name, got, ok)
		}
		if r.text(1) != "assistant" || r.text(2) != "héllo" {
			t.Errorf("%s text: %q %q", name, r.text(1), r.text(2))
		}
		if r.role(1) != models.RoleAssistant || r.role(2) != "héllo" { // a role of SPEC §1, and another writer's
			t.Errorf("%s role: %q %q", name, r.role(1), r.role(2))
		}
		if r.int(3) != -1 || r.int(4) != 1<<40 {
			t.Errorf("%s int: %d %d", name, r.int(3), r.int(4))
		}
		if !r.bool(5) {
			t.Errorf("%s bool", name)
		}
		if got := string(r.json(6)); got != `{"a":[1,2]}` {
			t.Errorf("%s jsonb: %s", name, got)
		}
		for i, want := range map[int]time.Time{7: at, 8: far, 9: at} {
			if got, ok := r.time(i); !ok || !got.Equal(want) || got.Location() != time.UTC {
				t.Errorf("%s time %d: %v, want %v", name, i, got, want)
			}
		}
		if got := string(r.json(10)); got != `[3]` {
			t.Errorf("%s json: %s", name, got)
		}
		if _, ok := r.time(11); ok || r.text(11) != "" || r.json(11) != nil || r.int(11) != 0 {
			t.Errorf("%s NULL read as a value", name)
		}
		if r.err != nil {
			t.Errorf("%s: %v", name, r.err)
		}
	}
}
