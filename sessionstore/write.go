package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/trace"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
)

// StoreResult says what a store call wrote.
type StoreResult struct {
	SessionID uuid.UUID
	// Keys[i] is the REM LOOKUP key of message i; IDs[i] its row id.
	Keys []string
	IDs  []uuid.UUID
	// Existing counts messages whose id was already stored in this session
	// (a retried call): they were not written again.
	Existing int
	// Last is the session's last live message after the call (its id, or
	// Empty), what the next guarded store names (StoreOptions.ExpectLast):
	// the last message written, or, for a guarded call that wrote nothing
	// new (a retry), the session's last now. "" when storage is off or an
	// unguarded call wrote nothing.
	Last string
}

// StoreAnswer is what every surface answers a store call with (the CLI's
// output and serve's body): the one place that says its shape.
type StoreAnswer struct {
	SessionID string `json:"session_id"`
	// Stored counts the messages written: the call's less those stored
	// already (a retry); 0 when storage is off.
	Stored int `json:"stored"`
	// Keys are the REM LOOKUP keys of the call's messages, in order (an
	// empty list, never null).
	Keys []string `json:"keys"`
	// Last is the session's last message after the store (its id, or
	// "empty"): what the next guarded store names.
	Last string `json:"last,omitempty"`
}

// AppendJSON appends a as encoding/json's Encoder (HTML escaping off) writes
// it, final newline included: serve's answer to every store, written
// without reflection (TestStoreAnswerJSON holds it to encoding/json).
func (a StoreAnswer) AppendJSON(b []byte) []byte {
	b = append(b, `{"session_id":`...)
	b = models.AppendJSONString(b, a.SessionID)
	b = append(b, `,"stored":`...)
	b = strconv.AppendInt(b, int64(a.Stored), 10)
	b = append(b, `,"keys":`...)
	if a.Keys == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, k := range a.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = models.AppendJSONString(b, k)
		}
		b = append(b, ']')
	}
	if a.Last != "" {
		b = append(b, `,"last":`...)
		b = models.AppendJSONString(b, a.Last)
	}
	return append(b, "}\n"...)
}

// Answer is r as the answer to a store of n messages on a store whose
// storage is on (enabled) or off.
func (r StoreResult) Answer(n int, enabled bool) StoreAnswer {
	a := StoreAnswer{SessionID: r.SessionID.String(), Stored: n - r.Existing, Keys: r.Keys, Last: r.Last}
	if a.Keys == nil {
		a.Keys = []string{}
	}
	if !enabled {
		a.Stored = 0
	}
	return a
}

// StoreOptions are the variations of a store call.
type StoreOptions struct {
	// UserID is written as the rows' user_id; "" means the store's.
	UserID string
	// ExpectLast guards the store: the id of the session's last live
	// message as the caller loaded it (LoadOptions.OnLast, StoreResult.Last),
	// or Empty for a session with none. When the session holds another
	// last message now, nothing is written and the error is a *MovedError
	// (errors.Is ErrMoved). A resend whose messages are all stored already
	// is answered as the retry it is. "" stores unguarded.
	ExpectLast string
	// Decoded says msgs are convert.DecodePydanticAI's rows (Ingested's
	// Messages): their pydantic-ai sources are the decoder's own and agree
	// with their rows by construction (convert.TestSourcesOfDecodedRowsAgree,
	// FuzzDecodePydanticAI), so the store does not decode them again
	// (convert.CheckSource cost 1.4x the decode itself). Every other check
	// still runs.
	Decoded bool
}

// Store writes msgs, uncompressed, as the next messages of the session, in
// one transaction: all or nothing. Concurrent calls on one session are
// serialized, so indexes are gap-free and each call's messages are
// contiguous. The session is created on first store; a session of another
// tenant is ErrNotFound. A guarded store names the last message its caller
// saw (StoreOptions.ExpectLast), so that two turns racing on one session
// cannot interleave: the second is refused with ErrMoved.
func (s *Store) Store(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, o StoreOptions) (res StoreResult, err error) {
	ctx, span := s.span(ctx, "remstore.store", sessionKey, attrMessages.Int(len(msgs)))
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attrSID.String(res.SessionID.String()), attrStored.Int(len(res.Keys)-res.Existing))
		}
		endSpan(span, err)
	}()
	return s.storeWith(ctx, sessionKey, msgs, o, span.SpanContext())
}

