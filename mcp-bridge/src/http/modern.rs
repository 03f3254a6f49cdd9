//! 2026-07-28 clients over HTTP: one POST per message, no session. Their
//! requests share one connection to the server, each under an id of the
//! bridge's own (two clients may both send id 1), and what the server
//! says during one goes back on that request's answer as SSE.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use mcp_protocol::error_codes::{
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
};
use mcp_protocol::meta::{PROGRESS_TOKEN, SUBSCRIPTION_ID};
use mcp_protocol::methods::{
    NOTIFICATION_CANCELLED, NOTIFICATION_MESSAGE, NOTIFICATION_PROGRESS, TOOLS_CALL, TOOLS_LIST,
};
use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response as RpcResponse,
};
use mcp_transport::{RequestOptions, ResponseFuture, TransportError};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::headers::{check_headers, check_params, param_headers_sent};
use super::reply::{self, Body};
use crate::link::{Downstream, Link, LinkSettings};
use crate::relay::{relay_to_server, upstream_handlers};

/// How long an answer is waited for before the reply becomes an SSE
/// stream: an answer that comes sooner goes as JSON, with the status the
/// spec gives its error.
const JSON_WAIT: Duration = Duration::from_millis(100);
/// What the server says during a call, queued for a client that reads
/// its stream slower than that.
const SAID_BOUND: usize = 1024;
/// Pages of `tools/list` read to learn a tool's `x-mcp-header`s.
const SCHEMA_PAGES: usize = 16;

/// The 2026-07-28 side of the bridge.
#[derive(Default)]
pub(crate) struct Modern {
    link: tokio::sync::Mutex<Option<Arc<Link>>>,
    client: Arc<Calls>,
    next: AtomicI64,
}

/// The calls being relayed, by the bridge's id.
#[derive(Default)]
struct Calls(Mutex<HashMap<RequestId, Call>>);

