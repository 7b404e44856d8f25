package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/remstore/remstore/models"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Options.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 3
	DefaultBackoff    = 250 * time.Millisecond
	DefaultMaxBackoff = 4 * time.Second
	// DefaultStoreWindow is how long a store is sent again across an
	// outage: long enough to ride out a restart of serve or of PostgreSQL.
	DefaultStoreWindow = 60 * time.Second
	// MaxResponseBytes bounds what the client reads of one answer.
	MaxResponseBytes = 256 << 20
)

// Options configures a Client; zero values take the defaults.
type Options struct {
	APIKey string // sent as Authorization: Bearer
	UserID string // sent as X-User-Id (a key bound to a user needs none)
	// Timeout bounds each try of a call (the context bounds the whole call).
	Timeout time.Duration
	// MaxRetries is how often a call is sent again (0 to 10); -1 means none.
	MaxRetries int
	Backoff    time.Duration // the first retry's delay, doubled each time
	MaxBackoff time.Duration // no delay is longer
	// StoreWindow is how long a store (which always carries an
	// Idempotency-Key, so a resend stores nothing twice) is sent again after
	// 503s and connection errors, however many tries that takes; 0 means
	// DefaultStoreWindow, a negative value makes stores retry as other
	// calls do (MaxRetries). When it gives up, the *Error's Pending holds
	// the store, for StorePending later.
	StoreWindow time.Duration
	// HTTPClient sends the requests; nil means one of its own with Timeout.
	HTTPClient *http.Client
	// TracerProvider receives a span per call (all its tries), whose W3C
	// traceparent every try sends, so serve's spans continue the caller's
	// trace; nil means OpenTelemetry's global provider (nothing recorded
	// until an application sets one).
	TracerProvider trace.TracerProvider
}

// Client calls one remstore serve. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	o       Options
	http    *http.Client
	retries int
	tracer  trace.Tracer
}

// New returns a client of the server at baseURL (http:// or https://).
func New(baseURL string, o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL must be http:// or https:// with a host: %q", baseURL)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 0 {
		return nil, errors.New("client: Timeout must be positive")
	}
	retries := o.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	case retries > 10:
		return nil, errors.New("client: MaxRetries must be 0 to 10")
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.StoreWindow == 0 {
		o.StoreWindow = DefaultStoreWindow
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: o.Timeout, CheckRedirect: sameMethodOnly}
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &Client{base: u, o: o, http: hc, retries: retries, tracer: tp.Tracer("github.com/remstore/remstore/client")}, nil
}

// Safety says whether a call may be sent again.
type retrySafety string

const (
	// Resend: twice has the effect of once; retried on 503 and on any
	// connection error.
	resend retrySafety = "resend"
	// Unsent: it would act twice; retried only when connecting failed.
	unsent retrySafety = "unsent"
	// Durable: a store carrying an Idempotency-Key. As Resend, but bounded
	// by a time window (Options.StoreWindow) rather than a count of tries:
	// a paid model run is not lost to a restart.
	durable retrySafety = "durable"
)

// Decision is what the client does after one try.
type retryDecision string

const (
	returnAnswer retryDecision = "return"
	raise        retryDecision = "raise"
	retryAgain   retryDecision = "retry"
)

// Outcome is what one try gave: a status, or a connection error (Sent
// says whether the request may have reached the server).
type tryOutcome struct {
	Status int // 0: no answer
	Sent   bool
}

// Try is where a call stands after one try: Attempt (0-based) of
// MaxRetries allowed, Elapsed since the first try of Window allowed (a
// Durable call's bound).
type tryState struct {
	Attempt, MaxRetries int
	Elapsed, Window     time.Duration
}

// Decide is the retry policy (fixtures/client/retry_policy.json, which the
// Python client follows too): what to do after try t of a call of safety s
// gave out.
func decide(s retrySafety, t tryState, out tryOutcome) retryDecision {
	last := t.Attempt >= t.MaxRetries
	if s == durable {
		last = t.Elapsed >= t.Window
	}
	if out.Status == 0 {
		if last || (out.Sent && s == unsent) {
			return raise
		}
		return retryAgain
	}
	if out.Status >= 200 && out.Status < 300 {
		return returnAnswer
	}
	if last || out.Status != http.StatusServiceUnavailable || s == unsent {
		return raise
	}
	return retryAgain
}

// Delay is the wait before retry number attempt (0-based): the server's
// Retry-After when it sent one (retryAfter >= 0), else backoff doubled per
// attempt, jittered to between half and all of it; never over max.
func delay(backoff, max time.Duration, attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return min(retryAfter, max)
	}
	d := backoff
	for range attempt {
		if d >= max {
			break
		}
		d *= 2
	}
	d = min(d, max)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// call is one API call: what is sent and how safe it is to send again.
type call struct {
	method, path string
	query        url.Values
	body         []byte
	headers      map[string]string
	safety       retrySafety
	// header, when set, is handed a successful answer's headers.
	header func(http.Header)
	// pending is what a Durable call that gives up leaves for StorePending.
	pending *PendingStore
}

