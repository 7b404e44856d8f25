package viewer_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remstore/remstore/viewer"
)

// The sign-in form asks for what the server needs: without keys, a user
// and no word of keys bound to users (it labelled the box "User (for a
// key not bound to one user)" on a server that has no keys at all).
func TestLoginFormLabels(t *testing.T) {
	t.Parallel()
	for _, keyOptional := range []bool{true, false} {
		v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return nil, errors.New("unused") },
			SignIn: func(string, string) (string, string, error) { return "", "", errors.New("unused") }, KeyOptional: keyOptional})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		v.ServeHTTP(w, httptest.NewRequest("GET", "/ui/login", nil))
		page := w.Body.String()
		if bound := strings.Contains(page, "not bound to one user"); bound == keyOptional || w.Code != 200 {
			t.Errorf("keys optional %v: %d, the form speaks of keys bound to users: %v", keyOptional, w.Code, bound)
		}
	}
}
