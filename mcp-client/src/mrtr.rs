//! Multi round-trip requests (2026-07-28): when `tools/call`, `prompts/get`
//! or `resources/read` answers `input_required`, fulfil its input requests
//! through the client's handlers and retry, on a new id, with
//! `inputResponses` and the `requestState` echoed exactly.
//!
//! The handlers are the ones that answer legacy servers' requests, so a
//! caller never sees which era it talks to.

use std::time::Duration;

use mcp_protocol::Era;
use mcp_protocol::result::{ClassifiedResult, RegisteredResultTypes, classify_result};
use mcp_protocol::types::{
    ElicitRequestParams, InputRequest, InputRequestParams, InputRequests, InputRequiredResult,
    InputResponse, InputResponses, ListRootsResult,
};
use mcp_protocol::{ProtocolVersion, methods};
use mcp_transport::{CancellationToken, TransportError};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::config::Config;
use crate::elicitation::fill_defaults;
use crate::error::{ClientError, ErrorKind, Result};
use crate::handlers::{CallContext, HandlerContext, HandlerError};
use crate::kept_params::KeptParams;
use crate::options::CallOptions;
use crate::session::Session;

/// A result that may be asking for input: what a call in manual mode
/// (`*_once`) returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outcome<T> {
    /// The finished result.
    Complete(T),
    /// The server asks for input; answer it and call again with
    /// [`retry_params`].
    InputRequired(InputRequiredResult),
}

/// The answers to one round's input requests, for the next round of a call
/// in manual mode (`call_tool_once` and friends).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InputAnswer {
    /// One response per input request, by its key.
    pub responses: InputResponses,
    /// The round's `requestState`, echoed exactly as received.
    pub request_state: Option<String>,
}

impl InputAnswer {
    /// The answers to `asked`: `responses`, with its `requestState` kept.
    ///
    /// ```
    /// use mcp_client::mrtr::InputAnswer;
    /// use mcp_protocol::types::{InputRequiredResult, InputResponses};
    ///
    /// let asked: InputRequiredResult = serde_json::from_value(serde_json::json!({
    ///     "resultType": "input_required", "requestState": "opaque"
    /// })).unwrap();
    /// let answer = InputAnswer::to(&asked, InputResponses::new());
    /// assert_eq!(answer.request_state.as_deref(), Some("opaque"));
    /// ```
    pub fn to(asked: &InputRequiredResult, responses: InputResponses) -> Self {
        InputAnswer {
            responses,
            request_state: asked.request_state.clone(),
        }
    }
}

/// The params of a retry: the original params plus `inputResponses` and
/// the `requestState` exactly as received (omitted when none was sent).
pub fn retry_params(
    original: &Value,
    responses: &InputResponses,
    request_state: Option<&str>,
) -> Value {
    let mut params = match original {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    params.remove("inputResponses");
    params.remove("requestState");
    if !responses.is_empty() {
        params.insert(
            "inputResponses".into(),
            serde_json::to_value(responses).unwrap_or_default(),
        );
    }
    if let Some(state) = request_state {
        params.insert("requestState".into(), Value::from(state));
    }
    Value::Object(params)
}

fn handler_error(e: HandlerError) -> ClientError {
    ClientError::new(ErrorKind::Handler { detail: e.message })
}

/// The call a round of input requests belongs to; `method` is `None` when
/// the client does not know it (a caller driving the rounds by hand).
pub(crate) struct Asking<'a> {
    pub(crate) method: Option<&'a str>,
    pub(crate) target: Option<String>,
    pub(crate) round: u32,
    pub(crate) version: ProtocolVersion,
}

