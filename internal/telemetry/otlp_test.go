package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The OTEL_EXPORTER_OTLP_* variables as the OTLP specification reads them:
// the traces variable wins and is used as given, the general endpoint gets
// /v1/traces; a value remstore cannot use is refused naming its variable.
func TestExporterSettings(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		url     string
		headers map[string]string
		timeout time.Duration
		gzip    bool
		err     string
	}{
		{env: map[string]string{}, url: "http://localhost:4318/v1/traces", timeout: 10 * time.Second},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://api.honeycomb.io/"}, url: "https://api.honeycomb.io/v1/traces", timeout: 10 * time.Second},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/base", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:9/custom"}, url: "http://t:9/custom", timeout: 10 * time.Second},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-honeycomb-team=k%20ey, b = 2", "OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"},
			url: "http://localhost:4318/v1/traces", headers: map[string]string{"x-honeycomb-team": "k ey", "b": "2"}, timeout: 1500 * time.Millisecond, gzip: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2"}, url: "http://localhost:4318/v1/traces", headers: map[string]string{"b": "2"}, timeout: 10 * time.Second},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, err: "http://"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, err: "OTEL_EXPORTER_OTLP_HEADERS"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "10s"}, err: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, err: "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, err: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k.pem"}, err: "go together"},
	} {
		e, err := newExporter(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one naming %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.env, err)
			continue
		}
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		if e.url != c.url || e.timeout != c.timeout || e.gzip != c.gzip || len(e.headers) != len(c.headers) {
			t.Errorf("%v: url %s timeout %s gzip %v headers %v; want %s %s %v %v", c.env, e.url, e.timeout, e.gzip, e.headers, c.url, c.timeout, c.gzip, c.headers)
		}
		for k, v := range c.headers {
			if e.headers[k] != v {
				t.Errorf("%v: header %s = %q, want %q", c.env, k, e.headers[k], v)
			}
		}
	}
}

