package viewer

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// Cookie names. The sign-in cookie lives under /ui/ only.
const (
	sessionCookie = "remstore_ui"
	loginCookie   = "remstore_ui_login" // the sign-in form's CSRF token (double submit)
	maxSignedIn   = 10000
)

// signedIn is one browser's sign-in: the user it acts for and the CSRF token
// its forms must carry.
type signedIn struct {
	user    string
	budget  string // who pays for its searches (Options.SignIn)
	csrf    string
	expires time.Time
}

// sessions holds sign-ins in memory: a restart signs everyone out, which is
// what a debugging page should do.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*signedIn
	ttl time.Duration
	now func() time.Time
}

func token() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *sessions) create(user, budget string) (id string, si *signedIn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.m) >= maxSignedIn { // drop the expired, then the oldest
		var oldest string
		var at time.Time
		for k, v := range s.m {
			if now.After(v.expires) {
				delete(s.m, k)
			} else if oldest == "" || v.expires.Before(at) {
				oldest, at = k, v.expires
			}
		}
		if len(s.m) >= maxSignedIn {
			delete(s.m, oldest)
		}
	}
	id, si = token(), &signedIn{user: user, budget: budget, csrf: token(), expires: now.Add(s.ttl)}
	s.m[id] = si
	return id, si
}

func (s *sessions) get(r *http.Request) (string, *signedIn) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || len(c.Value) != 64 {
		return "", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	si := s.m[c.Value]
	if si == nil {
		return "", nil
	}
	if s.now().After(si.expires) {
		delete(s.m, c.Value)
		return "", nil
	}
	return c.Value, si
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func sameToken(a, b string) bool {
	return a != "" && len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/ui/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || markedSecure(r)})
}

type ctxKeySecure struct{}

// MarkSecure tells the viewer that r reached the server over TLS although
// r.TLS is nil: a trusted proxy ended it (the server decides whom it trusts).
func MarkSecure(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxKeySecure{}, true))
}

func markedSecure(r *http.Request) bool {
	ok, _ := r.Context().Value(ctxKeySecure{}).(bool)
	return ok
}
