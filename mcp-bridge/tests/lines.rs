//! Lines passed through unparsed: the bridge between a client and a
//! server that both speak newline-delimited JSON, each played here line by
//! line, so that what crosses is seen byte for byte. After the handshake a
//! call and its answer pass as they were written; everything else (the
//! handshake, the server's requests, anything under a tool policy) goes
//! through the engines and is written anew.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, Ended, ToolPolicy};
use mcp_transport::{ConnectionHandlers, Transport};
use mcp_transport_stdio::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

/// One side played line by line.
struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
}

impl Peer {
    fn new(stream: DuplexStream) -> Peer {
        let (read, write) = tokio::io::split(stream);
        Peer {
            lines: BufReader::new(read).lines(),
            write,
        }
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn send_bytes(&mut self, line: &[u8]) {
        self.write.write_all(line).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn read(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("a line within 5 s")
            .unwrap()
            .expect("the stream is open")
    }

    async fn read_json(&mut self) -> Value {
        let line = self.read().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}

/// `bridge` (made from a connector) serving the client peer, with the
/// server peer behind it.
fn bridged(
    make: impl FnOnce(Connect) -> Bridge,
) -> (JoinHandle<Result<Ended, BridgeError>>, Peer, Peer) {
    bridged_with(make, None)
}

/// A plain bridge whose server side reads messages of at most `limit`
/// bytes.
fn bridged_reading_at_most(limit: usize) -> (JoinHandle<Result<Ended, BridgeError>>, Peer, Peer) {
    bridged_with(Bridge::new, Some(limit))
}

fn bridged_with(
    make: impl FnOnce(Connect) -> Bridge,
    limit: Option<usize>,
) -> (JoinHandle<Result<Ended, BridgeError>>, Peer, Peer) {
    let (server_end, bridge_end) = tokio::io::duplex(1 << 16);
    let upstream = Arc::new(Mutex::new(Some(bridge_end)));
    let connect: Connect = Box::new(move |handlers: ConnectionHandlers| {
        let stream = upstream.lock().unwrap().take();
        Box::pin(async move {
            let stream = stream.ok_or(mcp_transport::TransportError::Closed)?;
            let (read, write) = tokio::io::split(stream);
            let mut builder = StreamTransport::builder().name("server");
            if let Some(limit) = limit {
                builder = builder.max_message_size(limit);
            }
            Ok(Arc::new(builder.build(read, write, handlers)) as Arc<dyn Transport>)
        })
    });
    let (client_end, serving_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(serving_end);
    let serving = tokio::spawn(make(connect).serve(read, write));
    (serving, Peer::new(client_end), Peer::new(server_end))
}

type Connect = Box<
    dyn Fn(
            ConnectionHandlers,
        ) -> futures::future::BoxFuture<
            'static,
            Result<Arc<dyn Transport>, mcp_transport::TransportError>,
        > + Send
        + Sync,
>;

fn plain() -> (JoinHandle<Result<Ended, BridgeError>>, Peer, Peer) {
    bridged(Bridge::new)
}

/// The handshake, played on both sides.
async fn handshake(client: &mut Peer, server: &mut Peer) {
    client
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"0"}}}"#)
        .await;
    let initialize = server.read_json().await;
    assert_eq!(initialize["method"], "initialize");
    server
        .send(
            &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "0"}}})
            .to_string(),
        )
        .await;
    assert_eq!(client.read_json().await["id"], 0);
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    assert_eq!(
        server.read_json().await["method"],
        "notifications/initialized"
    );
}

#[tokio::test]
async fn after_the_handshake_a_call_and_its_answer_pass_as_written() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    let call = r#"{"params": {"z": 1, "name": "x", "arguments": {"b": 2.50, "a": "\u00e9"}}, "method":"tools/call", "id":"a b", "jsonrpc":"2.0"}"#;
    client.send(call).await;
    assert_eq!(
        server.read().await,
        call,
        "the request as the client wrote it"
    );
    let answer =
        r#"{"id":"a b","jsonrpc":"2.0",  "result":{"z":[1, 2],"content":[],"extra":{"x":1.0}}}"#;
    server.send(answer).await;
    assert_eq!(
        client.read().await,
        answer,
        "the answer as the server wrote it"
    );
    // An error answer passes as it is too, code, message and data.
    client
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}"#)
        .await;
    server.read().await;
    let error = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no tool nope","data":{"tool":"nope"}}}"#;
    server.send(error).await;
    assert_eq!(client.read().await, error);
}

