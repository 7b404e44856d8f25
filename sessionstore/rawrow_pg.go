package sessionstore

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/remstore/remstore/models"
)

// rawRow reads one row of rowsQuery from the bytes pgx received. The
// formats a load meets on a pool (binary uuid, int, bool, timestamps; text
// and jsonb as their text) are decoded here; any other pair of type and
// format goes through the connection's type map, as rows.Scan would. Scan
// planned and converted each of the 24 columns of every row through
// reflection: a fifth of a 1,000-message load's CPU.
type rawRow struct {
	fds  []pgconn.FieldDescription
	vals [][]byte
	m    *pgtype.Map
	err  error
}

// y2kMicros is PostgreSQL's epoch for binary timestamps, in Unix
// microseconds.
const y2kMicros = 946_684_800 * 1_000_000

// fallback scans column i as rows.Scan would, keeping the first error.
func (r *rawRow) fallback(i int, dst any) {
	if err := r.m.Scan(r.fds[i].DataTypeOID, r.fds[i].Format, r.vals[i], dst); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *rawRow) binary(i int) bool { return r.fds[i].Format == pgtype.BinaryFormatCode }

// text is a text column (NULL: "").
func (r *rawRow) text(i int) string {
	v := r.vals[i]
	switch oid := r.fds[i].DataTypeOID; {
	case v == nil:
		return ""
	case oid == pgtype.TextOID || oid == pgtype.VarcharOID || !r.binary(i):
		return string(v)
	}
	var s string
	r.fallback(i, &s)
	return s
}

// role is the role column: a role of the contract with the Python service without a string of its own.
func (r *rawRow) role(i int) models.Role {
	if role, ok := models.KnownRole(r.vals[i]); ok && (r.fds[i].DataTypeOID == pgtype.VarcharOID || !r.binary(i)) {
		return role
	}
	return models.Role(r.text(i))
}

// json is a json or jsonb column's text, compacted (NULL: nil); the bytes
// are copied, since pgx reuses its buffer for the next row.
func (r *rawRow) json(i int) []byte {
	v := r.vals[i]
	if v == nil {
		return nil
	}
	if r.binary(i) && r.fds[i].DataTypeOID == pgtype.JSONBOID {
		if len(v) == 0 || v[0] != 1 {
			var s []byte
			r.fallback(i, &s)
			return compactRaw(s)
		}
		v = v[1:] // jsonb's binary form: a version byte, then its text
	} else if r.binary(i) && r.fds[i].DataTypeOID != pgtype.JSONOID {
		var s string
		r.fallback(i, &s)
		return compactRaw([]byte(s))
	}
	return compactRaw(v)
}

// uuid is a uuid column; ok is false for NULL.
func (r *rawRow) uuid(i int) (id [16]byte, ok bool) {
	v := r.vals[i]
	switch {
	case v == nil:
		return id, false
	case r.binary(i) && r.fds[i].DataTypeOID == pgtype.UUIDOID && len(v) == 16:
		return [16]byte(v), true
	}
	var p *[16]byte
	r.fallback(i, &p)
	if p == nil {
		return id, false
	}
	return *p, true
}

// int is an integer column (NULL: 0).
func (r *rawRow) int(i int) int {
	v := r.vals[i]
	switch {
	case v == nil:
		return 0
	case r.binary(i) && r.fds[i].DataTypeOID == pgtype.Int4OID && len(v) == 4:
		return int(int32(binary.BigEndian.Uint32(v)))
	case r.binary(i) && r.fds[i].DataTypeOID == pgtype.Int8OID && len(v) == 8:
		return int(int64(binary.BigEndian.Uint64(v)))
	case !r.binary(i):
		if n, err := strconv.Atoi(string(v)); err == nil {
			return n
		}
	}
	var n int64
	r.fallback(i, &n)
	return int(n)
}

// bool is a boolean column (NULL: false).
func (r *rawRow) bool(i int) bool {
	v := r.vals[i]
	switch {
	case v == nil:
		return false
	case r.binary(i) && r.fds[i].DataTypeOID == pgtype.BoolOID && len(v) == 1:
		return v[0] == 1
	case !r.binary(i) && len(v) == 1 && (v[0] == 't' || v[0] == 'f'):
		return v[0] == 't'
	}
	var b bool
	r.fallback(i, &b)
	return b
}

// time is a timestamp column in UTC; ok is false for NULL. An infinite
// timestamp goes through the type map, which refuses it as Scan did.
func (r *rawRow) time(i int) (t time.Time, ok bool) {
	v := r.vals[i]
	if v == nil {
		return t, false
	}
	if oid := r.fds[i].DataTypeOID; r.binary(i) && (oid == pgtype.TimestamptzOID || oid == pgtype.TimestampOID) && len(v) == 8 {
		if us := int64(binary.BigEndian.Uint64(v)); us != 1<<63-1 && us != -1<<63 {
			return time.UnixMicro(us + y2kMicros).UTC(), true
		}
	}
	var p *time.Time
	r.fallback(i, &p)
	if p == nil {
		return t, false
	}
	return p.UTC(), true
}

// rowsOf prepares rs's rows for rawRow.
func rowsOf(rs pgx.Rows) rawRow {
	return rawRow{fds: rs.FieldDescriptions(), m: rs.Conn().TypeMap()}
}
