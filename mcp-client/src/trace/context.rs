//! The caller's OpenTelemetry context as W3C Trace Context and Baggage
//! values, for a request's `_meta` (the `otel` feature).
//!
//! 2026-07-28 reserves the unprefixed `traceparent`, `tracestate` and
//! `baggage` keys of `_meta` for this (an exception to its prefixed key
//! names, kept for OpenTelemetry's conventions); legacy servers ignore
//! `_meta` keys they do not know, so the same keys go to every era.
//!
//! The values are written here rather than through the application's
//! global propagator: that one is a no-op unless configured and may speak
//! another format, while these keys always take W3C values.

use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Context, trace::SpanContext};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::otel::{BAGGAGE, TRACEPARENT, TRACESTATE};

/// The trace context fields of the first of these that has a valid span
/// context: the request's own span (so the server's work is its child),
/// the caller's current span (when the request's is filtered out), the
/// OpenTelemetry context current on this thread. Empty when none has one.
pub(crate) fn fields(span: &Span) -> Vec<(&'static str, String)> {
    let valid = |cx: Context| cx.span().span_context().is_valid().then_some(cx);
    valid(span.context())
        .or_else(|| valid(Span::current().context()))
        .or_else(|| valid(Context::current()))
        .map(|cx| encode(&cx))
        .unwrap_or_default()
}

/// The W3C values of `cx`: `traceparent` always, `tracestate` and
/// `baggage` when not empty.
fn encode(cx: &Context) -> Vec<(&'static str, String)> {
    let span = cx.span();
    let sc: &SpanContext = span.span_context();
    let mut fields = vec![(TRACEPARENT, traceparent(sc))];
    let state = sc.trace_state().header();
    if !state.is_empty() {
        fields.push((TRACESTATE, state));
    }
    let baggage = cx.baggage();
    if !baggage.is_empty() {
        fields.push((BAGGAGE, baggage.to_string()));
    }
    fields
}

/// `version-traceid-parentid-flags`, version 00 (W3C Trace Context §3.2).
fn traceparent(sc: &SpanContext) -> String {
    format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::KeyValue;
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};

    fn remote(state: TraceState) -> Context {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            state,
        );
        Context::new().with_remote_span_context(sc)
    }

    #[test]
    fn a_sampled_context_is_written_in_w3c_form() {
        let fields = encode(&remote(TraceState::default()));
        assert_eq!(
            fields,
            vec![(
                TRACEPARENT,
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()
            )]
        );
    }

    #[test]
    fn tracestate_and_baggage_come_along_when_present() {
        let state = TraceState::from_key_value([("vendor", "value")]).unwrap();
        let cx = remote(state).with_baggage([KeyValue::new("user", "a b")]);
        let fields = encode(&cx);
        assert_eq!(fields[1], (TRACESTATE, "vendor=value".to_owned()));
        assert_eq!(fields[2], (BAGGAGE, "user=a%20b".to_owned()));
    }

    #[test]
    fn no_context_no_fields() {
        assert!(fields(&Span::none()).is_empty());
    }
}
