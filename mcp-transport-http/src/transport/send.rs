//! One HTTP request out: the headers of its era and session. Redirects and
//! authorization are layers of the service it goes through (see
//! `crate::authorization`).

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use mcp_protocol::headers::encode_header_value;
use mcp_protocol::{Message, ProtocolVersion};
use mcp_transport::{SharedMeta, Transport, TransportError};
use tokio::sync::oneshot;

use crate::authorization::PauseTimers;
use crate::failure::classify;
use crate::service::{RequestBody, ResponseBody};

use super::{
    ACCEPT_BOTH, METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER, Shared,
    mcp_name, message_meta, modern_version_of,
};

impl Shared {
    /// The headers of one message's POST, and the epoch of the session
    /// they carry, if any.
    pub(super) fn message_headers(
        &self,
        message: &Message,
        shared: Option<&SharedMeta>,
        extra: &[(String, String)],
    ) -> (HeaderMap, Option<u64>) {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut state = self.state();
        let modern = modern_version_of(message_meta(message), shared)
            .inspect(|v| state.modern_version = Some(v.clone()));
        let legacy = state.session_id.is_some() || state.legacy_version.is_some();
        let modern = modern.or_else(|| {
            // A notification without `_meta` follows the connection's era.
            (!legacy && matches!(message, Message::Notification(_)))
                .then(|| state.modern_version.clone())
                .flatten()
        });
        let mut sent_under = None;
        if let Some(version) = modern {
            insert_version(&mut headers, &version);
            if let Some(method) = message.method() {
                insert(&mut headers, METHOD_HEADER, &encode_header_value(method));
            }
            if let Some(name) = mcp_name(message) {
                insert(&mut headers, NAME_HEADER, &encode_header_value(name));
            }
        } else {
            if let Some(version) = &state.legacy_version
                && *version >= ProtocolVersion::V2025_06_18
            {
                insert_version(&mut headers, version);
            }
            if let Some(value) = state.session_header() {
                headers.insert(HeaderName::from_static(SESSION_ID_HEADER), value);
                sent_under = Some(state.session_epoch);
            }
        }
        drop(state);
        for (name, value) in extra {
            match (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                (Ok(n), Ok(v)) => {
                    headers.append(n, v);
                }
                _ => {
                    tracing::warn!(%name, "skipped an extra header that is not a valid HTTP header")
                }
            }
        }
        (headers, sent_under)
    }

    pub(super) fn legacy_headers(&self, accept: &'static str) -> HeaderMap {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let state = self.state();
        if let Some(session) = &state.session_id {
            insert(&mut headers, SESSION_ID_HEADER, session);
        }
        if let Some(v) = &state.legacy_version
            && *v >= ProtocolVersion::V2025_06_18
        {
            insert(&mut headers, PROTOCOL_VERSION_HEADER, v.as_str());
        }
        headers
    }

    /// POSTs a request (a Streamable HTTP wire's, modern or
    /// session-based) to the server's URL, the shared `_meta` spliced into
    /// its body as the text made once.
    pub(super) async fn post_request(
        &self,
        message: &Message,
        shared: Option<&SharedMeta>,
        headers: HeaderMap,
        taken: oneshot::Sender<bool>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let body = match (message, shared) {
            (Message::Request(request), Some(s)) => {
                let mut body = Vec::new();
                s.encode_request_line(request, &mut body);
                // A body, not a line.
                body.pop();
                body
            }
            _ => serde_json::to_vec(message).unwrap_or_default(),
        };
        self.send(Method::POST, headers, Bytes::from(body), Some(taken))
            .await
    }

    /// Sends one HTTP request to the server's URL: see [`send_to`](Self::send_to).
    pub(super) async fn send(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
        taken: Option<oneshot::Sender<bool>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let url = self.config.url.clone();
        self.send_to(url, method, headers, body, taken).await
    }

    /// Sends one HTTP request through the service, whose layers follow
    /// same-origin redirects and add the header provider's headers.
    pub(super) async fn send_to(
        &self,
        url: Uri,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
        taken: Option<oneshot::Sender<bool>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        // Once the transport is closed only the session's `DELETE` leaves:
        // a request, a resumption or a reopened stream would go without
        // the session, which closing forgot.
        if method != Method::DELETE && !self.engine.is_alive() {
            return Err(TransportError::Closed);
        }
        let body = match taken {
            Some(t) => RequestBody::signalling(body, t),
            None => RequestBody::new(body),
        };
        let mut request = http::Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = url;
        *request.headers_mut() = headers;
        if self.config.authorized {
            // A challenge's answer holds this connection's timers still.
            request
                .extensions_mut()
                .insert(PauseTimers(self.engine.clone()));
        }
        self.config
            .service
            .call(request)
            .await
            .map_err(|e| classify(&e))
    }
}

/// `MCP-Protocol-Version`: a known revision's static string, no copy.
fn insert_version(headers: &mut HeaderMap, version: &ProtocolVersion) {
    match version.as_static_str() {
        Some(v) => {
            headers.insert(
                HeaderName::from_static(PROTOCOL_VERSION_HEADER),
                HeaderValue::from_static(v),
            );
        }
        None => insert(headers, PROTOCOL_VERSION_HEADER, version.as_str()),
    }
}

pub(super) fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) {
    match HeaderValue::try_from(value) {
        Ok(v) => {
            headers.insert(HeaderName::from_static(name), v);
        }
        Err(_) => tracing::warn!(
            header = name,
            "skipped a header value that HTTP cannot carry"
        ),
    }
}
