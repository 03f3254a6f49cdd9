//! The `tracing` spans of requests and multi round-trip rounds, and what
//! goes from them onto the wire.
//!
//! Each request attempt is an `mcp.request` span and each round of a call
//! that may ask for input an `mcp.round` span, with the method, what it
//! names (tool, prompt or resource), the era and revision, the id, and the
//! outcome recorded when it ends. The `otel.*` fields are the ones
//! `tracing-opentelemetry` turns into the span's name, kind and status, so
//! that the client's timeline reads well in a tracing backend.

use std::borrow::Cow;

use mcp_protocol::methods::MethodKind;
use mcp_protocol::{ProtocolVersion, Request, RequestId, meta, methods};
use mcp_transport::{RequestOptions, Transport, TransportError};
use serde_json::{Map, Value};
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::error::ClientError;
use crate::mrtr::Outcome;

#[cfg(feature = "otel")]
pub(crate) mod context;

/// The span of one request attempt (a retry gets a new id, so a span of
/// its own).
pub(crate) fn request_span(
    method: &str,
    id: &RequestId,
    version: &ProtocolVersion,
    params: Option<&Value>,
) -> Span {
    let target = target_of(method, params);
    let span = tracing::debug_span!(
        "mcp.request",
        method,
        id = %id,
        tool = Empty,
        prompt = Empty,
        resource = Empty,
        era = %version.era(),
        version = version.as_str(),
        outcome = Empty,
        error.code = Empty,
        otel.name = span_name(method, target),
        otel.kind = "client",
        otel.status_code = Empty,
    );
    record_target(&span, target);
    span
}

/// Sends a request made outside a call (the handshake, and what a new
/// session is set up with) under an `mcp.request` span of its own, with
/// that span's trace context in its `_meta`.
pub(crate) fn traced_request(
    transport: &dyn Transport,
    mut request: Request,
    options: RequestOptions,
    version: &ProtocolVersion,
) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
    let span = request_span(
        &request.method,
        &request.id,
        version,
        request.params.as_ref(),
    );
    let context = extras_with_context(&span, request.params.as_ref(), &Map::new()).into_owned();
    // Only keys the params' `_meta` lacks: nothing there is replaced.
    request.params = meta::with_meta(request.params, context);
    let answer = transport.request(request, options);
    async move {
        let outcome = answer.instrument(span.clone()).await;
        record_request(&span, &outcome);
        outcome
    }
}

/// The span of one round of a call that may answer `input_required`; the
/// id is that of the request that answered it.
pub(crate) fn round_span(
    method: &str,
    round: u32,
    version: &ProtocolVersion,
    params: &Value,
) -> Span {
    let target = target_of(method, Some(params));
    let span = tracing::debug_span!(
        "mcp.round",
        method,
        round,
        tool = Empty,
        prompt = Empty,
        resource = Empty,
        era = %version.era(),
        id = Empty,
        outcome = Empty,
        otel.name = format!("{} round {round}", span_name(method, target)),
        otel.status_code = Empty,
    );
    record_target(&span, target);
    span
}

/// What a request names, under `tool`, `prompt` or `resource`.
fn record_target(span: &Span, target: Option<(&str, &str)>) {
    if let Some((field, value)) = target {
        span.record(field, value);
    }
}

/// Notes the request's id on the round it belongs to, if any: the round
/// span is the current one while its request is being made.
pub(crate) fn note_id_on_round(id: &RequestId) {
    let current = Span::current();
    if current.metadata().map(|m| m.name()) == Some("mcp.round") {
        current.record("id", tracing::field::display(id));
    }
}

/// Records how a request attempt ended.
pub(crate) fn record_request(span: &Span, outcome: &Result<Value, TransportError>) {
    let (outcome, code) = match outcome {
        Ok(_) => ("ok", None),
        Err(TransportError::Rpc { code, .. }) => ("rpc_error", Some(*code)),
        Err(TransportError::Timeout { .. }) => ("timeout", None),
        Err(TransportError::Cancelled) => ("cancelled", None),
        Err(_) => ("transport_error", None),
    };
    span.record("outcome", outcome);
    if let Some(code) = code {
        span.record("error.code", code);
    }
    span.record(
        "otel.status_code",
        if outcome == "ok" { "ok" } else { "error" },
    );
}

/// Records how a round ended.
pub(crate) fn record_round(span: &Span, outcome: &Result<Outcome<Value>, ClientError>) {
    let outcome = match outcome {
        Ok(Outcome::Complete(_)) => "complete",
        Ok(Outcome::InputRequired(_)) => "input_required",
        Err(_) => "error",
    };
    span.record("outcome", outcome);
    span.record(
        "otel.status_code",
        if outcome == "error" { "error" } else { "ok" },
    );
}

/// The caller's `_meta` extras, with the trace context of `span` added
/// under the keys the caller did not set (neither in the extras nor in the
/// params' own `_meta`). Without the `otel` feature, the extras unchanged.
pub(crate) fn extras_with_context<'a>(
    span: &Span,
    params: Option<&Value>,
    extra: &'a Map<String, Value>,
) -> Cow<'a, Map<String, Value>> {
    #[cfg(feature = "otel")]
    {
        let fields = context::fields(span);
        let already = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        let missing: Vec<_> = fields
            .into_iter()
            .filter(|(key, _)| {
                !extra.contains_key(*key) && !already.is_some_and(|m| m.contains_key(*key))
            })
            .collect();
        if !missing.is_empty() {
            let mut merged = extra.clone();
            for (key, value) in missing {
                merged.insert(key.to_owned(), Value::String(value));
            }
            return Cow::Owned(merged);
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, params);
    Cow::Borrowed(extra)
}

/// What a request names, as the span field and its value: the tool, the
/// prompt, or the resource's URI (the method's
/// [`target`](mcp_protocol::methods::MethodFacts::target)).
fn target_of<'a>(method: &str, params: Option<&'a Value>) -> Option<(&'static str, &'a str)> {
    let facts = methods::facts(method).filter(|f| f.kind == MethodKind::Request)?;
    let target = facts.target?;
    Some((target.what, target.in_params(params)?))
}

/// `tools/call get_weather`, or the method alone when it names nothing.
fn span_name(method: &str, target: Option<(&str, &str)>) -> String {
    match target {
        Some((_, target)) => format!("{method} {target}"),
        None => method.to_owned(),
    }
}
