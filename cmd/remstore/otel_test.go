package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Issue 41: serve, configured by the standard OTEL_* variables, exports its
// spans by OTLP over HTTP: the request (continuing the caller's
// traceparent), the store and its database round trip, with durations,
// under the service name the environment gives.
func TestServeExportsSpans(t *testing.T) {
	type got struct {
		service string
		spans   map[string][]byte // name -> trace id
		parent  map[string][]byte // name -> parent span id
		ids     map[string][]byte // name -> span id
		timed   bool
	}
	var mu sync.Mutex
	g := got{spans: map[string][]byte{}, parent: map[string][]byte{}, ids: map[string][]byte{}, timed: true}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					g.service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					g.spans[sp.Name], g.parent[sp.Name], g.ids[sp.Name] = sp.TraceId, sp.ParentSpanId, sp.SpanId
					g.timed = g.timed && sp.EndTimeUnixNano > sp.StartTimeUnixNano
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	defer receiver.Close()

	bin := attackBinary(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "r.db"))
	cmd.Env = append(cmd.Environ(), "REMSTORE_API_KEYS="+attackKey, "OTEL_EXPORTER_OTLP_ENDPOINT="+receiver.URL,
		"OTEL_SERVICE_NAME=remstore-under-test", "OTEL_BSP_SCHEDULE_DELAY=50")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base, traced := "", false
	lines := bufio.NewScanner(stderr)
	for base == "" && lines.Scan() {
		traced = traced || strings.Contains(lines.Text(), "traces go to OTLP")
		if _, addr, ok := strings.Cut(lines.Text(), "listening on "); ok {
			base = strings.TrimSpace(addr)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if base == "" || !traced {
		t.Fatalf("serve did not say it traces (%v) or where it listens (%q)", traced, base)
	}
	req, _ := http.NewRequest("POST", base+"/v1/sessions/chat-1/messages", strings.NewReader(`[{"role":"user","content":"hi"}]`))
	req.Header.Set("Authorization", "Bearer "+attackKey)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("store: %d", resp.StatusCode)
	}
	want := []string{"POST /v1/sessions/{id}/messages", "remstore.store", "remstore.db store"}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, name := range want {
			if g.spans[name] != nil {
				n++
			}
		}
		mu.Unlock()
		if n == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans received: %v; want %v", g.spans, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range want {
		if got := g.spans[name]; string(got) != string([]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}) {
			t.Fatalf("%s: trace %x, not the caller's", name, got)
		}
	}
	if string(g.parent["remstore.store"]) != string(g.ids[want[0]]) || string(g.parent["remstore.db store"]) != string(g.ids["remstore.store"]) {
		t.Fatal("the spans are not request > store > database")
	}
	if g.service != "remstore-under-test" || !g.timed {
		t.Fatalf("service.name %q, every span timed: %v", g.service, g.timed)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
}
