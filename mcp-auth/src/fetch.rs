//! The flow's own HTTP requests, sent through the transport's
//! [`HttpService`]: no bearer token on any of them, no redirect followed
//! (an authorization server's 302 is read, never followed), every wait
//! bounded, every body size bounded.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use mcp_transport_http::{HttpService, RequestBody};
use serde::de::DeserializeOwned;

use crate::AuthError;
use crate::address::AddressPolicy;

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
        serde_json::from_slice(&self.body)
            .map_err(|e| AuthError::Protocol(format!("{what} is not the JSON expected: {e}")))
    }
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

    /// Runs `request` (built by `oauth2`) through the service.
    pub(crate) async fn oauth2(
        &self,
        request: oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, FetchError> {
        let (parts, body) = request.into_parts();
        let answer = self
            .send(http::Request::from_parts(parts, Bytes::from(body)))
            .await
            .map_err(|e| FetchError(e.to_string()))?;
        let mut response = http::Response::new(answer.body.to_vec());
        *response.status_mut() = answer.status;
        *response.headers_mut() = answer.headers;
        Ok(response)
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

/// `scheme://host[:port]` of a URL, as the transport compares origins.
pub(crate) fn origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    Some(parsed.origin().ascii_serialization())
}

/// An HTTP failure as `oauth2` sees it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FetchError(String);
