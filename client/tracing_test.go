package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/remstore/remstore/client"
)

// Issue 41: a client call is one span, and every try carries its W3C
// traceparent, so serve's request span continues the caller's trace.
func TestCallsAreSpans(t *testing.T) {
	var parents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parents = append(parents, r.Header.Get("Traceparent"))
		if len(parents) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // one retry: the same span
			return
		}
		_, _ = w.Write([]byte(`{"key": "k", "content": "full"}`))
	}))
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	c, err := client.New(srv.URL, client.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), Backoff: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(context.Background(), "REM LOOKUP session-x-msg-1"); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "remstore.client GET" {
		t.Fatalf("spans %v, want one remstore.client GET", spans)
	}
	sc := spans[0].SpanContext
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if len(parents) != 2 || parents[0] != want || parents[1] != want {
		t.Fatalf("traceparent sent %q, want %q on both tries", parents, want)
	}
	for _, a := range spans[0].Attributes {
		if a.Key == "http.response.status_code" && a.Value.String() != "200" || a.Key == "url.path" && !strings.HasPrefix(a.Value.String(), "/v1/lookup") {
			t.Fatalf("attribute %s = %s", a.Key, a.Value.String())
		}
	}
}
