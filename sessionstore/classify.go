package sessionstore

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Kind is what an error means to the caller. Every surface maps from it —
// the HTTP API and the viewer to a status ([Kind.HTTPStatus]), the CLI to an
// exit code, MCP to a tool error naming [Class.Code] — so that one error
// never means two things on two surfaces.
type Kind int

const (
	// Unavailable: the database cannot serve (unreachable, not migrated,
	// storage switched off) or failed in a way the caller cannot fix.
	Unavailable Kind = iota
	// BadInput: the request itself is wrong (Class.Field names where).
	BadInput
	// NotFound: no such session, key or message for this tenant.
	NotFound
	// Conflict: the request is well-formed but the session's state refuses
	// it (not active, a forbidden transition, a concurrent write).
	Conflict
	// Timeout: a deadline passed (the caller's, or statement_timeout).
	Timeout
)

// Class is an error classified: its Kind, a stable code for machines, and
// for bad input the field at fault.
type Class struct {
	Kind  Kind
	Code  string // invalid_input, not_found, session_not_active, invalid_transition, conflict, id_reused, limit_reached, timeout, storage_off, storage_error
	Field string
}

// Classify is the one classification of the store's errors.
func Classify(err error) Class {
	if fe, ok := models.AsFieldError(err); ok {
		field := fe.Field
		if fe.Index >= 0 {
			field = "messages[" + strconv.Itoa(fe.Index) + "]"
			if fe.Field != "" { // a message that is not JSON names no field of its own
				field += "." + fe.Field
			}
		}
		return Class{BadInput, "invalid_input", field}
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return Class{Kind: NotFound, Code: "not_found"}
	case errors.Is(err, ErrSessionNotActive):
		return Class{Kind: Conflict, Code: "session_not_active"}
	case errors.Is(err, ErrInvalidTransition):
		return Class{Kind: Conflict, Code: "invalid_transition", Field: "status"}
	case errors.As(err, new(*ReusedIDError)):
		var e *ReusedIDError
		errors.As(err, &e)
		return Class{Kind: Conflict, Code: "id_reused", Field: "messages[" + strconv.Itoa(e.Index) + "].id"}
	case errors.As(err, new(*LimitError)):
		var e *LimitError
		errors.As(err, &e)
		return Class{Kind: Conflict, Code: "limit_reached", Field: e.Field}
	case errors.Is(err, ErrMoved):
		return Class{Kind: Conflict, Code: "conflict", Field: "expect_last"}
	case errors.Is(err, ErrConflict):
		return Class{Kind: Conflict, Code: "conflict"}
	case repository.IsDataException(err):
		return Class{Kind: BadInput, Code: "invalid_input"}
	case repository.IsTimeout(err):
		return Class{Kind: Timeout, Code: "timeout"}
	case errors.Is(err, ErrDisabled):
		return Class{Kind: Unavailable, Code: "storage_off"}
	}
	return Class{Kind: Unavailable, Code: "storage_error"}
}

// HTTPStatus is the status the HTTP API and the viewer answer for k.
func (k Kind) HTTPStatus() int {
	switch k {
	case BadInput:
		return http.StatusBadRequest
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	}
	return http.StatusServiceUnavailable // Unavailable, Timeout: try again later
}