// do sends c under the policy and decodes a successful answer's JSON into
// out (nil: the body is dropped). It returns the answer's status. The call
// is one span, whatever the tries.
func (cl *Client) do(ctx context.Context, c call, out any) (code int, err error) {
	if strings.HasPrefix(c.path, "/v1/sessions//") || c.path == "/v1/sessions/" {
		return 0, &models.FieldError{Index: -1, Field: "session_id", Reason: "must not be empty"}
	}
	ctx, span := cl.tracer.Start(ctx, "remstore.client "+c.method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", c.method), attribute.String("url.path", c.path)))
	defer func() {
		span.SetAttributes(attribute.Int("http.response.status_code", code))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	return cl.send(ctx, c, out)
}

// traceContext writes the W3C traceparent, whatever the global propagator.
var traceContext = propagation.TraceContext{}

func (cl *Client) send(ctx context.Context, c call, out any) (int, error) {
	target := cl.base.String() + c.path // path segments escaped by seg
	if q := c.query.Encode(); q != "" {
		target += "?" + q
	}
	// One request id for every try: the server logs them under it, and an
	// error without an answer still names it.
	rid := uuid.NewString()
	safety, window := c.safety, cl.o.StoreWindow
	if safety == durable && window < 0 {
		safety = resend
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, c.method, target, bytes.NewReader(c.body))
		if err != nil {
			return 0, fmt.Errorf("client: %s %s: %w", c.method, c.path, err)
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", "remstore-go/0.1")
		req.Header.Set("X-Request-Id", rid)
		if c.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if cl.o.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+cl.o.APIKey)
		}
		if cl.o.UserID != "" {
			req.Header.Set("X-User-Id", cl.o.UserID)
		}
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := cl.http.Do(req)
		var outcome tryOutcome
		var retryAfter time.Duration = -1
		if err != nil {
			if ctx.Err() != nil {
				return 0, cl.stopped(c, rid, attempt, ctx.Err())
			}
			outcome = tryOutcome{Sent: !notSent(err)}
		} else {
			outcome = tryOutcome{Status: resp.StatusCode}
			if v, perr := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); perr == nil && v >= 0 {
				retryAfter = time.Duration(v * float64(time.Second))
			}
		}
		elapsed := time.Since(start)
		switch decide(safety, tryState{Attempt: attempt, MaxRetries: cl.retries, Elapsed: elapsed, Window: window}, outcome) {
		case returnAnswer:
			defer resp.Body.Close()
			if c.header != nil {
				c.header(resp.Header)
			}
			if out == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
				return resp.StatusCode, nil
			}
			if err := json.NewDecoder(io.LimitReader(resp.Body, MaxResponseBytes)).Decode(out); err != nil {
				return resp.StatusCode, fmt.Errorf("client: %s %s: reading the answer: %w", c.method, c.path, err)
			}
			return resp.StatusCode, nil
		case raise:
			if err != nil {
				maybe := ""
				if outcome.Sent && c.safety != resend {
					maybe = " (the request may have reached the server; it was not sent again)"
				}
				return 0, &Error{Method: c.method, Path: c.path, URL: cl.base.String(), Message: err.Error() + maybe, RequestID: rid,
					Tries: attempt + 1, Err: err, Pending: c.pending}
			}
			defer resp.Body.Close()
			e := errorOf(c, resp, attempt+1)
			e.URL = cl.base.String()
			if e.RequestID == "" {
				e.RequestID = rid
			}
			if resp.StatusCode >= 500 {
				e.Pending = c.pending // a 4xx is the request's own fault: sending it later fails the same way
			}
			return resp.StatusCode, e
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		}
		d := delay(cl.o.Backoff, cl.o.MaxBackoff, attempt, retryAfter)
		if safety == durable {
			d = max(min(d, window-elapsed), time.Millisecond) // the last try at the window's end
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, cl.stopped(c, rid, attempt, ctx.Err())
		case <-t.C:
		}
	}
}

// stopped is a call the context ended (its deadline, or a cancel): the
// context's error itself, unless the call is a store, whose messages the
// *Error's Pending keeps, since the store may not have reached the server
// (errors.Is(err, context.DeadlineExceeded) holds either way).
func (cl *Client) stopped(c call, rid string, attempt int, err error) error {
	if c.pending == nil {
		return err
	}
	return &Error{Method: c.method, Path: c.path, URL: cl.base.String(), RequestID: rid, Tries: attempt + 1, Err: err,
		Pending: c.pending, Message: err.Error() + ": the store may not have reached the server; Error.Pending holds it (Client.StorePending)"}
}

// notSent says whether err surely happened before the request left: the
// connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// seg escapes one path segment (a session key may hold / or spaces).
func seg(s string) string {
	switch s {
	case ".", "..": // a path segment of its own, which a server would clean away
		return strings.Repeat("%2E", len(s))
	}
	return url.PathEscape(s)
}

// sameMethodOnly follows a redirect of a GET or HEAD only: a DELETE or POST
// sent again to another path acts on something the caller did not name.
func sameMethodOnly(req *http.Request, via []*http.Request) error {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}