/// Answers the input requests of one round through the configured
/// handlers, all at once (a person may answer one while a model answers
/// another). `cancelled` ends the wait with [`TransportError::Cancelled`];
/// then, or when the round ends any other way, every handler's context
/// token is cancelled.
pub(crate) async fn fulfil(
    config: &Config,
    requests: &InputRequests,
    asking: &Asking<'_>,
    cancelled: Option<&CancellationToken>,
) -> Result<InputResponses> {
    let round_token = CancellationToken::new();
    let _ends_round = round_token.clone().drop_guard();
    let answers = requests.iter().map(|(key, request)| {
        let context = HandlerContext {
            cancellation: round_token.child_token(),
            ..HandlerContext::new(
                asking.version.clone(),
                asking.method.map(|method| CallContext {
                    method: method.to_owned(),
                    target: asking.target.clone(),
                    round: asking.round,
                    key: key.clone(),
                }),
            )
        };
        async move { Ok::<_, ClientError>((key.clone(), answer(config, request, context).await?)) }
    });
    let all = futures::future::try_join_all(answers);
    let cancel = async {
        match cancelled {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        answered = all => Ok(answered?.into_iter().collect()),
        () = cancel => Err(ClientError::from(TransportError::Cancelled)),
    }
}

async fn answer(
    config: &Config,
    request: &InputRequest,
    context: HandlerContext,
) -> Result<InputResponse> {
    let deadline = config.handler_timeout;
    Ok(match &request.params {
        InputRequestParams::Elicitation(params) => {
            let handler =
                config.handlers.elicitation.as_ref().ok_or_else(|| {
                    missing_handler("elicitation", "ClientBuilder::on_elicitation")
                })?;
            if matches!(params, ElicitRequestParams::Url(_)) && !handler.supports_url() {
                return Err(ClientError::new(ErrorKind::Handler {
                    detail: "the server asked for a URL-mode elicitation, which the client's \
                             handler does not take (use ClientBuilder::on_elicitation_with_url)"
                        .into(),
                }));
            }
            let result = within(deadline, handler.elicit(params.clone(), context))
                .await?
                .map_err(handler_error)?;
            InputResponse::Elicitation(fill_defaults(params, result))
        }
        InputRequestParams::Sampling(params) => {
            let handler = config
                .handlers
                .sampling
                .as_ref()
                .ok_or_else(|| missing_handler("sampling", "ClientBuilder::on_sampling"))?;
            let result = within(deadline, handler.create_message(params.clone(), context))
                .await?
                .map_err(handler_error)?;
            InputResponse::Sampling(result)
        }
        InputRequestParams::ListRoots(_) => {
            let roots = within(deadline, config.handlers.roots(context))
                .await?
                .ok_or_else(|| missing_handler("roots", "ClientBuilder::roots"))?
                .map_err(handler_error)?;
            InputResponse::ListRoots(ListRootsResult::new(roots))
        }
        InputRequestParams::Unknown { method, .. } => {
            return Err(ClientError::new(ErrorKind::Handler {
                detail: format!(
                    "the server asked for input by {method:?}, which the client does not know"
                ),
            }));
        }
        _ => {
            return Err(ClientError::new(ErrorKind::Handler {
                detail: "the server asked for a kind of input the client does not know".into(),
            }));
        }
    })
}

fn missing_handler(what: &str, setter: &str) -> ClientError {
    ClientError::new(ErrorKind::Handler {
        detail: format!(
            "the server asked for {what}, but the client has no {what} handler (set one with {setter})"
        ),
    })
}

async fn within<T>(deadline: Duration, f: impl Future<Output = T>) -> Result<T> {
    tokio::time::timeout(deadline, f).await.map_err(|_| {
        ClientError::new(ErrorKind::Handler {
            detail: format!("a handler did not answer within {deadline:?}"),
        })
    })
}

/// What a call names, for its handlers' context: the tool, the prompt, or
/// the resource.
fn target_of(method: &str, params: Option<&Value>) -> Option<String> {
    let field = match method {
        methods::RESOURCES_READ => "uri",
        _ => "name",
    };
    params?.get(field)?.as_str().map(str::to_owned)
}

impl Session {
    pub(crate) fn registered_result_types(&self) -> RegisteredResultTypes {
        if self.config.tasks {
            RegisteredResultTypes::new().with_tasks_extension()
        } else {
            RegisteredResultTypes::new()
        }
    }

    /// One round: the result, classified.
    pub(crate) async fn send_once(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
        kept: Option<&KeptParams>,
    ) -> Result<Outcome<Value>> {
        let value = self.send_kept(method, Some(params), options, kept).await?;
        match classify_result(value, &self.registered_result_types()) {
            Ok(ClassifiedResult::Complete(v)) => Ok(Outcome::Complete(v)),
            Ok(ClassifiedResult::InputRequired(ir)) => Ok(Outcome::InputRequired(ir)),
            Ok(ClassifiedResult::Task(_)) => Err(ClientError::usage(
                "the server answered with a task; use the tasks API to run calls as tasks",
            )
            .with_method(method)),
            Err(e) => Err(ClientError::invalid(e.to_string()).with_method(method)),
        }
    }

    /// The whole exchange: rounds until complete, under one hard maximum.
    /// Returns the result and how many rounds it took.
    pub(crate) async fn send_rounds(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<(Value, u32)> {
        let hard = options
            .max_total
            .unwrap_or(self.config.max_total_timeout)
            .max(options.timeout.unwrap_or(self.config.request_timeout));
        let deadline = Instant::now() + hard;
        // Retries are rebuilt from the original params, so a modern
        // request keeps a copy: always when the client can be asked for
        // input (it has a handler), else only for params small enough to
        // copy for nothing (a round that carries only the server's state
        // is rare; large arguments are not doubled for it).
        let may_ask = self.version().era() == Era::Modern
            && (self.config.handlers.any()
                || crate::session::smaller_than(
                    Some(&params),
                    crate::session::COPY_FOR_RETRY_LIMIT,
                ));
        let original = may_ask.then(|| KeptParams::of(&params));
        let mut current = params;
        let mut round = 0;
        while round < self.config.max_rounds {
            round += 1;
            let mut round_options = options.clone();
            round_options.max_total = Some(deadline.saturating_duration_since(Instant::now()));
            let span = crate::trace::round_span(method, round, &self.version(), &current);
            let outcome = tracing::Instrument::instrument(
                // The first round's params are the original, whose copy
                // serves a retry too.
                self.send_once(
                    method,
                    current,
                    &round_options,
                    original.as_ref().filter(|_| round == 1),
                ),
                span.clone(),
            )
            .await;
            crate::trace::record_round(&span, &outcome);
            let outcome = outcome?;
            let input = match (outcome, &original) {
                (Outcome::Complete(v), _) => return Ok((v, round)),
                (Outcome::InputRequired(ir), Some(_)) => ir,
                (Outcome::InputRequired(_), None) => {
                    let why = if self.version().era() == Era::Modern {
                        "the server asked for another round, and the client kept no copy of \
                         these large params (it has no elicitation, sampling or roots handler \
                         that would make one expected)"
                    } else {
                        "a legacy server answered input_required, a 2026-07-28 result"
                    };
                    return Err(ClientError::invalid(why).with_method(method));
                }
            };
            let responses = match &input.input_requests {
                Some(requests) => {
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    let asking = Asking {
                        method: Some(method),
                        target: target_of(
                            method,
                            original.as_ref().map(KeptParams::value).as_ref(),
                        ),
                        round,
                        version: self.version(),
                    };
                    let fulfilling = fulfil(
                        &self.config,
                        requests,
                        &asking,
                        options.cancellation.as_ref(),
                    );
                    tokio::time::timeout(remaining, fulfilling)
                        .await
                        .map_err(|_| {
                            ClientError::from(mcp_transport::TransportError::Timeout {
                                method: method.to_owned(),
                                after: hard,
                            })
                        })?
                        .map_err(|e| e.with_method(method))?
                }
                None => InputResponses::new(),
            };
            let original = original.as_ref().map_or(Value::Null, KeptParams::value);
            current = retry_params(&original, &responses, input.request_state.as_deref());
        }
        Err(ClientError::new(ErrorKind::TooManyRounds { rounds: round }).with_method(method))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn retry_params_echo_state_and_omit_when_absent() {
        let original = json!({"name": "t", "arguments": {"a": 1}});
        let mut responses = InputResponses::new();
        responses.insert(
            "k".into(),
            InputResponse::ListRoots(ListRootsResult::new(vec![])),
        );
        let p = retry_params(&original, &responses, Some(" s\u{e9} "));
        assert_eq!(p["requestState"], " s\u{e9} ");
        assert_eq!(p["inputResponses"]["k"], json!({"roots": []}));
        let p = retry_params(&original, &InputResponses::new(), None);
        assert_eq!(p, original);
    }
}
