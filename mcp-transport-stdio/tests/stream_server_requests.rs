//! Over a stream: with the server-request cap at 2 and a handler that never
//! answers, a third concurrent server request is answered at once with a
//! JSON-RPC error and never reaches the handler, and the read loop goes on
//! (a later answer to our own request still arrives).
//!
//! On tokio's paused clock (an in-memory duplex); waits are bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Request};
use mcp_transport::{ConnectionHandlers, ConnectionLimits, RequestOptions, Transport};
use mcp_transport_stdio::StreamTransport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test(start_paused = true)]
async fn a_server_request_over_the_cap_is_refused_and_reading_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let handler = move |_r: Request| -> BoxFuture<'static, Result<Value, ErrorObject>> {
        counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    };
    let handlers = ConnectionHandlers::discard()
        .with_server_requests(Arc::new(handler))
        .with_limits(ConnectionLimits::default().max_concurrent_server_requests(2));
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let t = StreamTransport::duplex(ours, handlers);
    let (read, mut write) = tokio::io::split(theirs);
    let mut lines = BufReader::new(read).lines();
    let mut read_line = async move || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    };

    let ours = t.request(
        Request::new(1, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_secs(60)),
    );
    assert_eq!(read_line().await["id"], 1);
    for id in ["s-1", "s-2", "s-3"] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"sampling/createMessage","params":{{}}}}"#
        );
        write.write_all(line.as_bytes()).await.unwrap();
        write.write_all(b"\n").await.unwrap();
    }
    write.flush().await.unwrap();
    let refusal = read_line().await;
    assert_eq!(refusal["id"], "s-3", "{refusal}");
    assert!(refusal["error"]["code"].is_i64(), "{refusal}");
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n")
        .await
        .unwrap();
    write.flush().await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), ours)
        .await
        .expect("our answer in time");
    assert_eq!(answer.unwrap()["ok"], true);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the handler ran over the cap"
    );
}