#[tokio::test]
async fn before_the_handshake_ends_requests_go_through_the_engine() {
    let (_serving, mut client, mut server) = plain();
    client
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}"#)
        .await;
    let initialize = server.read_json().await;
    server
        .send(
            &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "s", "version": "0"}}})
            .to_string(),
        )
        .await;
    client.read().await;
    // A ping before `initialized`: relayed, so written anew.
    client
        .send(r#"{"jsonrpc":"2.0", "id":1, "method":"ping"}"#)
        .await;
    let ping = server.read().await;
    assert_ne!(ping, r#"{"jsonrpc":"2.0", "id":1, "method":"ping"}"#);
    assert_eq!(
        serde_json::from_str::<Value>(&ping).unwrap()["method"],
        "ping"
    );
}

#[tokio::test]
async fn progress_of_a_passed_call_reaches_the_client_before_its_answer() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p3"}}}"#)
        .await;
    server.read().await;
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":1,"total":2}}"#;
    let stale = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"gone","progress":1}}"#;
    let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#;
    for line in [progress, stale, answer] {
        server.send(line).await;
    }
    assert_eq!(client.read().await, progress);
    assert_eq!(
        client.read().await,
        answer,
        "progress for no call is dropped"
    );
}

#[tokio::test]
async fn a_cancel_of_a_passed_call_reaches_the_server_and_a_late_answer_is_dropped() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}"#)
        .await;
    server.read().await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"enough"}}"#;
    client.send(cancel).await;
    assert_eq!(server.read().await, cancel);
    server
        .send(r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
        .await;
    assert_eq!(server.read_json().await["id"], 5);
    server.send(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#).await;
    assert_eq!(
        client.read_json().await["id"],
        5,
        "the answer after the cancel never reaches the client"
    );
}

#[tokio::test]
async fn a_second_request_under_an_id_in_flight_is_refused() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    let first = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow"}}"#;
    client.send(first).await;
    assert_eq!(server.read().await, first);
    client
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#)
        .await;
    let refused = client.read_json().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(6), json!(-32600)),
        "{refused}"
    );
    server
        .send(r#"{"jsonrpc":"2.0","id":6,"result":{"content":[]}}"#)
        .await;
    assert_eq!(client.read_json().await["result"]["content"], json!([]));
}

#[tokio::test]
async fn when_the_server_goes_each_passed_call_is_told_it_may_have_run() {
    let (serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow"}}"#)
        .await;
    server.read().await;
    drop(server);
    let answer = client.read_json().await;
    assert_eq!(answer["id"], 8, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("may have run") && message.contains("tools/call"),
        "{answer}"
    );
    assert!(matches!(serving.await.unwrap(), Ok(Ended::ServerGone(_))));
}

#[tokio::test]
async fn the_servers_requests_during_a_passed_call_go_to_the_client_and_back() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    server.read().await;
    server
        .send(r#"{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}"#)
        .await;
    let asked = client.read_json().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
                .to_string(),
        )
        .await;
    let answered = server.read_json().await;
    assert_eq!(answered["id"], "s1", "{answered}");
    assert_eq!(answered["result"]["action"], "decline", "{answered}");
    let answer = r#"{"jsonrpc":"2.0","id":10,"result":{"content":[]}}"#;
    server.send(answer).await;
    assert_eq!(client.read().await, answer);
}

#[tokio::test]
async fn junk_on_either_side_costs_only_itself() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    // Skipped, as the engine skips noise.
    client.send("not json at all").await;
    let call = r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"x"}}"#;
    client.send(call).await;
    assert_eq!(server.read().await, call);
    server.send("garbage from the server").await;
    let answer = r#"{"jsonrpc":"2.0","id":11,"result":{"content":[]}}"#;
    server.send(answer).await;
    assert_eq!(client.read().await, answer, "only the well-formed answer");
}

