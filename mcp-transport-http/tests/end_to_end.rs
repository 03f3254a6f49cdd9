//! The real client (`mcp-client`, era `Auto`) over this transport, against
//! the testkit's fake server of each era put behind a small HTTP front on
//! loopback: each POSTed message is a line to the fake; the fake's answers
//! go to their request's SSE stream, its notifications to the stream of the
//! request they belong to (progress token, subscription id) or the newest.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Response;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use mcp_client::Client;
use mcp_protocol::{Era, Message, RequestId};
use mcp_testkit::fake::{FakeConfig, serve_lines};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

type Body = BoxBody<Bytes, Infallible>;

struct Open {
    id: RequestId,
    token: Option<RequestId>,
    tx: mpsc::UnboundedSender<String>,
}

#[derive(Default)]
struct Front {
    open: Mutex<Vec<Open>>,
}

impl Front {
    fn route(&self, message: &Message) {
        let chunk = format!("event: message\ndata: {}\n\n", message.to_value());
        let mut open = self.open.lock().unwrap();
        let target = match message {
            Message::Response(r) => open.iter().position(|o| o.id == r.id),
            Message::Error(e) => {
                e.id.as_ref()
                    .and_then(|id| open.iter().position(|o| &o.id == id))
            }
            Message::Notification(n) => {
                let params = n.params.as_ref();
                let token = params
                    .and_then(|p| p.get("progressToken"))
                    .or_else(|| n.meta().and_then(|m| m.get("progressToken")))
                    .and_then(RequestId::from_value);
                let sub = n
                    .meta()
                    .and_then(|m| m.get("io.modelcontextprotocol/subscriptionId"))
                    .and_then(RequestId::from_value);
                open.iter()
                    .position(|o| {
                        (token.is_some() && o.token == token) || sub.as_ref() == Some(&o.id)
                    })
                    .or(open.len().checked_sub(1))
            }
            Message::Request(_) => open.len().checked_sub(1),
        };
        let Some(i) = target else { return };
        let _ = open[i].tx.send(chunk);
        if matches!(message, Message::Response(_) | Message::Error(_)) {
            // The answer ends its stream.
            open.remove(i);
        }
    }
}

/// Serves `config`'s fake over HTTP; returns the URL.
async fn http_fake(config: FakeConfig) -> String {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (their_read, their_write) = tokio::io::split(theirs);
    tokio::spawn(serve_lines(config, their_read, their_write));
    let (our_read, our_write) = tokio::io::split(ours);
    let writer = Arc::new(tokio::sync::Mutex::new(our_write));
    let front = Arc::new(Front::default());
    let routing = front.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(our_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message) =
                Message::from_value(serde_json::from_str(&line).unwrap_or_default())
            {
                routing.route(&message);
            }
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let _ = socket.set_nodelay(true);
            let front = front.clone();
            let writer = writer.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let front = front.clone();
                        let writer = writer.clone();
                        async move {
                            if request.method() != http::Method::POST {
                                return Ok::<_, Infallible>(status(405));
                            }
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let Ok(message) = Message::from_value(
                                serde_json::from_slice(&body).unwrap_or_default(),
                            ) else {
                                return Ok(status(400));
                            };
                            let response = if let Message::Request(r) = &message {
                                let (tx, rx) = mpsc::unbounded_channel::<String>();
                                let token = r
                                    .meta()
                                    .and_then(|m| m.get("progressToken"))
                                    .and_then(RequestId::from_value);
                                front.open.lock().unwrap().push(Open {
                                    id: r.id.clone(),
                                    token,
                                    tx,
                                });
                                let stream = futures::stream::unfold(rx, |mut rx| async move {
                                    let chunk = rx.recv().await?;
                                    Some((Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))), rx))
                                });
                                Response::builder()
                                    .header("content-type", "text/event-stream")
                                    .body(StreamBody::new(stream).boxed())
                                    .unwrap()
                            } else {
                                status(202)
                            };
                            let mut line = body.to_vec();
                            line.push(b'\n');
                            let mut w = writer.lock().await;
                            let _ = w.write_all(&line).await;
                            let _ = w.flush().await;
                            Ok(response)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    url
}

fn status(code: u16) -> Response<Body> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::new()).boxed())
        .unwrap()
}

