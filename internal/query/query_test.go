package query

import (
	"net/http/httptest"
	"testing"

	"github.com/remstore/remstore/models"
)

func TestOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ query, field string }{
		{"", ""},
		{"last=2", ""},
		{"last=2&since=x&format=dicts", ""},
		{"last=2&last=3", "last"},
		{"last=2&last=2", "last"},
		{"last=&last=", "last"},
		{"q=a&z=1&z=2&b=1&b=2", "b"},
		{"%6Cast=1&last=2", "last"}, // the name as decoded, as a handler reads it
	} {
		r := httptest.NewRequest("GET", "/v1/x?"+c.query, nil)
		err := Once(r)
		fe, ok := models.AsFieldError(err)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("?%s: %v", c.query, err)
		case c.field != "" && (!ok || fe.Field != c.field):
			t.Errorf("?%s: %v, want a field error naming %q", c.query, err, c.field)
		}
	}
}
