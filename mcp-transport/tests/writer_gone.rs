//! An engine whose writer has gone (its outbound queue's receiver was
//! dropped without `peer_gone`) can send nothing more: it says so.

use mcp_protocol::Request;
use mcp_transport::{ConnectionHandlers, Engine, RequestOptions, Transport, TransportError};

#[tokio::test]
#[ignore = "the engine fails requests with Closed (which means the owner closed it) while is_alive stays true once its writer is gone without peer_gone"]
async fn an_engine_whose_writer_is_gone_is_not_alive() {
    let (engine, outbound) = Engine::new(ConnectionHandlers::discard());
    drop(outbound);
    let got = engine
        .request(Request::new(1, "test/any", None), RequestOptions::new())
        .await;
    assert!(
        got.is_err(),
        "a request with nowhere to go succeeded: {got:?}"
    );
    assert!(
        !engine.is_alive(),
        "requests fail with {got:?}, yet is_alive is true"
    );
    assert_ne!(
        got,
        Err(TransportError::Closed),
        "nobody closed the transport"
    );
}
