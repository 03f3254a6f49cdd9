//! Each way connecting fails that a user meets says what happened and
//! what to do next: a server that cannot be reached, one that wants
//! authorization, one that never answers, one of another era or with no
//! revision in common, a command that does not start.

use std::time::Duration;

use mcp_client::{Client, EraMode, ErrorKind, HttpTransportBuilder, StdioCommand};
use mcp_protocol::ProtocolVersion;
use mcp_reference_server::http::ProtectedHttpFake;
use mcp_reference_server::{FakeConfig, FakeServer, Knob, Methods};

/// The message of a connect that must fail.
async fn failure(
    connecting: impl Future<Output = mcp_client::Result<Client>>,
) -> (ErrorKind, String) {
    match tokio::time::timeout(Duration::from_secs(20), connecting).await {
        Ok(Ok(_)) => panic!("the connect succeeded"),
        Ok(Err(e)) => {
            let message = e.to_string();
            (e.kind().clone(), message)
        }
        Err(_) => panic!("the connect hung"),
    }
}

fn says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} does not say {part:?}");
    }
}

#[tokio::test]
async fn a_server_that_cannot_be_reached() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (_, message) = failure(Client::builder().connect(HttpTransportBuilder::new(url))).await;
    says(
        &message,
        &["could not be reached", "check the address", "running"],
    );
}

#[tokio::test]
async fn a_server_that_wants_authorization() {
    let server = ProtectedHttpFake::start(FakeConfig::default())
        .await
        .unwrap();
    let (_, message) =
        failure(Client::builder().connect(HttpTransportBuilder::new(server.url()))).await;
    says(
        &message,
        &[
            "requires authorization (HTTP 401)",
            "authorize the connection",
            "OAuth",
        ],
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers() {
    let config = FakeConfig::legacy().knob(Knob::NeverAnswer(Methods::Named("initialize".into())));
    let connecting = Client::builder()
        .request_timeout(Duration::from_secs(5))
        .connect(FakeServer::new(config).connector());
    let (_, message) = failure(connecting).await;
    says(
        &message,
        &["no answer to initialize", "a longer timeout may help"],
    );
}

#[tokio::test]
async fn a_server_of_another_era() {
    let connecting = Client::builder()
        .era(EraMode::Modern)
        .connect(FakeServer::new(FakeConfig::legacy()).connector());
    let (kind, message) = failure(connecting).await;
    assert!(matches!(kind, ErrorKind::NotModern { .. }), "{kind:?}");
    says(&message, &["does not speak it", "EraMode::Auto"]);
}

#[tokio::test]
async fn no_revision_in_common() {
    let config = FakeConfig::legacy().versions(["2025-06-18"]);
    let connecting = Client::builder()
        .era(EraMode::Legacy)
        .protocol_versions([ProtocolVersion::V2024_11_05])
        .connect(FakeServer::new(config).connector());
    let (kind, message) = failure(connecting).await;
    assert!(matches!(kind, ErrorKind::Negotiation { .. }), "{kind:?}");
    says(
        &message,
        &[
            "no protocol revision in common",
            "protocol_versions",
            "update",
        ],
    );
}

#[tokio::test]
async fn a_command_that_does_not_start() {
    let connecting = Client::builder().connect(StdioCommand::new("/nonexistent/mcp-server"));
    let (_, message) = failure(connecting).await;
    says(
        &message,
        &[
            "could not start",
            "/nonexistent/mcp-server",
            "installed",
            "PATH",
        ],
    );
}
