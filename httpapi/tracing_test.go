package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 41: serve's requests are spans named by route, with the user and
// the status, continuing a caller's traceparent, with the store's and the
// database's spans beneath them.
func TestRequestSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	db := dbtest.NewSQLite(t)
	stores, err := sessionstore.NewStores(db, sessionstore.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	h := newAPI(t, db, Options{Stores: stores, TracerProvider: tp})
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := httptest.NewRequest("POST", "/v1/sessions/chat-1/messages", strings.NewReader(`[{"role":"user","content":"hi"}]`))
	r.Header.Set("Authorization", "Bearer alice-only-0123456789")
	r.Header.Set("Traceparent", parent)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("store: %d %s", w.Code, w.Body)
	}
	if code, _, _ := do(t, h, call{method: "GET", path: "/v1/sessions/nope/messages?format=pydantic-ai", auth: "alice-only-0123456789"}); code != http.StatusOK {
		t.Fatalf("load: %d", code)
	}
	var req, store, dbSpan *tracetest.SpanStub
	spans := exp.GetSpans()
	for i := range spans {
		sp := &spans[i]
		switch sp.Name {
		case "POST /v1/sessions/{id}/messages":
			req = sp
		case "remstore.store":
			store = sp
		case "remstore.db store":
			dbSpan = sp
		}
	}
	if req == nil || store == nil || dbSpan == nil {
		names := []string{}
		for _, sp := range spans {
			names = append(names, sp.Name)
		}
		t.Fatalf("spans %v: want the request, the store and its database span", names)
	}
	if got := req.SpanContext.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("the request span's trace %s does not continue the caller's", got)
	}
	if store.Parent.SpanID() != req.SpanContext.SpanID() || dbSpan.Parent.SpanID() != store.SpanContext.SpanID() {
		t.Fatal("the spans are not request > store > database")
	}
	attrs := map[string]string{}
	for _, a := range req.Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["enduser.id"] != "alice" || attrs["http.response.status_code"] != "201" || attrs["http.route"] != "/v1/sessions/{id}/messages" {
		t.Fatalf("request span attributes %v", attrs)
	}
	if !req.EndTime.After(req.StartTime) {
		t.Fatal("the request span has no duration")
	}
	found := false
	for _, sp := range spans {
		found = found || sp.Name == "GET /v1/sessions/{id}/messages"
	}
	if !found {
		t.Fatal("no span for the load")
	}
}
