//! Multi round-trip requests (2026-07-28): when `tools/call`, `prompts/get`
//! or `resources/read` answers `input_required`, fulfil its input requests
//! through the client's handlers and retry, on a new id, with
//! `inputResponses` and the `requestState` echoed exactly.
//!
//! The handlers are the ones that answer legacy servers' requests, so a
//! caller never sees which era it talks to. This file holds what a round
//! is made of (its outcome, its answers, the params of the next round) and
//! how its input requests are fulfilled; a call's rounds are run in
//! `call/rounds.rs`.

use std::time::Duration;

use mcp_protocol::types::{
    ElicitRequestParams, InputRequest, InputRequestParams, InputRequests, InputRequiredResult,
    InputResponse, InputResponses, ListRootsResult,
};
use mcp_protocol::{ProtocolVersion, RequestId};
use mcp_transport::{CancellationToken, TransportError};
use serde_json::{Map, Value};

use crate::config::Config;
use crate::elicitation::fill_defaults;
use crate::error::{ClientError, ErrorKind, Result};
use crate::handlers::{CallContext, HandlerContext, HandlerError, Handlers};

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

/// A round of input requests, the call it belongs to, and the handlers
/// that answer it (the call's own over the client's); `method` is `None`
/// when the client does not know it (a caller driving the rounds by hand).
pub(crate) struct InputRound<'a> {
    pub(crate) method: Option<&'a str>,
    pub(crate) target: Option<String>,
    pub(crate) round: u32,
    pub(crate) version: ProtocolVersion,
    /// The request that was answered `input_required`, when known.
    pub(crate) request_id: Option<RequestId>,
    pub(crate) on_behalf_of: Option<String>,
    pub(crate) handlers: Handlers,
}

/// Answers the input requests of one round through the configured
/// handlers, all at once (a person may answer one while a model answers
/// another). `cancelled` ends the wait with [`TransportError::Cancelled`];
/// then, or when the round ends any other way, every handler's context
/// token is cancelled.
pub(crate) async fn fulfil(
    config: &Config,
    requests: &InputRequests,
    round: &InputRound<'_>,
    cancelled: Option<&CancellationToken>,
) -> Result<InputResponses> {
    let round_token = CancellationToken::new();
    let _ends_round = round_token.clone().drop_guard();
    let answers = requests.iter().map(|(key, request)| {
        let context = HandlerContext {
            cancellation: round_token.child_token(),
            ..HandlerContext::new(
                round.version.clone(),
                round.method.map(|method| CallContext {
                    method: method.to_owned(),
                    target: round.target.clone(),
                    round: round.round,
                    key: Some(key.clone()),
                    request_id: round.request_id.clone(),
                    on_behalf_of: round.on_behalf_of.clone(),
                }),
            )
        };
        let answered = answer(&round.handlers, config.handler_timeout, request, context);
        async move { Ok::<_, ClientError>((key.clone(), answered.await?)) }
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
    handlers: &Handlers,
    deadline: Duration,
    request: &InputRequest,
    context: HandlerContext,
) -> Result<InputResponse> {
    Ok(match &request.params {
        InputRequestParams::Elicitation(params) => {
            let handler = handlers
                .elicitation
                .as_ref()
                .ok_or_else(|| missing_handler("elicitation", "ClientBuilder::on_elicitation"))?;
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
            let handler = handlers
                .sampling
                .as_ref()
                .ok_or_else(|| missing_handler("sampling", "ClientBuilder::on_sampling"))?;
            let result = within(deadline, handler.create_message(params.clone(), context))
                .await?
                .map_err(handler_error)?;
            InputResponse::Sampling(result)
        }
        InputRequestParams::ListRoots(_) => {
            let roots = within(deadline, handlers.roots(context))
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