async fn list_and_call(url: String) -> Client {
    let client = Client::builder()
        .connect(HttpTransportBuilder::new(url))
        .await
        .expect("connect");
    let tools = client.list_tools().await.expect("tools/list");
    assert!(tools.tools.iter().any(|t| t.name == "echo"));
    let called = client
        .call_tool("echo", json!({"text": "over HTTP"}))
        .await
        .expect("tools/call");
    let text = serde_json::to_value(&called.content).unwrap();
    assert!(text.to_string().contains("over HTTP"), "{text}");
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_finds_a_modern_server_over_http() {
    let client = list_and_call(http_fake(FakeConfig::modern()).await).await;
    assert_eq!(client.era(), Era::Modern);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_falls_back_to_legacy_over_http_on_the_same_transport() {
    let client = list_and_call(http_fake(FakeConfig::legacy()).await).await;
    assert_eq!(client.era(), Era::Legacy);
}

/// The client's era probe over HTTP, as it reads this transport's errors
/// today: what each failure of the probe becomes, and how fast.
mod probe {
    use std::time::{Duration, Instant};

    use mcp_client::{Client, ErrorKind};
    use mcp_transport::TransportError;
    use mcp_transport_http::HttpTransportBuilder;

    use super::*;

    async fn connect(url: String) -> (Result<Client, mcp_client::ClientError>, Duration) {
        let start = Instant::now();
        let outcome = Client::builder()
            .connect(HttpTransportBuilder::new(url))
            .await;
        (outcome, start.elapsed())
    }

    async fn answering(code: u16, header: Option<(&'static str, &'static str)>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |_r: http::Request<hyper::body::Incoming>| async move {
                            let mut b = Response::builder().status(code);
                            if let Some((k, v)) = header {
                                b = b.header(k, v);
                            }
                            Ok::<_, Infallible>(b.body(Full::new(Bytes::new()).boxed()).unwrap())
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        url
    }

    fn transport_error(outcome: Result<Client, mcp_client::ClientError>) -> TransportError {
        match outcome {
            Ok(_) => panic!("the connect succeeded"),
            Err(e) => match e.kind() {
                ErrorKind::Transport(t) => t.clone(),
                other => panic!("not a transport error: {other:?}"),
            },
        }
    }

    #[tokio::test]
    async fn a_refused_port_fails_the_connect_as_unreachable_at_once() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let (outcome, took) = connect(format!("http://127.0.0.1:{port}/mcp")).await;
        assert!(matches!(
            transport_error(outcome),
            TransportError::Unreachable { .. }
        ));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    #[tokio::test]
    async fn a_503_fails_the_connect_with_its_retry_after() {
        let (outcome, took) = connect(answering(503, Some(("retry-after", "30"))).await).await;
        assert_eq!(
            transport_error(outcome),
            TransportError::RetryLater {
                status: 503,
                retry_after: Some(Duration::from_secs(30)),
                body: String::new()
            }
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    #[tokio::test]
    async fn a_401_fails_the_connect_as_authorization_required() {
        let (outcome, _) =
            connect(answering(401, Some(("www-authenticate", "Bearer"))).await).await;
        assert!(matches!(
            transport_error(outcome),
            TransportError::AuthorizationRequired { status: 401, .. }
        ));
    }

    #[tokio::test]
    async fn a_404_without_a_json_rpc_body_falls_back_to_legacy_then_fails_on_initialize() {
        let (outcome, took) = connect(answering(404, None).await).await;
        // discover: 404 → legacy; initialize: 404 → no HTTP+SSE stream
        // either → the initialize's 404 stands.
        assert!(matches!(
            transport_error(outcome),
            TransportError::Http { status: 404, .. }
        ));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    /// Pinned to modern, a `server/discover` refused with a 4xx and no
    /// JSON-RPC body (what an HTTP+SSE server answers a POST to its SSE
    /// URL) is evidence of a legacy server, as it is to the probe: the
    /// connect fails as `NotModern`, not as a bare HTTP error.
    #[tokio::test]
    async fn pinned_modern_against_a_405_fails_as_not_modern() {
        let outcome = Client::builder()
            .era(mcp_client::EraMode::Modern)
            .connect(HttpTransportBuilder::new(answering(405, None).await))
            .await;
        match outcome.map(|_| ()).map_err(|e| e.kind().clone()) {
            Err(ErrorKind::NotModern { evidence }) => {
                assert!(evidence.contains("HTTP 405"), "{evidence}");
            }
            other => panic!("expected NotModern, got {other:?}"),
        }
    }

    /// A server that takes the POST and never answers: over HTTP a legacy
    /// server answers every POST, so the probe timer running out fails the
    /// connect (over stdio the same silence means legacy).
    #[tokio::test]
    async fn a_server_that_never_answers_the_probe_fails_the_connect_when_the_probe_timer_ends() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut sockets = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                sockets.push(socket); // read nothing, answer nothing
            }
        });
        let probe_timer = Duration::from_millis(500);
        let start = Instant::now();
        let outcome = Client::builder()
            .probe_timeout(probe_timer)
            .connect(HttpTransportBuilder::new(url))
            .await;
        let took = start.elapsed();
        match transport_error(outcome) {
            TransportError::Timeout { method, after } => {
                assert_eq!((method.as_str(), after), ("server/discover", probe_timer));
            }
            other => panic!("expected the probe's Timeout, got {other:?}"),
        }
        // The probe timer, plus a margin for a loaded machine; far below
        // the 60 s request timeout a legacy fallback would wait out.
        assert!(
            took >= probe_timer && took < Duration::from_secs(5),
            "{took:?}"
        );
        held.abort();
    }
}
