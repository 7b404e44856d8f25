package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/remstore/remstore/models"
)

// Error is a failed call: an error answer of the server (Status, and the
// API's error body: Code, Message, Field), or no answer at all (Status 0,
// Err the connection error). RequestID is the call's X-Request-Id (the
// server's logs name it) and URL the server's, either way.
type Error struct {
	Method, Path string
	URL          string
	Status       int
	Code         string
	Message      string
	Field        string
	// Last is the session's last message now, when a guarded store was
	// refused because the session moved on (Code conflict, Field
	// expect_last): reload, then run the turn again or store on top.
	Last       string
	RequestID  string
	RetryAfter string // the server's Retry-After, on 429 and 503
	Body       []byte // the answer's body as it came (at most 64 KiB)
	Tries      int
	Err        error
	// Pending is a store the client gave up on (no answer, or 5xx, within
	// Options.StoreWindow): its messages, not stored, and the request that
	// stores them once with Client.StorePending, whenever that is.
	Pending *PendingStore
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "remstore: %s %s: ", e.Method, e.Path)
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d ", e.Status)
	}
	if e.Code != "" {
		b.WriteString(e.Code + ": ")
	}
	b.WriteString(e.Message)
	if e.Field != "" {
		fmt.Fprintf(&b, " (field %q)", e.Field)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s at %s]", e.RequestID, e.URL)
	}
	if e.Tries > 1 {
		fmt.Fprintf(&b, "; %d tries", e.Tries)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of e's status: errors.Is(err, client.ErrNotFound);
// a guarded store refused is models.ErrMoved too, as in the library.
func (e *Error) Is(target error) bool {
	switch target {
	case models.ErrMoved:
		return e.Status == http.StatusConflict && e.Field == "expect_last"
	case models.ErrBadRequest: // a body over serve's limit is the input's fault too
		return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge
	case models.ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	s, ok := target.(statusErr)
	return ok && e.Status == int(s)
}

type statusErr int

func (s statusErr) Error() string { return http.StatusText(int(s)) }

// Sentinels for errors.Is, one per status a caller handles differently.
var (
	ErrBadRequest            = models.ErrBadRequest               // the input was refused, here or by serve; Field (or the *models.FieldError) names it
	ErrUnauthorized    error = statusErr(http.StatusUnauthorized) // no API key, or a wrong one
	ErrForbidden       error = statusErr(http.StatusForbidden)    // the key may not act for that user
	ErrNotFound              = models.ErrNotFound                 // no such session for this user, or no text behind a key
	ErrConflict        error = statusErr(http.StatusConflict)     // the session is not active, moved on (a guarded store: Error.Last), or a fork target exists
	ErrTooLarge        error = statusErr(http.StatusRequestEntityTooLarge)
	ErrTooManyRequests error = statusErr(http.StatusTooManyRequests) // not retried: the caller decides (RetryAfter)
	ErrUnavailable     error = statusErr(http.StatusServiceUnavailable)
)

// errorOf reads an error answer.
func errorOf(c call, resp *http.Response, tries int) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Method: c.method, Path: c.path, Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"),
		RetryAfter: resp.Header.Get("Retry-After"), Body: body, Tries: tries}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
			Last    string `json:"last"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &eb) == nil && (eb.Error.Code != "" || eb.Error.Message != "") {
		e.Code, e.Message, e.Field, e.Last = eb.Error.Code, eb.Error.Message, eb.Error.Field, eb.Error.Last
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500]
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return e
}