struct Call {
    /// What the server says during it, as JSON.
    said: mpsc::Sender<Vec<u8>>,
    /// The client's id.
    id: RequestId,
    /// The client's progress token, where the bridge put its own.
    token: Option<Value>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Modern {
    pub(crate) async fn post(
        &self,
        settings: &LinkSettings,
        head: &http::request::Parts,
        mut messages: Vec<Message>,
    ) -> Response<Body> {
        if messages.len() != 1 {
            let why = "a request without a session is 2026-07-28, one message per POST (a legacy client starts with initialize)";
            return reply::rpc_error(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, why);
        }
        let message = messages.remove(0);
        let id = match &message {
            Message::Request(r) => r.id.to_value(),
            _ => Value::Null,
        };
        if let Err(why) = check_headers(&head.headers, &message) {
            return reply::rpc_error(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, &why);
        }
        let link = match self.link(settings).await {
            Ok(link) => link,
            Err(e) => {
                let why = format!("the bridge could not reach the server: {e}");
                return reply::rpc_error(StatusCode::BAD_GATEWAY, id, INTERNAL_ERROR, &why);
            }
        };
        match message {
            Message::Request(request) => self.request(&link, head, request).await,
            Message::Notification(notification) if names_a_call(&notification.method) => {
                // The server knows the call under the bridge's id, and the
                // client cannot be told from another: its id names nothing.
                let why = format!(
                    "{} names a request, which over HTTP a 2026-07-28 client does not do: \
                     it cancels a call by closing the call's stream",
                    notification.method
                );
                reply::rpc_error(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, &why)
            }
            Message::Notification(notification) => {
                if let Some(upstream) = link.upstream()
                    && let Err(e) = upstream.notify(notification)
                {
                    tracing::debug!(error = %e, "a notification for the server was not sent");
                }
                reply::status(StatusCode::ACCEPTED)
            }
            _ => {
                let why = "a 2026-07-28 client sends no JSON-RPC answers";
                reply::rpc_error(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, why)
            }
        }
    }

    async fn request(
        &self,
        link: &Arc<Link>,
        head: &http::request::Parts,
        mut request: Request,
    ) -> Response<Body> {
        let id = request.id.clone();
        if request.method == TOOLS_CALL {
            let schema = self.schema(link, &request).await;
            if let Err(why) = check_params(&head.headers, request.params.as_ref(), schema.as_ref())
            {
                return reply::rpc_error(
                    StatusCode::BAD_REQUEST,
                    id.to_value(),
                    HEADER_MISMATCH,
                    &why,
                );
            }
        }
        let ours = RequestId::Number(self.next.fetch_add(1, Ordering::Relaxed) + 1);
        request.id = ours.clone();
        let token = swap_token(&mut request, &ours);
        let (said, mut heard) = mpsc::channel(SAID_BOUND);
        lock(&self.client.0).insert(
            ours.clone(),
            Call {
                said,
                id: id.clone(),
                token,
            },
        );
        let done = Done(self.client.clone(), ours.clone());
        // The `Mcp-Param-*` headers mirror a call's arguments (checked
        // above); on any other request they mirror nothing.
        let headers = if request.method == TOOLS_CALL {
            param_headers_sent(&head.headers)
        } else {
            Vec::new()
        };
        let mut answer: BoxFuture<'static, Result<Value, ErrorObject>> =
            Box::pin(relay_to_server(link.clone(), request, headers));
        let first = tokio::select! {
            result = &mut answer => {
                let (status, json) = final_answer(&id, &ours, result);
                return reply::json(status, json);
            }
            first = heard.recv() => first,
            () = tokio::time::sleep(JSON_WAIT) => None,
        };
        sse(first, heard, answer, id, ours, done)
    }

    /// The shared connection to the server, made (again) when there is
    /// none alive.
    async fn link(&self, settings: &LinkSettings) -> Result<Arc<Link>, TransportError> {
        let mut link = self.link.lock().await;
        if let Some(alive) = link
            .as_ref()
            .filter(|l| l.upstream().is_some_and(|u| u.is_alive()))
        {
            return Ok(alive.clone());
        }
        let fresh = settings.connect(upstream_handlers).await?;
        fresh.set_modern();
        fresh.set_downstream(self.client.clone());
        *link = Some(fresh.clone());
        Ok(fresh)
    }

    /// The input schema of the tool a `tools/call` names, listing the
    /// server's tools when the bridge has not seen it.
    async fn schema(&self, link: &Arc<Link>, call: &Request) -> Option<Value> {
        let name = call.params.as_ref()?.get("name")?.as_str()?.to_owned();
        if let Some(known) = link.schemas.get(&name) {
            return Some(known);
        }
        let upstream = link.upstream()?;
        let mut meta = call
            .params
            .as_ref()?
            .get("_meta")
            .cloned()
            .unwrap_or(json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.remove(PROGRESS_TOKEN);
        }
        let mut cursor: Option<Value> = None;
        for _ in 0..SCHEMA_PAGES {
            let mut params = json!({ "_meta": meta });
            if let Some(cursor) = cursor.take() {
                params["cursor"] = cursor;
            }
            let ours = RequestId::Number(self.next.fetch_add(1, Ordering::Relaxed) + 1);
            let options = RequestOptions::new().timeout(Duration::from_secs(10));
            let list = upstream
                .request(Request::new(ours, TOOLS_LIST, Some(params)), options)
                .await
                .ok()?;
            link.schemas.learn(&list);
            cursor = list.get("nextCursor").filter(|c| !c.is_null()).cloned();
            if cursor.is_none() {
                break;
            }
        }
        link.schemas.get(&name)
    }

    /// Closes the connection to the server.
    pub(crate) async fn close(&self) {
        let link = self.link.lock().await.take();
        if let Some(upstream) = link.and_then(|l| l.upstream()) {
            upstream.close().await;
        }
    }
}

/// A notification that names one of the client's requests (or its
/// progress token).
fn names_a_call(method: &str) -> bool {
    method == NOTIFICATION_CANCELLED || method == NOTIFICATION_PROGRESS
}

/// Progress and log lines, which a client reading too slowly can miss.
fn droppable(method: &str) -> bool {
    method == NOTIFICATION_PROGRESS || method == NOTIFICATION_MESSAGE
}

/// Puts the bridge's own progress token in place of the client's (two
/// clients may use the same), and returns the client's.
fn swap_token(request: &mut Request, ours: &RequestId) -> Option<Value> {
    let meta = request.params.as_mut()?.get_mut("_meta")?.as_object_mut()?;
    let theirs = meta.get(PROGRESS_TOKEN)?.clone();
    meta.insert(PROGRESS_TOKEN.to_owned(), ours.to_value());
    Some(theirs)
}

/// Forgets a call when its answer is done with (sent, or the client left).
struct Done(Arc<Calls>, RequestId);

impl Drop for Done {
    fn drop(&mut self) {
        lock(&(self.0).0).remove(&self.1);
    }
}

/// The HTTP status the spec gives a JSON-RPC error of a 2026-07-28 reply.
fn status_of(code: i64) -> StatusCode {
    match code {
        HEADER_MISMATCH
        | MISSING_REQUIRED_CLIENT_CAPABILITY
        | UNSUPPORTED_PROTOCOL_VERSION
        | INVALID_PARAMS => StatusCode::BAD_REQUEST,
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The answer to the client, under its own id, with its status.
fn final_answer(
    id: &RequestId,
    ours: &RequestId,
    result: Result<Value, ErrorObject>,
) -> (StatusCode, Vec<u8>) {
    let (status, message) = match result {
        Ok(mut result) => {
            restore_subscription(&mut result, ours, id);
            (
                StatusCode::OK,
                Message::Response(RpcResponse {
                    id: id.clone(),
                    result,
                }),
            )
        }
        Err(error) => (
            status_of(error.code),
            Message::Error(ErrorResponse {
                id: Some(id.clone()),
                error,
            }),
        ),
    };
    let json = serde_json::to_vec(&message).unwrap_or_else(|_| b"{}".to_vec());
    (status, json)
}

/// `_meta`'s subscription id, the bridge's, back to the client's.
fn restore_subscription(value: &mut Value, ours: &RequestId, theirs: &RequestId) {
    if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut)
        && meta.get(SUBSCRIPTION_ID) == Some(&ours.to_value())
    {
        meta.insert(SUBSCRIPTION_ID.to_owned(), theirs.to_value());
    }
}

struct Streaming {
    first: Option<Vec<u8>>,
    heard: mpsc::Receiver<Vec<u8>>,
    answer: Option<BoxFuture<'static, Result<Value, ErrorObject>>>,
    id: RequestId,
    ours: RequestId,
    _done: Done,
}

/// An SSE reply: what the server says during the call, then its answer.
/// Dropping it (the client closed the stream) drops the call, which
/// cancels it on the server.
fn sse(
    first: Option<Vec<u8>>,
    heard: mpsc::Receiver<Vec<u8>>,
    answer: BoxFuture<'static, Result<Value, ErrorObject>>,
    id: RequestId,
    ours: RequestId,
    done: Done,
) -> Response<Body> {
    let state = Streaming {
        first,
        heard,
        answer: Some(answer),
        id,
        ours,
        _done: done,
    };
    let stream = futures::stream::unfold(state, |mut s| async move {
        if let Some(json) = s.first.take() {
            return Some((Ok(Frame::data(event(&json))), s));
        }
        let answer = s.answer.as_mut()?;
        tokio::select! {
            biased;
            Some(json) = s.heard.recv() => Some((Ok(Frame::data(event(&json))), s)),
            result = answer => {
                // What was said before the answer goes first.
                let mut frames = Vec::new();
                while let Ok(json) = s.heard.try_recv() {
                    frames.extend_from_slice(&event(&json));
                }
                let (_, json) = final_answer(&s.id, &s.ours, result);
                frames.extend_from_slice(&event(&json));
                s.answer = None;
                Some((Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from(frames))), s))
            }
        }
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    reply::sse_headers(&mut response);
    response
}

fn event(json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + 8);
    frame.extend_from_slice(b"data: ");
    frame.extend_from_slice(json);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

impl Calls {
    fn deliver(&self, mut notification: Notification, during: Option<&RequestId>) {
        let params = notification.params.get_or_insert_with(|| json!({}));
        let ours = during
            .cloned()
            .or_else(|| params.get("progressToken").and_then(RequestId::from_value));
        let calls = lock(&self.0);
        let Some((ours, call)) = ours.as_ref().and_then(|o| calls.get(o).map(|c| (o, c))) else {
            tracing::debug!(method = %notification.method, "a notification for no 2026-07-28 call in flight was dropped");
            return;
        };
        if let (Some(theirs), Some(token)) = (&call.token, params.get_mut("progressToken"))
            && *token == ours.to_value()
        {
            *token = theirs.clone();
        }
        restore_subscription(params, ours, &call.id);
        let method = notification.method.clone();
        let Ok(json) = serde_json::to_vec(&Message::Notification(notification)) else {
            return;
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = call.said.try_send(json) {
            // The client does not read its stream: what it would read
            // waits no longer than the bound.
            if droppable(&method) {
                tracing::debug!(%method, "dropped a notification for a client that reads too slowly");
            } else {
                tracing::warn!(%method, bound = SAID_BOUND, "dropped a notification for a 2026-07-28 client that does not read its stream");
            }
        }
    }
}

impl Downstream for Calls {
    fn notify(
        &self,
        notification: Notification,
        during: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        self.deliver(notification, during);
        Ok(())
    }

    fn request(&self, request: Request, _: Option<&RequestId>) -> ResponseFuture {
        let refused = TransportError::Rpc {
            code: METHOD_NOT_FOUND,
            message: format!(
                "a 2026-07-28 client takes no requests ({}); the server should return input_required",
                request.method
            ),
            data: None,
        };
        Box::pin(std::future::ready(Err(refused)))
    }
}
