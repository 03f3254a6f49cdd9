//! A write that fails ends the connection with the cause the writer saw
//! ("writing failed: …"), not the vaguer one an engine gives when its
//! writer simply disappears.

use std::time::Duration;

use mcp_protocol::Request;
use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
use mcp_transport_stdio::StreamTransport;

#[tokio::test(start_paused = true)]
async fn a_failed_write_is_reported_as_such() {
    // The peer's output stays open (so reading never ends); its input is
    // gone, so the first write fails.
    let (our_read, _their_write) = tokio::io::duplex(1024);
    let (our_write, their_read) = tokio::io::duplex(1024);
    drop(their_read);
    let t = StreamTransport::new(our_read, our_write, ConnectionHandlers::discard());
    let got = tokio::time::timeout(
        Duration::from_secs(5),
        t.request(Request::new(1, "ping", None), RequestOptions::new()),
    )
    .await
    .expect("the request hung");
    match got {
        Err(TransportError::ServerGone(info)) => assert!(
            info.reason.starts_with("writing failed"),
            "the cause was lost: {:?}",
            info.reason
        ),
        other => panic!("expected ServerGone, got {other:?}"),
    }
    assert!(!t.is_alive());
}