func (s *Store) storeWith(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, o StoreOptions, sc trace.SpanContext) (StoreResult, error) {
	userID := o.UserID
	sid, err := s.SessionUUID(sessionKey)
	if err != nil {
		return StoreResult{}, err
	}
	res := StoreResult{SessionID: sid}
	if !s.enabled {
		return res, nil
	}
	if userID != "" {
		if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
			return res, err
		}
	}
	expect, err := checkExpect(o.ExpectLast)
	if err != nil {
		return res, err
	}
	if err := validateBatch(msgs, o.Decoded); err != nil {
		return res, err
	}
	if len(msgs) == 0 {
		return res, nil
	}
	// By name, the session is created at the name's private id when its
	// public one is another tenant's (names.go).
	err = s.byName(ctx, sessionKey, true, func(sid uuid.UUID) error {
		p, err := s.plan(sid, sessionKey, msgs, userID, writeOpts{span: sc})
		if err != nil {
			return err
		}
		p.expect = expect
		err = s.withRetry(ctx, "store", neverSent, func() error {
			var err error
			res, err = s.write(ctx, s.db, p)
			if repository.IsUniqueViolation(err) {
				// A concurrent call stored one of these ids (in another
				// session, whose lock is not ours) between our check and
				// our insert. Once more: the check now sees its row and
				// answers as if the two calls had run one after the other.
				res, err = s.write(ctx, s.db, p)
			}
			return err
		})
		if repository.IsUniqueViolation(err) {
			err = fmt.Errorf("%w: %s", ErrConflict, firstLine(err))
		}
		if err != nil {
			res = StoreResult{SessionID: sid}
			return fmt.Errorf("store %d messages in session %s: %w", len(msgs), sid, err)
		}
		return nil
	})
	return res, err
}

// ensureSession creates the session row unless it exists and returns its id.
// A session of another tenant is ErrNotFound.
func (s *Store) ensureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error) {
	sid, err := s.SessionUUID(sessionKey)
	if err != nil || !s.enabled {
		return sid, err
	}
	err = s.byName(ctx, sessionKey, true, func(id uuid.UUID) error {
		sid = id
		p, err := s.plan(id, sessionKey, nil, userID, writeOpts{allowInactive: true})
		if err != nil {
			return err
		}
		_, err = s.write(ctx, s.db, p)
		return err
	})
	return sid, err
}

// writeOpts are the internal variations of a store: lifecycle messages are
// written to sessions that are no longer active, and compaction summaries
// carry extra metadata.
type writeOpts struct {
	allowInactive bool
	extraMeta     models.JSONMap
	// span is the store call's span: rows the caller gave no trace_id
	// carry its trace and span ids (tracing.go), so a stored message links
	// to the span that stored it. Invalid (tracing off): nothing is set.
	span trace.SpanContext
}

// writePlan is one store call, validated and turned into rows, ready for the
// driver: everything but the positions, which only the locked write can know.
type writePlan struct {
	sid           uuid.UUID
	name          string // the session row's name when it is created
	userID        string // user_id of the rows and of a new session
	now           time.Time
	rows          []*table.Message // metadata without message_index and entity_key
	check         bool             // some ids came from the caller
	allowInactive bool
	expect        string // StoreOptions.ExpectLast
	// limits are checked in the write's transaction, before it writes
	// (writeGo, or the store function's same steps).
	limits Limits
}

// writeOutcome is what a driver's write found and did.
type writeOutcome struct {
	// status is the session's status, or statusNotFound / statusIDTaken
	// when nothing was written.
	status string
	// first is the index of the first row written.
	first int
	// existing lists rows whose caller id was already stored (o counts from 1).
	existing []existingID
	// keys are the REM LOOKUP keys of the rows written, in order.
	keys []string
	// last is the session's last live message after the write (status
	// active) or now (statusMoved): StoreResult.Last.
	last string
}

type existingID struct {
	O    int     `json:"o"`
	Key  *string `json:"key"`
	Mine bool    `json:"mine"`
	Same bool    `json:"same"` // the stored row has the caller's role and text
}

const (
	statusNotFound = "not_found"
	statusIDTaken  = "id_taken"
	statusMoved    = "moved"
	statusIDReused = "id_reused"
	// The store function met a limit (first is the count it met); the
	// Go writers return the *LimitError itself.
	statusLimitMessages = "limit_messages"
	statusLimitSessions = "limit_sessions"
)

// checkExpect refuses a guard that names no message and spells an id as the
// databases print it.
func checkExpect(v string) (string, error) {
	if v == "" || v == Empty {
		return v, nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return "", &models.FieldError{Index: -1, Field: "expect_last", Reason: fmt.Sprintf("must be a message id or %q, not %q", Empty, v)}
	}
	return id.String(), nil
}

