// Package telemetry turns OpenTelemetry tracing on for remstore serve from
// the standard OTEL_* variables, and leaves it off unless they ask for it.
// The library packages only use OpenTelemetry's API; this is the one place
// that configures its SDK and an exporter (OTLP over HTTP, otlp.go).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Wanted says whether the environment asks for traces, and why not when
// it does not: OTEL_SDK_DISABLED is not true, OTEL_TRACES_EXPORTER is not
// "none", and it is "otlp" or an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
func Wanted(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	switch exporter {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: remstore exports traces by OTLP only (otlp or none)", exporter)
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	if exporter == "" && !endpoint {
		return false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: remstore sends OTLP over HTTP (http/protobuf)", name, p)
			}
			break
		}
	}
	return true, nil
}

// Setup makes the global tracer provider export to OTLP over HTTP when the
// environment asks for it (Wanted), with the W3C trace context propagated;
// the exporter (otlp.go) reads its endpoint, headers, timeout, compression
// and certificates from the OTEL_EXPORTER_OTLP_* variables, the SDK its
// sampler and batching. It returns a shutdown
// that flushes what is buffered (bounded by ctx); a no-op when tracing is
// off.
func Setup(ctx context.Context, getenv func(string) string, version string) (shutdown func(context.Context) error, on bool, err error) {
	noop := func(context.Context) error { return nil }
	on, err = Wanted(getenv)
	if err != nil || !on {
		return noop, false, err
	}
	exp, err := newExporter(getenv)
	if err != nil {
		return noop, false, fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	// service.name is remstore unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise (WithFromEnv comes last).
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "remstore"), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return noop, false, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, true, nil
}
