package sessionstore

import (
	"context"
	"database/sql"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Spans (issue 41): each store, load and lookup is a span (remstore.store,
// remstore.load, remstore.lookup) with the session and the user as
// attributes, and the database's part of it a child span (remstore.db ...),
// so a trace shows where a call's time went. They go to
// Options.TracerProvider, else to OpenTelemetry's global provider, which
// records nothing until an application sets one (remstore serve does when
// the OTEL_* variables ask for it). Off, a span costs a no-op call.

// instrumentation names the tracer, as OpenTelemetry's conventions ask.
const instrumentation = "github.com/remstore/remstore/sessionstore"

// Span attribute keys.
const (
	attrSession  = attribute.Key("remstore.session")
	attrSID      = attribute.Key("remstore.session.id")
	attrUser     = attribute.Key("enduser.id")
	attrMessages = attribute.Key("remstore.messages")
	attrStored   = attribute.Key("remstore.stored")
)

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(instrumentation)
}

// span starts a call's span. Its attributes are set only on a span that
// records: with tracing off (the default) a store, load or lookup builds
// none of them.
func (s *Store) span(ctx context.Context, name, sessionKey string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := s.tracer.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(attrs...)
		span.SetAttributes(attrUser.String(s.userID))
		if sessionKey != "" {
			span.SetAttributes(attrSession.String(sessionKey))
		}
	}
	return ctx, span
}

// dbSpan starts the span of one round trip to the database.
func (s *Store) dbSpan(ctx context.Context, op string) (context.Context, trace.Span) {
	ctx, span := s.tracer.Start(ctx, "remstore.db "+op, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		system := "sqlite"
		if s.sql.Postgres {
			system = "postgresql"
		}
		span.SetAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op))
	}
	return ctx, span
}

// endSpan ends span, marking it failed with err.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// eachRow is the driver's eachRow in a span (its time includes fn's, as
// the rows stream through it).
func (s *Store) eachRow(ctx context.Context, c conn, q rowsArgs, fn func(storedRow) error) error {
	ctx, span := s.dbSpan(ctx, "rows")
	err := s.drv.eachRow(ctx, c, q, fn)
	endSpan(span, err)
	return err
}

// queryRow is the driver's queryRow in a span.
func (s *Store) queryRow(ctx context.Context, c conn, query string, args []any, dest ...any) error {
	ctx, span := s.dbSpan(ctx, "row")
	err := s.drv.queryRow(ctx, c, query, args, dest...)
	if errors.Is(err, sql.ErrNoRows) {
		span.End() // an answer, not a failure
		return err
	}
	endSpan(span, err)
	return err
}
