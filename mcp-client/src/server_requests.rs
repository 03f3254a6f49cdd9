//! Answers to the requests legacy servers send the client: `ping` always,
//! `roots/list` when roots are offered, sampling and elicitation through the
//! user's handlers, `-32601` for anything undeclared.
//!
//! A request the transport ties to one of the client's (over Streamable
//! HTTP, one sent on a `POST`'s answer stream) is answered by the handlers
//! of the call that request was sent for, over the client's, and its
//! handler's context names that call. Any other (stdio, the GET stream,
//! the 2024-11-05 transport) goes to the client's handlers, with no call.
//!
//! "Declared" is what the client declared in the revision it negotiated:
//! `elicitation/create` in a revision without elicitation (before
//! 2025-06-18), or a URL-mode elicitation the client did not declare URL
//! mode for, never reaches a handler.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::error_codes;
use mcp_protocol::types::ClientCapabilities;
use mcp_protocol::types::{CreateMessageRequestParams, ElicitRequestParams, ListRootsResult};
use mcp_protocol::{ErrorObject, ProtocolVersion, Request, RequestId, methods};
use mcp_transport::ServerRequestHandler;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::config::Config;
use crate::elicitation::fill_defaults;
use crate::handlers::{CallContext, HandlerContext, HandlerError, Handlers};
use crate::in_flight::{InFlight, Owner};

/// The client's [`ServerRequestHandler`]. It exists before the session
/// does (a server may ask right after `initialized`), so it shares only
/// what it needs of it.
pub(crate) struct ServerRequests {
    pub(crate) config: Arc<Config>,
    /// The session's client requests in flight: how many, and for which
    /// call each was sent.
    pub(crate) in_flight: Arc<InFlight>,
    /// The revision negotiated, set by the handshake before
    /// `notifications/initialized` goes out (so before any server request).
    pub(crate) negotiated: Arc<NegotiatedRevision>,
}

/// The revision a connection negotiated, shared with the handshake.
#[derive(Debug, Default)]
pub(crate) struct NegotiatedRevision(std::sync::RwLock<Option<ProtocolVersion>>);

impl NegotiatedRevision {
    pub(crate) fn set(&self, version: ProtocolVersion) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Some(version);
    }

    fn get(&self) -> Option<ProtocolVersion> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn not_found(method: &str) -> ErrorObject {
    ErrorObject::new(
        error_codes::METHOD_NOT_FOUND,
        format!("the client does not offer {method:?}"),
    )
}

fn params<T: DeserializeOwned>(request: &Request) -> Result<T, ErrorObject> {
    serde_json::from_value(request.params.clone().unwrap_or(Value::Null)).map_err(|e| {
        ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!("invalid params for {}: {e}", request.method),
        )
    })
}

fn answer<T: Serialize>(result: Result<T, HandlerError>) -> Result<Value, ErrorObject> {
    match result {
        Ok(r) => serde_json::to_value(r)
            .map_err(|e| ErrorObject::new(error_codes::INTERNAL_ERROR, e.to_string())),
        Err(e) => Err(ErrorObject::new(e.code, e.message)),
    }
}

impl ServerRequests {
    fn unassociated(&self) -> bool {
        // SEP-2260: sampling and elicitation belong to a client request in
        // flight; with the option on, others get -32602.
        self.config.reject_unassociated_server_requests && self.in_flight.count() == 0
    }
}

impl ServerRequests {
    /// What the client declared in the negotiated revision; nothing before
    /// the handshake has chosen one.
    fn declared(&self) -> ClientCapabilities {
        match self.negotiated.get() {
            Some(version) => self.config.capabilities(&version),
            None => ClientCapabilities::new(),
        }
    }
}

fn url_mode_undeclared() -> ErrorObject {
    ErrorObject::new(
        error_codes::INVALID_PARAMS,
        "the client did not declare URL-mode elicitation; send a form, or nothing",
    )
}

impl ServerRequestHandler for ServerRequests {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.serve(request, None)
    }

    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let owner = self.in_flight.owner_of(during);
        self.serve(request, owner.map(|owner| (during.clone(), owner)))
    }
}

/// What one server request may reach: the handlers (the call's own over
/// the client's) for what the client declared in the negotiated revision.
struct Reach {
    handlers: Handlers,
    url_declared: bool,
    /// SEP-2260: no client request is in flight to associate it with.
    unassociated: bool,
}

