//! Recording the headers of every HTTP request the transport sends.

use std::sync::Arc;

use futures::future::BoxFuture;
use http::HeaderMap;
use mcp_transport::record::Recorder;

use crate::{BoxError, HeaderProvider};

/// A [`HeaderProvider`] that writes each HTTP request's method, URI and
/// headers (the configured ones, the transport's own `Mcp-*` ones, and
/// those of the provider it wraps) to a [`Recorder`], redacted, and
/// otherwise changes nothing. A header whose value is marked sensitive
/// ([`http::HeaderValue::set_sensitive`]) is redacted whatever its name.
///
/// ```
/// use std::sync::Arc;
/// use mcp_transport::record::Recorder;
/// use mcp_transport_http::{HttpTransportBuilder, RecordingHeaders};
///
/// let recorder = Recorder::in_memory();
/// let builder = HttpTransportBuilder::new("http://127.0.0.1:8000/mcp")
///     .header_provider(Arc::new(RecordingHeaders::new(recorder.clone())));
/// let connector = recorder.connector(builder);
/// # let _ = connector;
/// ```
pub struct RecordingHeaders {
    recorder: Recorder,
    inner: Option<Arc<dyn HeaderProvider>>,
}

impl RecordingHeaders {
    /// Records to `recorder`, adding no headers.
    pub fn new(recorder: Recorder) -> Self {
        RecordingHeaders {
            recorder,
            inner: None,
        }
    }

    /// Also asks `provider` for headers (an authorization provider, say),
    /// and records what it added, redacted.
    pub fn wrapping(mut self, provider: Arc<dyn HeaderProvider>) -> Self {
        self.inner = Some(provider);
        self
    }
}

impl HeaderProvider for RecordingHeaders {
    fn headers(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
        let recorder = self.recorder.clone();
        let method = request.method.to_string();
        let uri = request.uri.to_string();
        let mut sent = request.headers.clone();
        let added = self.inner.as_ref().map(|p| p.headers(request));
        Box::pin(async move {
            let added = match added {
                Some(future) => future.await?,
                None => HeaderMap::new(),
            };
            for (name, value) in &added {
                sent.insert(name, value.clone());
            }
            for (name, value) in &sent {
                if value.is_sensitive() {
                    recorder.redact_header(name.as_str());
                }
            }
            let pairs: Vec<(&str, String)> = sent
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            recorder.http_request(&method, &uri, pairs.iter().map(|(n, v)| (*n, v.as_str())));
            Ok(added)
        })
    }

    // A wrapped provider (OAuth, say) still answers the server's
    // challenges: recording must not change what is sent.
    fn on_challenge(&self, challenge: &crate::AuthChallenge) -> BoxFuture<'static, bool> {
        match &self.inner {
            Some(inner) => inner.on_challenge(challenge),
            None => Box::pin(async { false }),
        }
    }

    fn on_response(&self, uri: &http::Uri, status: http::StatusCode, headers: &HeaderMap) {
        if let Some(inner) = &self.inner {
            inner.on_response(uri, status, headers);
        }
    }
}

impl std::fmt::Debug for RecordingHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingHeaders")
            .field("wrapping", &self.inner.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sensitive_and_credential_headers_are_redacted() {
        let recorder = Recorder::in_memory();
        let provider = RecordingHeaders::new(recorder.clone());
        let mut secret = http::HeaderValue::from_static("k-0123456789");
        secret.set_sensitive(true);
        let request = http::Request::post("http://127.0.0.1:1/mcp")
            .header("authorization", "Bearer t-0123456789")
            .header("x-session-key", secret)
            .header("mcp-method", "tools/list")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert!(provider.headers(&parts).await.unwrap().is_empty());
        let text = recorder.text();
        assert!(!text.contains("0123456789"), "{text}");
        assert!(text.contains(r#""mcp-method":"tools/list""#), "{text}");
    }
}
