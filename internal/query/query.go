// Package query holds the rule every HTTP surface of remstore (the API and
// the viewer) applies to a request's query string before a handler reads
// it: each parameter at most once.
package query

import (
	"net/http"
	"slices"

	"github.com/remstore/remstore/models"
)

// Once refuses a request whose query string gives a parameter more than
// once (?last=2&last=3): a handler reads one value, and which one would
// be a guess the caller cannot see. The error names the parameter (the
// first such name in sorted order, so the answer does not change from one
// try to the next) and classifies as invalid input: a 400.
func Once(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	var repeated []string
	for name, vs := range r.URL.Query() {
		if len(vs) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	return &models.FieldError{Index: -1, Field: slices.Min(repeated),
		Reason: "query parameter given more than once; give it once"}
}