impl ServerRequests {
    /// Answers `request` within the handler timeout; `owner` is the call it
    /// belongs to, when the transport tied it to one of ours.
    fn serve(
        &self,
        request: Request,
        owner: Option<(RequestId, Owner)>,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let declared = self.declared();
        let handlers = match &owner {
            Some((_, owner)) => owner.handlers.over(&self.config.handlers),
            None => self.config.handlers.clone(),
        };
        let reach = Reach {
            handlers: only_declared(handlers, &declared),
            url_declared: declared
                .elicitation
                .as_ref()
                .is_some_and(|e| e.url.is_some()),
            unassociated: self.unassociated(),
        };
        let deadline = self.config.handler_timeout;
        let version = self
            .negotiated
            .get()
            .unwrap_or(ProtocolVersion::V2025_11_25);
        // A request no stream ties to a call of ours names no call. The
        // token is cancelled when the handler's future is dropped: the
        // engine drops it when the server cancels the request.
        let context = HandlerContext::new(version, owner.map(call_context));
        let cancelled_on_drop = context.cancellation.clone().drop_guard();
        let work = work(request, reach, context);
        Box::pin(async move {
            let _cancelled_on_drop = cancelled_on_drop;
            match tokio::time::timeout(deadline, work).await {
                Ok(r) => r,
                Err(_) => Err(ErrorObject::new(
                    error_codes::INTERNAL_ERROR,
                    format!("the client's handler did not answer within {deadline:?}"),
                )),
            }
        })
    }
}

/// The call a tied request belongs to, for its handler's context.
fn call_context((id, owner): (RequestId, Owner)) -> CallContext {
    CallContext {
        method: owner.method,
        target: owner.target,
        round: 1,
        key: None,
        request_id: Some(id),
        on_behalf_of: owner.on_behalf_of,
    }
}

/// `handlers` without those for what the client did not declare.
fn only_declared(mut handlers: Handlers, declared: &ClientCapabilities) -> Handlers {
    if declared.elicitation.is_none() {
        handlers.elicitation = None;
    }
    if declared.sampling.is_none() {
        handlers.sampling = None;
    }
    if declared.roots.is_none() {
        handlers.roots = None;
    }
    handlers
}

/// The answer to one server request, by its method.
fn work(
    request: Request,
    reach: Reach,
    context: HandlerContext,
) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    let Reach {
        handlers,
        url_declared,
        unassociated,
    } = reach;
    let method = request.method.clone();
    match method.as_str() {
        methods::PING => Box::pin(async { Ok(json!({})) }),
        methods::ROOTS_LIST if handlers.roots.is_some() => Box::pin(async move {
            match handlers.roots(context).await {
                Some(roots) => answer(roots.map(ListRootsResult::new)),
                None => Err(not_found(&method)),
            }
        }),
        methods::SAMPLING_CREATE_MESSAGE | methods::ELICITATION_CREATE if unassociated => {
            Box::pin(async move {
                Err(ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    format!("{method} is only accepted while a client request is in flight"),
                ))
            })
        }
        methods::SAMPLING_CREATE_MESSAGE => match handlers.sampling {
            Some(h) => match params::<CreateMessageRequestParams>(&request) {
                Ok(p) => Box::pin(async move { answer(h.create_message(p, context).await) }),
                Err(e) => Box::pin(async move { Err(e) }),
            },
            None => Box::pin(async move { Err(not_found(&method)) }),
        },
        methods::ELICITATION_CREATE => match handlers.elicitation {
            Some(h) => match params::<ElicitRequestParams>(&request) {
                Ok(ElicitRequestParams::Url(_)) if !url_declared => {
                    Box::pin(async move { Err(url_mode_undeclared()) })
                }
                Ok(p) => Box::pin(async move {
                    let result = h
                        .elicit(p.clone(), context)
                        .await
                        .map(|r| fill_defaults(&p, r));
                    answer(result)
                }),
                Err(e) => Box::pin(async move { Err(e) }),
            },
            None => Box::pin(async move { Err(not_found(&method)) }),
        },
        _ => Box::pin(async move { Err(not_found(&method)) }),
    }
}
