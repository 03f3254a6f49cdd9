//! The rounds of a call until its result is complete: one request for a
//! method that cannot ask for input; for `tools/call`, `prompts/get` and
//! `resources/read`, an `input_required` answer has its input requests
//! fulfilled through the call's handlers or the client's ([`fulfil`]) and the request
//! sent again with `inputResponses` and the `requestState` echoed exactly,
//! all under one hard maximum.

use mcp_protocol::result::{ClassifiedResult, classify_result};
use mcp_protocol::types::{InputRequiredResult, InputResponses};
use mcp_protocol::{Era, RequestId, methods};
use mcp_transport::TransportError;
use serde_json::Value;
use tokio::time::Instant;

use super::attempt;
use crate::error::{ClientError, ErrorKind, Result};
use crate::in_flight::target_of;
use crate::kept_params::{COPY_FOR_RETRY_LIMIT, KeptParams, size_below};
use crate::mrtr::{InputRound, Outcome, fulfil, retry_params};
use crate::options::CallOptions;
use crate::session::Session;
use crate::trace;

/// The whole exchange: the result, and how many rounds it took.
pub(crate) async fn until_complete(
    session: &Session,
    method: &str,
    params: Value,
    options: &CallOptions,
) -> Result<(Value, u32)> {
    let may_require_input = methods::facts(method).is_some_and(|f| f.may_require_input);
    if !may_require_input {
        let value = attempt::request(session, method, Some(params), options, None).await?;
        return match classify_result(value, &session.registered_result_types()) {
            Ok(ClassifiedResult::Complete(v)) => Ok((v, 1)),
            Ok(_) => Err(ClientError::invalid(
                "only tools/call, prompts/get and resources/read may ask for input",
            )
            .with_method(method)),
            Err(e) => Err(ClientError::invalid(e.to_string()).with_method(method)),
        };
    }
    let hard = options
        .max_total
        .unwrap_or(session.config.max_total_timeout)
        .max(options.timeout.unwrap_or(session.config.request_timeout));
    let deadline = Instant::now() + hard;
    // Retries are rebuilt from the original params, so a modern request
    // keeps a copy: always when the client can be asked for input (it has
    // a handler), else only for params small enough to copy for nothing (a
    // round that carries only the server's state is rare; large arguments
    // are not doubled for it).
    let modern = session.version().era() == Era::Modern;
    // One walk serves both questions: whether to copy, and in which form.
    let size = modern
        .then(|| size_below(&params, COPY_FOR_RETRY_LIMIT))
        .flatten();
    let may_ask =
        modern && (session.config.handlers.any() || options.handlers.any() || size.is_some());
    let original = may_ask.then(|| KeptParams::sized(&params, size));
    let mut current = params;
    let mut round = 0;
    while round < session.config.max_rounds {
        round += 1;
        let mut round_options = options.clone();
        round_options.max_total = Some(deadline.saturating_duration_since(Instant::now()));
        let span = trace::round_span(method, round, &session.version(), &current);
        // The first round's params are the original, whose copy serves a
        // retry too.
        let kept = original.as_ref().filter(|_| round == 1);
        let mut asked_by = None;
        let sent = async {
            let sent = attempt::answered(session, method, Some(current), &round_options, kept);
            let (value, id) = sent.await?;
            asked_by = Some(id);
            classify(session, method, value)
        };
        let outcome = tracing::Instrument::instrument(sent, span.clone()).await;
        trace::record_round(&span, &outcome);
        let input = match (outcome?, &original) {
            (Outcome::Complete(v), _) => return Ok((v, round)),
            (Outcome::InputRequired(ir), Some(_)) => ir,
            (_, None) => return Err(no_copy_for_another_round(session, method)),
        };
        let target = target_of(method, original.as_ref().map(KeptParams::value).as_ref());
        let at = Asked {
            round,
            deadline,
            hard,
            request_id: asked_by,
        };
        let responses = answer_round(session, method, &input, target, &at, options).await?;
        let original = original.as_ref().map_or(Value::Null, KeptParams::value);
        current = retry_params(&original, &responses, input.request_state.as_deref());
    }
    Err(ClientError::new(ErrorKind::TooManyRounds { rounds: round }).with_method(method))
}

/// A round's result, classified: complete, or asking for input. A task is
/// not for these calls (the tasks API reads it).
pub(crate) fn classify(session: &Session, method: &str, value: Value) -> Result<Outcome<Value>> {
    match classify_result(value, &session.registered_result_types()) {
        Ok(ClassifiedResult::Complete(v)) => Ok(Outcome::Complete(v)),
        Ok(ClassifiedResult::InputRequired(ir)) => Ok(Outcome::InputRequired(ir)),
        Ok(ClassifiedResult::Task(_)) => Err(ClientError::usage(
            "the server answered with a task; use the tasks API to run calls as tasks",
        )
        .with_method(method)),
        Err(e) => Err(ClientError::invalid(e.to_string()).with_method(method)),
    }
}

/// The error of a call asked for another round whose params were not kept.
fn no_copy_for_another_round(session: &Session, method: &str) -> ClientError {
    let why = if session.version().era() == Era::Modern {
        "the server asked for another round, and the client kept no copy of these large \
         params (it has no elicitation, sampling or roots handler that would make one \
         expected)"
    } else {
        "a legacy server answered input_required, a 2026-07-28 result"
    };
    ClientError::invalid(why).with_method(method)
}

/// Which round asked, by which request, and the call's hard maximum.
struct Asked {
    round: u32,
    deadline: Instant,
    hard: std::time::Duration,
    request_id: Option<RequestId>,
}

/// Answers a round's input requests through the call's handlers (over the
/// client's), within what is left of the call's time.
async fn answer_round(
    session: &Session,
    method: &str,
    input: &InputRequiredResult,
    target: Option<String>,
    at: &Asked,
    options: &CallOptions,
) -> Result<InputResponses> {
    let Some(requests) = &input.input_requests else {
        return Ok(InputResponses::new());
    };
    let remaining = at.deadline.saturating_duration_since(Instant::now());
    let round = InputRound {
        method: Some(method),
        target,
        round: at.round,
        version: session.version(),
        request_id: at.request_id.clone(),
        on_behalf_of: options.on_behalf_of.clone(),
        handlers: options.handlers.over(&session.config.handlers),
    };
    let fulfilling = fulfil(
        &session.config,
        requests,
        &round,
        options.cancellation.as_ref(),
    );
    tokio::time::timeout(remaining, fulfilling)
        .await
        .map_err(|_| {
            ClientError::from(TransportError::Timeout {
                method: method.to_owned(),
                after: at.hard,
            })
        })?
        .map_err(|e| e.with_method(method))
}
