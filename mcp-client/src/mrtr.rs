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
    InputRequestParams, InputRequests, InputRequiredResult, InputResponse, InputResponses,
    ListRootsResult,
};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::config::Config;
use crate::elicitation::fill_defaults;
use crate::error::{ClientError, ErrorKind, Result};
use crate::handlers::HandlerError;
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

/// Answers each input request through the configured handlers.
pub(crate) async fn fulfil(config: &Config, requests: &InputRequests) -> Result<InputResponses> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let deadline = config.handler_timeout;
        let response = match &request.params {
            InputRequestParams::Elicitation(params) => {
                let handler = config.handlers.elicitation.as_ref().ok_or_else(|| {
                    missing_handler("elicitation", "ClientBuilder::elicitation_handler")
                })?;
                let result = within(deadline, handler.elicit(params.clone()))
                    .await?
                    .map_err(handler_error)?;
                InputResponse::Elicitation(fill_defaults(params, result))
            }
            InputRequestParams::Sampling(params) => {
                let handler = config.handlers.sampling.as_ref().ok_or_else(|| {
                    missing_handler("sampling", "ClientBuilder::sampling_handler")
                })?;
                let result = within(deadline, handler.create_message(params.clone()))
                    .await?
                    .map_err(handler_error)?;
                InputResponse::Sampling(result)
            }
            InputRequestParams::ListRoots(_) => {
                let roots = config
                    .handlers
                    .roots()
                    .ok_or_else(|| missing_handler("roots", "ClientBuilder::roots"))?;
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
        };
        responses.insert(key.clone(), response);
    }
    Ok(responses)
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
    ) -> Result<Outcome<Value>> {
        let value = self.send(method, Some(params), options).await?;
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
        // Retries are rebuilt from the original params; only a modern server
        // can ask for them, so only then is a copy kept.
        let original = (self.version().era() == Era::Modern).then(|| params.clone());
        let mut current = params;
        let mut round = 0;
        while round < self.config.max_rounds {
            round += 1;
            let mut round_options = options.clone();
            round_options.max_total = Some(deadline.saturating_duration_since(Instant::now()));
            let span = tracing::debug_span!("mcp.round", method, round);
            let outcome = tracing::Instrument::instrument(
                self.send_once(method, current, &round_options),
                span,
            )
            .await?;
            let input = match (outcome, &original) {
                (Outcome::Complete(v), _) => return Ok((v, round)),
                (Outcome::InputRequired(ir), Some(_)) => ir,
                (Outcome::InputRequired(_), None) => {
                    return Err(ClientError::invalid(
                        "a legacy server answered input_required, a 2026-07-28 result",
                    )
                    .with_method(method));
                }
            };
            let responses = match &input.input_requests {
                Some(requests) => {
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    tokio::time::timeout(remaining, fulfil(&self.config, requests))
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
            let original = original.as_ref().unwrap_or(&Value::Null);
            current = retry_params(original, &responses, input.request_state.as_deref());
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
