package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// exporter sends spans by OTLP over HTTP (http/protobuf), configured by the
// standard OTEL_EXPORTER_OTLP_* variables. It stands in for OpenTelemetry's
// otlptracehttp, which builds gRPC and its gateway into every remstore
// binary (six modules a first `go run` would download and compile) for an
// HTTP exporter that never uses them.
type exporter struct {
	url      string
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	client   *http.Client
	attempts int
}

// newExporter reads the variables as the OTLP exporter specification says:
// the signal's own variable first (OTEL_EXPORTER_OTLP_TRACES_*), then the
// general one; the general endpoint gets /v1/traces appended.
func newExporter(getenv func(string) string) (*exporter, error) {
	get := func(name string) (string, string) {
		for _, n := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return n, v
			}
		}
		return "", ""
	}
	e := &exporter{url: "http://localhost:4318/v1/traces", headers: map[string]string{}, timeout: 10 * time.Second, attempts: 5}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		e.url = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		e.url = strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", e.url)
	}
	if n, v := get("HEADERS"); v != "" {
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(pair, "=")
			k, kerr := url.PathUnescape(strings.TrimSpace(k))
			val, verr := url.PathUnescape(strings.TrimSpace(val))
			if !ok || k == "" || kerr != nil || verr != nil {
				return nil, fmt.Errorf("%s: %q is not key=value", n, pair)
			}
			e.headers[k] = val
		}
	}
	if n, v := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s=%q: want milliseconds", n, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch n, v := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%s=%q: gzip or none", n, v)
	}
	tlsConfig, err := exporterTLS(get)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	e.client = &http.Client{Transport: transport}
	return e, nil
}

// exporterTLS is the TLS configuration the CERTIFICATE (a CA bundle to trust
// instead of the system's), CLIENT_CERTIFICATE and CLIENT_KEY variables ask for.
func exporterTLS(get func(string) (string, string)) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if n, path := get("CERTIFICATE"); path != "" {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in %s", n, path)
		}
	}
	certName, cert := get("CLIENT_CERTIFICATE")
	keyName, key := get("CLIENT_KEY")
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// ExportSpans sends one export request; a 429, 502, 503 or 504 is tried
// again (after Retry-After, or 1, 2, 4, 8 s), as long as ctx allows.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	wait := time.Second
	for attempt := 1; ; attempt++ {
		retryAfter, err := e.post(ctx, body)
		if err == nil || retryAfter < 0 || attempt == e.attempts {
			return err
		}
		if retryAfter > 0 {
			wait = retryAfter
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post sends body once. retry is negative when trying again cannot help,
// else how long the server asked to wait (0: not said).
func (e *exporter) post(ctx context.Context, body []byte) (retry time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("OTLP export to %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("OTLP export to %s: %s: %q", e.url, resp.Status, msg)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, aerr := strconv.Atoi(resp.Header.Get("Retry-After")); aerr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	return -1, err
}

// Shutdown has nothing to release: each export is one request.
func (e *exporter) Shutdown(context.Context) error { return nil }

// exportRequest is the ExportTraceServiceRequest for spans, grouped by
// resource and instrumentation scope. The request message is one repeated
// field (1: resource_spans), written here so the collector package, and
// gRPC with it, stay out of the build.
func exportRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	type scopeKey struct {
		res   attribute.Distinct
		name  string
		ver   string
		attrs attribute.Distinct
	}
	byRes := map[attribute.Distinct]*tracepb.ResourceSpans{}
	byScope := map[scopeKey]*tracepb.ScopeSpans{}
	var order []*tracepb.ResourceSpans
	for _, s := range spans {
		res, scope := s.Resource(), s.InstrumentationScope()
		rk := res.Equivalent()
		rs := byRes[rk]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: keyValues(res.Attributes())}, SchemaUrl: res.SchemaURL()}
			byRes[rk] = rs
			order = append(order, rs)
		}
		sk := scopeKey{rk, scope.Name, scope.Version, scope.Attributes.Equivalent()}
		ss := byScope[sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version, Attributes: keyValues(scope.Attributes.ToSlice())}, SchemaUrl: scope.SchemaURL}
			byScope[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanProto(s))
	}
	var out []byte
	for _, rs := range order {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

func spanProto(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	sp := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Flags:                  spanFlags(sc.TraceFlags(), parent),
		Name:                   s.Name(),
		Kind:                   tracepb.Span_SpanKind(s.SpanKind()), // the same numbers
		StartTimeUnixNano:      uint64(s.StartTime().UnixNano()),
		EndTimeUnixNano:        uint64(s.EndTime().UnixNano()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount:     uint32(s.DroppedEvents()),
		DroppedLinksCount:      uint32(s.DroppedLinks()),
		Status:                 &tracepb.Status{},
	}
	if parent.SpanID().IsValid() {
		pid := parent.SpanID()
		sp.ParentSpanId = pid[:]
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	case codes.Ok:
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	for _, ev := range s.Events() {
		sp.Events = append(sp.Events, &tracepb.Span_Event{TimeUnixNano: uint64(ev.Time.UnixNano()), Name: ev.Name,
			Attributes: keyValues(ev.Attributes), DroppedAttributesCount: uint32(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		sp.Links = append(sp.Links, &tracepb.Span_Link{TraceId: ltid[:], SpanId: lsid[:], TraceState: l.SpanContext.TraceState().String(),
			Attributes: keyValues(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributeCount),
			Flags: spanFlags(l.SpanContext.TraceFlags(), l.SpanContext)})
	}
	return sp
}

// spanFlags carries the W3C trace flags and whether the parent (or linked
// span) came from another process.
func spanFlags(flags trace.TraceFlags, other trace.SpanContext) uint32 {
	f := uint32(flags) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if other.IsRemote() {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, &commonpb.KeyValue{Key: string(a.Key), Value: anyValue(a.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	array := func(n int, at func(int) *commonpb.AnyValue) *commonpb.AnyValue {
		vals := make([]*commonpb.AnyValue, n)
		for i := range vals {
			vals[i] = at(i)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
	}
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return str(v.AsString())
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.BoolValue(s[i])) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Int64Value(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(len(s), func(i int) *commonpb.AnyValue { return anyValue(attribute.Float64Value(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(len(s), func(i int) *commonpb.AnyValue { return str(s[i]) })
	}
	return str(v.String())
}