func (s *Store) plan(sid uuid.UUID, sessionKey string, msgs []models.HistoryMessage, userID string, wo writeOpts) (*writePlan, error) {
	if userID == "" {
		userID = s.userID
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return nil, err
	}
	p := &writePlan{sid: sid, name: sessionKey, userID: userID, now: s.clock(), allowInactive: wo.allowInactive,
		rows: make([]*table.Message, len(msgs)), limits: s.limits}
	if wo.allowInactive {
		// A lifecycle message (the reason of a session's final status,
		// set once) is written even into a full session: it must close.
		p.limits.SessionMessages = 0
	}
	for i, m := range msgs {
		row, err := newRow(m, sid, userID, s.userID)
		if err != nil {
			return nil, &models.FieldError{Index: i, Reason: err.Error()}
		}
		for k, v := range wo.extraMeta {
			row.Metadata[k] = v
		}
		if row.TraceID == nil && row.SpanID == nil && wo.span.IsValid() {
			row.TraceID, row.SpanID = models.Ptr(wo.span.TraceID().String()), models.Ptr(wo.span.SpanID().String())
		}
		p.rows[i] = row
		p.check = p.check || m.ID != ""
	}
	return p, nil
}

// write runs the plan through the driver and turns its outcome into the
// result or the error: one place decides what each outcome means.
func (s *Store) write(ctx context.Context, db bun.IDB, p *writePlan) (StoreResult, error) {
	res := StoreResult{SessionID: p.sid, Keys: make([]string, len(p.rows)), IDs: make([]uuid.UUID, len(p.rows))}
	dctx, span := s.dbSpan(ctx, "store")
	out, err := s.drv.write(dctx, s, db, p)
	endSpan(span, err)
	if err != nil {
		return res, err
	}
	switch {
	case out.status == statusLimitMessages:
		return res, p.limits.messages().refused(out.first, len(p.rows)-len(out.existing))
	case out.status == statusLimitSessions:
		return res, p.limits.sessions().refused(out.first, 1)
	case out.status == statusNotFound:
		return res, notFound(p.sid)
	case out.status == statusMoved:
		return res, &MovedError{Expected: p.expect, Last: out.last}
	case out.status == statusIDReused:
		for _, e := range out.existing {
			if !e.Same {
				return res, &ReusedIDError{Index: e.O - 1}
			}
		}
	case out.status == statusIDTaken:
		for _, e := range out.existing {
			if !e.Mine {
				return res, fieldErr(e.O-1, "id", "already used by another message")
			}
		}
	case out.status != models.StatusActive && !p.allowInactive:
		return res, fmt.Errorf("%w: status is %q", ErrSessionNotActive, out.status)
	}
	skip := make(map[int]*string, len(out.existing))
	for _, e := range out.existing {
		skip[e.O-1] = e.Key
	}
	if len(out.keys) != len(p.rows)-len(skip) {
		return res, fmt.Errorf("the writer returned %d keys for %d rows written", len(out.keys), len(p.rows)-len(skip))
	}
	n := 0
	for i, r := range p.rows {
		res.IDs[i] = r.ID
		if key, ok := skip[i]; ok {
			res.Existing++
			if key != nil {
				res.Keys[i] = *key
			}
			continue
		}
		res.Keys[i] = out.keys[n]
		n++
	}
	res.Last = out.last
	return res, nil
}

// newRow builds the row of the contract with the Python service for one message, without its position.
func newRow(m models.HistoryMessage, sid uuid.UUID, userID, tenantID string) (*table.Message, error) {
	id := uuid.New()
	if m.ID != "" {
		id = uuid.MustParse(m.ID) // validated
	}
	meta := models.JSONMap{"timestamp": nil}
	if m.Timestamp != nil {
		meta["timestamp"] = *m.Timestamp
	}
	row := &table.Message{
		ID: id, SessionID: sid, Role: m.Role, Content: m.Content, Metadata: meta,
		Tags: models.StringArray{}, GraphEdges: models.JSONList{},
		UserID: models.Ptr(userID), TenantID: models.Ptr(tenantID),
	}
	// The tool fields, agent_schema and model go to metadata only where
	// keeps says, and only when truthy, exactly as the peer's writer does.
	if msgcheck.Keeps(m.Role, "tool_call_id") {
		if m.ToolCallID != "" {
			meta["tool_call_id"] = m.ToolCallID
		}
		if m.ToolName != "" {
			meta["tool_name"] = m.ToolName
		}
		if msgcheck.RawTruthy(m.ToolArguments) {
			meta["tool_arguments"] = json.RawMessage(m.ToolArguments)
		}
	}
	for _, f := range m.Extra {
		if string(f.Value) == "null" {
			continue
		}
		if p := puts[f.Key]; p != nil { // validated: every extra has a rule
			p(row, meta, m, f)
		}
	}
	if len(m.ToolCalls) > 0 {
		row.ToolCalls = models.NullJSON(append(models.AppendToolCalls([]byte(`{"items":`), m.ToolCalls), '}'))
	}
	return row, nil
}
