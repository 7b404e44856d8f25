package sessionstore

import (
	"strings"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
)

// Limits on what one store call accepts (internal/msgcheck holds the rules,
// which the Go client applies before it sends).
const (
	MaxContentBytes     = msgcheck.MaxContentBytes
	MaxBatchMessages    = msgcheck.MaxBatchMessages
	MaxToolArgsBytes    = msgcheck.MaxToolArgsBytes
	MaxJSONDepth        = msgcheck.MaxJSONDepth
	MaxSessionKeyLength = msgcheck.MaxSessionKeyLength
)

// validateBatch checks every message before anything is written, so a bad
// message in the middle of a batch leaves the database untouched.
func validateBatch(msgs []models.HistoryMessage, decoded bool) error {
	return msgcheck.Messages(msgs, decoded)
}

// checkID validates a session key or user id.
func checkID(field, s string, maxRunes int) error {
	if strings.TrimSpace(s) == "" {
		return fieldErr(-1, field, "must not be empty")
	}
	return models.CheckText(-1, field, s, maxRunes)
}
