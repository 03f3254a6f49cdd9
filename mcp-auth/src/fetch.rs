//! The flow's own HTTP requests, sent through the transport's
//! [`HttpService`]: no bearer token on any of them, no redirect followed
//! (an authorization server's 302 is read, never followed), every wait
//! bounded, every body size bounded.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use mcp_transport_http::{HttpService, RequestBody};
use serde::de::DeserializeOwned;

use crate::AuthError;
use crate::address::AddressPolicy;
use crate::dpop::{Dpop, is_use_nonce_error};

/// The most of a metadata or token body that is read.
const BODY_LIMIT: usize = 1024 * 1024;

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    pub(crate) fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, AuthError> {
        read_json(&self.body, what)
    }
}

/// A body read as the JSON document `what` names.
pub(crate) fn read_json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, AuthError> {
    serde_json::from_slice(body)
        .map_err(|e| AuthError::Protocol(format!("{what} is not the JSON expected: {e}")))
}

/// Sends requests with a bound on each.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher {
    pub(crate) service: HttpService,
    pub(crate) timeout: Duration,
    /// Whether `http` is allowed for loopback hosts only (always), or
    /// for any host (tests of the library's users, never the default).
    pub(crate) insecure_http: bool,
    /// Which hosts may be reached (all, by default).
    pub(crate) addresses: AddressPolicy,
    /// Set for token requests that carry a DPoP proof.
    pub(crate) dpop: Option<Arc<Dpop>>,
}

impl Fetcher {
    /// Sends one request, checking the URL first.
    pub(crate) async fn send(&self, request: http::Request<Bytes>) -> Result<Answer, AuthError> {
        let url = request.uri().to_string();
        self.check_url(&url)?;
        self.addresses.check(&url).await?;
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, RequestBody::new(body));
        let exchange = async {
            let response = self
                .service
                .call(request)
                .await
                .map_err(|e| AuthError::Http(format!("{url}: {e}")))?;
            let (parts, mut body) = response.into_parts();
            let mut data = Vec::new();
            while let Some(frame) = body.frame().await {
                let frame =
                    frame.map_err(|e| AuthError::Http(format!("{url}: reading the body: {e}")))?;
                if let Ok(chunk) = frame.into_data() {
                    data.extend_from_slice(&chunk);
                    if data.len() > BODY_LIMIT {
                        return Err(AuthError::Protocol(format!(
                            "{url}: the body is over {BODY_LIMIT} bytes"
                        )));
                    }
                }
            }
            let body = Bytes::from(data);
            Ok(Answer {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| AuthError::Http(format!("{url}: no answer within {:?}", self.timeout)))?
    }

    /// GET with `Accept: application/json`.
    pub(crate) async fn get(&self, url: &str) -> Result<Answer, AuthError> {
        let request = http::Request::builder()
            .method(Method::GET)
            .uri(url)
            .header(header::ACCEPT, "application/json")
            .body(Bytes::new())
            .map_err(|e| AuthError::Protocol(format!("{url:?} is not a usable URL: {e}")))?;
        self.send(request).await
    }

    /// POST a JSON body.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<Answer, AuthError> {
        let request = http::Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(header::ACCEPT, "application/json")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Bytes::from(body.to_string()))
            .map_err(|e| AuthError::Protocol(format!("{url:?} is not a usable URL: {e}")))?;
        self.send(request).await
    }

    /// A URL a server handed out may be used only over https, or http on
    /// a loopback host.
    pub(crate) fn check_url(&self, url: &str) -> Result<(), AuthError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| AuthError::Protocol(format!("{url:?} is not a URL: {e}")))?;
        match parsed.scheme() {
            "https" => Ok(()),
            "http" if self.insecure_http || is_loopback(&parsed) => Ok(()),
            _ => Err(AuthError::Refused(format!(
                "{url} is neither https nor http on a loopback host"
            ))),
        }
    }

    /// The same fetcher, with DPoP proofs on its token requests or not.
    pub(crate) fn with_dpop(&self, dpop: Option<Arc<Dpop>>) -> Fetcher {
        Fetcher {
            dpop,
            ..self.clone()
        }
    }

    /// Runs `request` (built by `oauth2`: a token request) through the
    /// service, as [`token_request`](Self::token_request) does.
    pub(crate) async fn oauth2(
        &self,
        request: oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, FetchError> {
        let (parts, body) = request.into_parts();
        let url = parts.uri.to_string();
        let request = http::Request::from_parts(parts, Bytes::from(body));
        let answer = self.token_request(request).await.map_err(|e| {
            FetchError::failed(match e {
                AuthError::Http(cause) => {
                    format!("the token endpoint could not be reached: {cause}")
                }
                other => other.to_string(),
            })
        })?;
        let status = answer.status;
        // A server error, or "later", is no answer to the grant, whatever
        // its body says: it reads as a failed request, not as a refusal.
        if status.is_server_error()
            || status == StatusCode::REQUEST_TIMEOUT
            || status == StatusCode::TOO_MANY_REQUESTS
        {
            return Err(FetchError::failed(format!(
                "the token endpoint {url} answered {status}"
            )));
        }
        // Any other 4xx refuses the grant, in OAuth's words or not (a
        // proxy's HTML page, an empty body): a refusal all the same.
        if status.is_client_error() && !is_oauth_error(&answer.body) {
            return Err(FetchError {
                message: format!(
                    "the token endpoint {url} answered {status} with no OAuth error in its body"
                ),
                refused: true,
            });
        }
        let mut response = http::Response::new(answer.body.to_vec());
        *response.status_mut() = answer.status;
        *response.headers_mut() = answer.headers;
        Ok(response)
    }

    /// Sends a token request, whichever grant built it. With DPoP, each
    /// try carries a fresh proof; an answer's `DPoP-Nonce` is kept, and a
    /// `use_dpop_nonce` refusal is tried once more with it (RFC 9449 §8).
    pub(crate) async fn token_request(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<Answer, AuthError> {
        let (parts, body) = request.into_parts();
        let url = parts.uri.to_string();
        let mut retried = false;
        loop {
            let mut request = http::Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.version_mut() = parts.version;
            *request.headers_mut() = parts.headers.clone();
            if let Some(dpop) = &self.dpop {
                let proof = dpop.proof(parts.method.as_str(), &url, None)?;
                let value = http::HeaderValue::from_str(&proof)
                    .map_err(|e| AuthError::Protocol(format!("a DPoP proof: {e}")))?;
                request.headers_mut().insert("dpop", value);
            }
            let answer = self.send(request).await?;
            if let Some(dpop) = &self.dpop {
                let nonce = dpop.observe(&url, &answer.headers);
                if nonce
                    && !retried
                    && answer.status == StatusCode::BAD_REQUEST
                    && is_use_nonce_error(&answer.body)
                {
                    tracing::debug!(%url, "the token endpoint wants a DPoP nonce; once more with it");
                    retried = true;
                    continue;
                }
            }
            return Ok(answer);
        }
    }
}

/// Whether the URL's host is `localhost` or a loopback address.
pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// An HTTP failure as `oauth2` sees it.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FetchError {
    pub(crate) message: String,
    /// A 4xx without an OAuth error body: the grant was refused.
    pub(crate) refused: bool,
}

impl FetchError {
    /// No answer to the grant (the endpoint unreachable, a 5xx, a 429).
    fn failed(message: String) -> FetchError {
        FetchError {
            message,
            refused: false,
        }
    }
}

/// Whether a body is an OAuth error response (RFC 6749 §5.2): JSON with
/// a string `error`.
pub(crate) fn is_oauth_error(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("error").is_some_and(serde_json::Value::is_string))
}