#[tokio::test]
async fn an_answer_that_cannot_pass_as_written_still_reaches_its_caller() {
    let (_serving, mut client, mut server) = bridged_reading_at_most(1024);
    handshake(&mut client, &mut server).await;
    for id in 20..24 {
        client
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x"}}}}"#
            ))
            .await;
        server.read().await;
    }
    // Not UTF-8: the caller is told the answer could not be read.
    server
        .send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":20,\"result\":{\"text\":\"\xee\"}}")
        .await;
    // Not JSON-RPC 2.0: the same.
    server
        .send(r#"{"jsonrpc":"1.0","id":21,"result":{}}"#)
        .await;
    // Over the limit: the caller is told its size.
    let big = "x".repeat(4096);
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":22,"result":{{"text":"{big}"}}}}"#
        ))
        .await;
    // A member twice, which the engine reads: passed on as it reads it.
    server
        .send(r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":23,"result":{"content":[]}}"#)
        .await;
    let mut answers = std::collections::BTreeMap::new();
    for _ in 20..24 {
        let answer = client.read_json().await;
        answers.insert(answer["id"].as_i64().unwrap(), answer);
    }
    let message = |id: i64| {
        answers[&id]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        message(20).contains("not valid JSON-RPC"),
        "{}",
        answers[&20]
    );
    assert!(
        message(21).contains("not valid JSON-RPC"),
        "{}",
        answers[&21]
    );
    assert!(message(22).contains("1024"), "{}", answers[&22]);
    assert_eq!(
        answers[&23]["result"]["content"],
        json!([]),
        "{}",
        answers[&23]
    );
    // Nothing is left waiting: the ids are free again.
    client
        .send(r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"x"}}"#)
        .await;
    assert_eq!(server.read_json().await["id"], 20);
}

#[tokio::test]
async fn under_a_tool_policy_every_line_goes_through_the_engine() {
    let policy = ToolPolicy::new().deny("secret").unwrap();
    let (_serving, mut client, mut server) = bridged(|c| Bridge::new(c).tools(policy));
    handshake(&mut client, &mut server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"secret"}}"#)
        .await;
    let refused = client.read_json().await;
    assert_eq!(refused["id"], 12);
    assert!(refused["error"].is_object(), "{refused}");
    let call = r#"{"jsonrpc":"2.0", "id":13, "method":"tools/call", "params":{"name":"open"}}"#;
    client.send(call).await;
    let relayed = server.read().await;
    assert_ne!(relayed, call, "relayed, so written anew");
}

#[tokio::test]
async fn a_second_handshake_holds_lines_until_it_ends() {
    let (_serving, mut client, mut server) = plain();
    handshake(&mut client, &mut server).await;
    let ping = r#"{"jsonrpc":"2.0", "id":31, "method":"ping"}"#;
    client
        .send(r#"{"jsonrpc":"2.0","id":30,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}"#)
        .await;
    let initialize = server.read_json().await;
    client.send(ping).await;
    server
        .send(
            &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "s", "version": "0"}}})
            .to_string(),
        )
        .await;
    let relayed = server.read().await;
    assert_ne!(
        relayed, ping,
        "relayed during the handshake, so written anew"
    );
    server
        .send(r#"{"jsonrpc":"2.0","id":31,"result":{}}"#)
        .await;
    let mut ids: Vec<Value> = vec![
        client.read_json().await["id"].clone(),
        client.read_json().await["id"].clone(),
    ];
    ids.sort_by_key(|v| v.as_i64());
    assert_eq!(ids, [json!(30), json!(31)]);
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    server.read().await;
    client.send(ping).await;
    assert_eq!(server.read().await, ping, "passed once it ended");
}

#[tokio::test]
async fn a_restart_that_fails_is_tried_again_while_the_budget_lasts() {
    let (first_server, first_end) = tokio::io::duplex(1 << 16);
    let (second_server, second_end) = tokio::io::duplex(1 << 16);
    // The first restart finds nothing to connect to; the second does.
    let ends = Arc::new(Mutex::new(std::collections::VecDeque::from([
        Some(first_end),
        None,
        Some(second_end),
    ])));
    let connect: Connect = Box::new(move |handlers: ConnectionHandlers| {
        let end = ends.lock().unwrap().pop_front().flatten();
        Box::pin(async move {
            let end = end.ok_or(mcp_transport::TransportError::Closed)?;
            Ok(Arc::new(StreamTransport::duplex(end, handlers)) as Arc<dyn Transport>)
        })
    });
    let restarts = mcp_bridge::Restarts::new(3, Duration::from_secs(60));
    let bridge = Bridge::new(connect).restarts(restarts);
    let (client_end, serving_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(serving_end);
    let _serving = tokio::spawn(bridge.serve(read, write));
    let (mut client, mut server) = (Peer::new(client_end), Peer::new(first_server));
    handshake(&mut client, &mut server).await;
    drop(server);
    // The second server is initialized as the first was, then serves.
    let mut server = Peer::new(second_server);
    let initialize = server.read_json().await;
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    server
        .send(
            &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "0"}}})
            .to_string(),
        )
        .await;
    assert_eq!(
        server.read_json().await["method"],
        "notifications/initialized"
    );
    let call = r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"x"}}"#;
    client.send(call).await;
    assert_eq!(server.read().await, call, "the call reaches the new server");
}
