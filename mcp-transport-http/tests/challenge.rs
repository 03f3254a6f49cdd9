//! An authorization answered through a 401 has the authorizer's time, not
//! the era probe's: the real client connecting over this transport, with a
//! header provider whose `on_challenge` (a person at a browser) takes far
//! longer than the probe timeout. An HTTP client in the test plays the
//! server, on tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use http_body_util::{BodyExt, Full};
use mcp_transport_http::{
    AuthChallenge, BoxError, HeaderProvider, HttpService, HttpTransportBuilder, RequestBody,
    ResponseBody,
};
use serde_json::{Value, json};

/// How long the person takes to authorize.
const AUTHORIZING: Duration = Duration::from_secs(120);
/// The client's probe timeout, far shorter.
const PROBE: Duration = Duration::from_secs(2);

fn body(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// A legacy server behind bearer authorization: 401 without the token;
/// with it, `server/discover` is no method, `initialize` answers,
/// notifications get 202 and the GET stream 405.
fn protected_server() -> HttpService {
    HttpService::new(tower::service_fn(
        |request: http::Request<RequestBody>| async move {
            if request.headers().get(AUTHORIZATION).is_none() {
                return Ok::<_, BoxError>(
                    http::Response::builder()
                        .status(401)
                        .header("www-authenticate", r#"Bearer realm="mcp""#)
                        .body(body(Bytes::new()))
                        .unwrap(),
                );
            }
            if request.method() == http::Method::GET {
                return Ok(http::Response::builder()
                    .status(405)
                    .body(body(Bytes::new()))
                    .unwrap());
            }
            let bytes = request.into_body().collect().await?.to_bytes();
            let message: Value = serde_json::from_slice(&bytes)?;
            let answer = match message["method"].as_str() {
                _ if message.get("id").is_none() => {
                    return Ok(http::Response::builder()
                        .status(202)
                        .body(body(Bytes::new()))
                        .unwrap());
                }
                Some("initialize") => json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "x", "version": "1"}}}),
                Some("server/discover") => json!({"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32601, "message": "Method not found"}}),
                _ => json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
            };
            Ok(http::Response::builder()
                .header("content-type", "application/json")
                .body(body(answer.to_string()))
                .unwrap())
        },
    ))
}

/// A token obtained only through a challenge, after [`AUTHORIZING`] (a
/// person's time: the clock is paused, so it passes at once).
#[derive(Default)]
struct Authorizing {
    token: Arc<AtomicBool>,
}

impl HeaderProvider for Authorizing {
    fn headers(
        &self,
        _request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
        let mut headers = HeaderMap::new();
        if self.token.load(Ordering::SeqCst) {
            headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        }
        Box::pin(async move { Ok(headers) })
    }

    fn on_challenge(&self, _challenge: &AuthChallenge) -> BoxFuture<'static, bool> {
        let token = self.token.clone();
        Box::pin(async move {
            tokio::time::sleep(AUTHORIZING).await;
            token.store(true, Ordering::SeqCst);
            true
        })
    }
}

#[tokio::test(start_paused = true)]
async fn an_authorization_through_a_401_outlasts_the_probe_timeout() {
    let provider = Arc::new(Authorizing::default());
    let start = tokio::time::Instant::now();
    let client = tokio::time::timeout(
        AUTHORIZING * 5,
        mcp_client::Client::builder().probe_timeout(PROBE).connect(
            HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
                .service(protected_server())
                .header_provider(provider),
        ),
    )
    .await
    .expect("the connect ends")
    .expect("the connect waits for the authorization, not the probe timeout");
    assert!(start.elapsed() >= AUTHORIZING);
    client.close().await;
}
