package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math"
	"regexp"

	"github.com/remstore/remstore/models"
)

// Limits of an Exchange a caller sends.
const (
	MaxModelName = 256 // characters
	// MaxLatencyMS is a day: a longer call is a clock gone wrong.
	MaxLatencyMS = 24 * 3600 * 1000
)

var callIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// NewCallID is a fresh call id: 128 random bits, hex.
func NewCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// jsonField is one of an exchange's JSON values and its key.
type jsonField struct {
	key string
	v   *json.RawMessage
}

// jsonFields are ex's JSON values by key, the one list the writer, the
// check and Merge go through.
func jsonFields(ex *Exchange) []jsonField {
	return []jsonField{{"model_settings", &ex.ModelSettings}, {"tools", &ex.Tools}, {"request", &ex.Request}, {"answer", &ex.Answer}, {"usage", &ex.Usage}}
}

// Merge sets what more says into ex: each field more has replaces ex's.
func Merge(ex *Exchange, more Exchange) {
	src := jsonFields(&more)
	for i, f := range jsonFields(ex) {
		if len(*src[i].v) > 0 {
			*f.v = *src[i].v
		}
	}
	if more.CallID != "" {
		ex.CallID = more.CallID
	}
	if more.Model != "" {
		ex.Model = more.Model
	}
	if more.LatencyMS != nil {
		ex.LatencyMS = more.LatencyMS
	}
}

// Check says what is wrong with an exchange a caller sent, naming the
// field: nothing of it is written then.
func Check(ex Exchange) error {
	bad := func(field, reason string) error { return &models.FieldError{Index: -1, Field: field, Reason: reason} }
	if ex.CallID != "" && !callIDPattern.MatchString(ex.CallID) {
		return bad("call_id", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	if err := models.CheckText(-1, "model", ex.Model, MaxModelName); err != nil {
		return err
	}
	for _, f := range jsonFields(&ex) {
		if len(*f.v) == 0 {
			continue
		}
		if !json.Valid(*f.v) {
			return bad(f.key, "not JSON")
		}
		if reason := models.CheckJSONValue(*f.v); reason != "" {
			return bad(f.key, reason)
		}
	}
	if l := ex.LatencyMS; l != nil && (math.IsNaN(*l) || *l < 0 || *l > MaxLatencyMS) { // JSON has no NaN; a Go caller may
		return bad("latency_ms", "must be from 0 to 86,400,000 (a day)")
	}
	return nil
}