// A span with every kind of attribute, an event, a link, a remote parent and
// an error arrives at an OTLP receiver as the collector's own message type
// decodes it, gzipped, with the configured header; a 503 is tried again, a
// 400 is not.
func TestExporterSends(t *testing.T) {
	var mu sync.Mutex
	var got []*coltrace.ExportTraceServiceRequest
	statuses := []int{http.StatusServiceUnavailable, http.StatusOK}
	requests := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		status := http.StatusOK
		if len(statuses) > 0 {
			status, statuses = statuses[0], statuses[1:]
		}
		if r.Header.Get("X-Team") != "k" || r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "headers "+r.Header.Get("X-Team")+r.Header.Get("Content-Encoding"), http.StatusBadRequest)
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(zr)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if status == http.StatusOK {
			got = append(got, &req)
		}
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(status)
	}))
	defer receiver.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.URL, "OTEL_EXPORTER_OTLP_HEADERS": "X-Team=k", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}
	e, err := newExporter(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tid := trace.TraceID{1, 2, 3}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled, Remote: true})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}})
	start := time.Unix(1700000000, 5)
	stub := tracetest.SpanStub{
		Name:        "POST /v1/sessions/{id}/messages",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{4}, TraceFlags: trace.FlagsSampled}),
		Parent:      parent, SpanKind: trace.SpanKindServer, StartTime: start, EndTime: start.Add(time.Millisecond),
		Attributes: []attribute.KeyValue{attribute.String("enduser.id", "alice"), attribute.Int64("n", -3), attribute.Bool("b", true),
			attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"x", "y"}), attribute.Int64Slice("is", []int64{1, 2})},
		Events:               []sdktrace.Event{{Name: "retry", Time: start.Add(time.Microsecond), Attributes: []attribute.KeyValue{attribute.Int("try", 2)}}},
		Links:                []sdktrace.Link{{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}}},
		Status:               sdktrace.Status{Code: codes.Error, Description: "db down"},
		Resource:             resource.NewSchemaless(attribute.String("service.name", "remstore")),
		InstrumentationScope: instrumentation.Scope{Name: "remstore/httpapi", Version: "1"},
	}
	if err := e.ExportSpans(context.Background(), tracetest.SpanStubs{stub}.Snapshots()); err != nil {
		t.Fatal(err)
	}
	if requests != 2 || len(got) != 1 {
		t.Fatalf("%d requests, %d accepted; want a 503 then one accepted", requests, len(got))
	}
	rs := got[0].ResourceSpans
	if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 || len(rs[0].ScopeSpans[0].Spans) != 1 {
		t.Fatalf("shape: %v", got[0])
	}
	if a := rs[0].Resource.Attributes; len(a) != 1 || a[0].Key != "service.name" || a[0].Value.GetStringValue() != "remstore" {
		t.Errorf("resource %v", a)
	}
	if sc := rs[0].ScopeSpans[0].Scope; sc.Name != "remstore/httpapi" || sc.Version != "1" {
		t.Errorf("scope %v", sc)
	}
	sp := rs[0].ScopeSpans[0].Spans[0]
	if !bytes.Equal(sp.TraceId, tid[:]) || sp.SpanId[0] != 4 || len(sp.ParentSpanId) != 8 || sp.ParentSpanId[0] != 9 {
		t.Errorf("ids: trace %x span %x parent %x", sp.TraceId, sp.SpanId, sp.ParentSpanId)
	}
	if sp.Name != stub.Name || sp.Kind != tracepb.Span_SPAN_KIND_SERVER || sp.StartTimeUnixNano != 1700000000000000005 || sp.EndTimeUnixNano != 1700000000001000005 {
		t.Errorf("name %q kind %v times %d %d", sp.Name, sp.Kind, sp.StartTimeUnixNano, sp.EndTimeUnixNano)
	}
	if sp.Flags != 0x301 { // sampled, and the parent is known to be remote
		t.Errorf("flags %#x, want 0x301", sp.Flags)
	}
	attrs := map[string]string{}
	for _, a := range sp.Attributes {
		attrs[a.Key] = a.Value.String()
	}
	for k, want := range map[string]string{"enduser.id": `string_value:"alice"`, "n": "int_value:-3", "b": "bool_value:true", "f": "double_value:1.5",
		"ss": `array_value:{values:{string_value:"x"} values:{string_value:"y"}}`, "is": "array_value:{values:{int_value:1} values:{int_value:2}}"} {
		if strings.Join(strings.Fields(attrs[k]), " ") != want {
			t.Errorf("attribute %s = %s, want %s", k, attrs[k], want)
		}
	}
	if len(sp.Events) != 1 || sp.Events[0].Name != "retry" || sp.Events[0].TimeUnixNano != 1700000000000001005 || sp.Events[0].Attributes[0].Value.GetIntValue() != 2 {
		t.Errorf("events %v", sp.Events)
	}
	if len(sp.Links) != 1 || sp.Links[0].TraceId[0] != 7 || sp.Links[0].SpanId[0] != 8 || sp.Links[0].Attributes[0].Value.GetStringValue() != "batch" {
		t.Errorf("links %v", sp.Links)
	}
	if sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || sp.Status.GetMessage() != "db down" {
		t.Errorf("status %v", sp.Status)
	}

	env["OTEL_EXPORTER_OTLP_HEADERS"] = "X-Team=wrong" // the receiver answers 400
	e, _ = newExporter(func(k string) string { return env[k] })
	before := requests
	err = e.ExportSpans(context.Background(), tracetest.SpanStubs{stub}.Snapshots())
	if err == nil || !strings.Contains(err.Error(), "400") || requests != before+1 {
		t.Errorf("a 400: %v after %d requests, want the error and no retry", err, requests-before)
	}
	if err := e.ExportSpans(context.Background(), nil); err != nil {
		t.Errorf("no spans: %v", err)
	}
}
