//! One HTTP request out: the headers of its era and session, the header
//! provider's additions, same-origin redirects and authorization challenges.

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use mcp_protocol::headers::encode_header_value;
use mcp_protocol::{Message, ProtocolVersion};
use mcp_transport::{SharedMeta, Transport, TransportError};
use tokio::sync::oneshot;

use crate::service::{RequestBody, ResponseBody, classify};
use crate::url::{Origin, resolve};

use super::provider::{AuthChallenge, is_dpop_nonce_challenge};
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

    /// Sends one HTTP request to the server's URL: see [`send_to`](Self::send_to).
    pub(super) async fn send(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        taken: Option<oneshot::Sender<bool>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let url = self.config.url.clone();
        self.send_to(url, method, headers, body, taken).await
    }

    /// Sends one HTTP request, following same-origin 307/308 redirects
    /// only, adding the provider's headers at each hop.
    pub(super) async fn send_to(
        &self,
        url: Uri,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        mut taken: Option<oneshot::Sender<bool>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        // Once the transport is closed only the session's `DELETE` leaves:
        // a request, a resumption or a reopened stream would go without
        // the session, which closing forgot.
        if method != Method::DELETE && !self.engine.is_alive() {
            return Err(TransportError::Closed);
        }
        let mut uri = url;
        let mut hops = 0;
        let mut challenged = false;
        let mut nonce_challenged = false;
        loop {
            let body = match taken.take() {
                Some(t) => RequestBody::signalling(body.clone(), t),
                None => RequestBody::new(body.clone()),
            };
            let mut request = http::Request::new(body);
            *request.method_mut() = method.clone();
            *request.uri_mut() = uri.clone();
            *request.headers_mut() = headers.clone();
            if let Some(provider) = &self.config.provider {
                let (mut parts, body) = request.into_parts();
                let added =
                    provider
                        .headers(&parts)
                        .await
                        .map_err(|e| TransportError::Credentials {
                            cause: format!(
                                "the header provider failed: {}",
                                crate::service::chain(e.as_ref())
                            ),
                        })?;
                let mut last = None;
                for (name, value) in added {
                    let name = match name {
                        Some(n) => {
                            last = Some(n.clone());
                            n
                        }
                        None => match &last {
                            Some(n) => n.clone(),
                            None => continue,
                        },
                    };
                    parts.headers.insert(name, value);
                }
                request = http::Request::from_parts(parts, body);
            }
            let response = self
                .config
                .service
                .call(request)
                .await
                .map_err(|e| classify(&e))?;
            let status = response.status();
            if let Some(provider) = &self.config.provider {
                provider.on_response(&uri, status, response.headers());
            }
            let www_authenticate = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // A nonce challenge has its own try (see `on_challenge`).
            let for_nonce = status == StatusCode::UNAUTHORIZED
                && www_authenticate
                    .as_deref()
                    .is_some_and(is_dpop_nonce_challenge);
            let spent = if for_nonce {
                &mut nonce_challenged
            } else {
                &mut challenged
            };
            if (status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN)
                && !*spent
                && let Some(provider) = &self.config.provider
            {
                *spent = true;
                let challenge = AuthChallenge {
                    status: status.as_u16(),
                    www_authenticate,
                    method: method.clone(),
                    uri: uri.clone(),
                    headers: response.headers().clone(),
                };
                // An authorization may need a person (a browser, a
                // consent page): it has the authorizer's own bound, not
                // the requests'. Their timers stand still meanwhile, as
                // while a person answers a server's elicitation.
                let answered = {
                    let _pause = self.engine.pause_timers();
                    provider.on_challenge(&challenge).await
                };
                if answered {
                    tracing::debug!(status = status.as_u16(), "sending again after a challenge");
                    continue;
                }
                return Ok(response);
            }
            if !status.is_redirection() {
                return Ok(response);
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let refuse = |reason: String| TransportError::RedirectRefused {
                status: status.as_u16(),
                location: location.clone(),
                reason,
            };
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT
            {
                return Err(refuse(
                    "only 307 and 308 keep the method and body, and only they are followed".into(),
                ));
            }
            let Some(next) = resolve(&uri, &location) else {
                return Err(refuse("its Location is not a valid URL".into()));
            };
            if Origin::of(&next).as_ref() != Some(&self.config.origin) {
                tracing::warn!(
                    location = %mcp_transport::record::redact_url(&location.to_string()),
                    "refused a redirect to another origin"
                );
                return Err(refuse(
                    "it leads to another origin, where nothing was sent".into(),
                ));
            }
            hops += 1;
            if hops > self.config.max_redirects {
                return Err(refuse(format!(
                    "more than {} redirects",
                    self.config.max_redirects
                )));
            }
            tracing::debug!(%next, "following a same-origin redirect");
            uri = next;
        }
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
