//! Which listener an inbound notification reaches: the request it names by
//! progress token, the subscription it names by id, or the connection.

use mcp_protocol::meta::{PROGRESS_TOKEN, SUBSCRIPTION_ID};
use mcp_protocol::methods::{
    NOTIFICATION_MESSAGE, NOTIFICATION_PROGRESS, NOTIFICATION_RESOURCES_UPDATED,
    NOTIFICATION_TOOLS_LIST_CHANGED, SUBSCRIPTIONS_LISTEN, TOOLS_CALL,
};
use mcp_protocol::{Message, Notification, Request, Response};
use mcp_transport::{
    ConnectionHandlers, Engine, Listener, ListenerStream, OutboundReceiver, RequestOptions,
    ResponseFuture, Transport,
};
use serde_json::{Value, json};

/// An engine, its outbound queue (kept, or requests fail at once), and
/// the connection listener's stream.
fn setup() -> (Engine, OutboundReceiver, ListenerStream) {
    let (listener, connection) = Listener::channel(64);
    let (engine, outbound) = Engine::new(ConnectionHandlers::new(listener));
    (engine, outbound, connection)
}

/// A request with a progress token (a number or a string) and, when asked,
/// a listener of its own.
fn with_token(
    engine: &Engine,
    id: i64,
    token: Value,
    listen: bool,
) -> (ResponseFuture, Option<ListenerStream>) {
    let params = json!({ "_meta": { PROGRESS_TOKEN: token } });
    let (options, stream) = if listen {
        let (l, s) = Listener::channel(64);
        (RequestOptions::new().listener(l), Some(s))
    } else {
        (RequestOptions::new(), None)
    };
    let f = engine.request(Request::new(id, TOOLS_CALL, Some(params)), options);
    (f, stream)
}

fn notify(engine: &Engine, method: &str, params: Value) {
    engine.receive(Message::Notification(Notification::new(
        method,
        Some(params),
    )));
}

fn progress(token: Value, n: u64) -> Value {
    json!({ PROGRESS_TOKEN: token, "progress": n })
}

fn drain(stream: &mut ListenerStream) -> Vec<Notification> {
    std::iter::from_fn(|| stream.try_recv()).collect()
}

fn methods(ns: &[Notification]) -> Vec<&str> {
    ns.iter().map(|n| n.method.as_str()).collect()
}

#[tokio::test]
async fn progress_goes_to_the_request_whose_token_it_names() {
    let (engine, _outbound, mut connection) = setup();
    let (_a, a) = with_token(&engine, 1, json!("tok-a"), true);
    let (_b, b) = with_token(&engine, 2, json!("tok-b"), true);
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok-b"), 1));
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok-a"), 2));
    let a = drain(&mut a.unwrap());
    let b = drain(&mut b.unwrap());
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].params.as_ref().unwrap()["progress"], 2);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].params.as_ref().unwrap()["progress"], 1);
    assert!(drain(&mut connection).is_empty());
}

#[tokio::test]
async fn a_number_token_and_a_string_token_are_different_tokens() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, stream) = with_token(&engine, 1, json!(7), true);
    let mut stream = stream.unwrap();
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("7"), 1));
    assert!(drain(&mut stream).is_empty(), "\"7\" is not 7");
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!(7), 2));
    assert_eq!(drain(&mut stream).len(), 1);
    // Progress for a token nobody holds is dropped, not passed on.
    assert!(drain(&mut connection).is_empty());
}

#[tokio::test]
async fn any_notification_with_a_live_progress_token_in_meta_goes_to_that_request() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, stream) = with_token(&engine, 1, json!("tok"), true);
    let mut stream = stream.unwrap();
    notify(
        &engine,
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "working", "_meta": { PROGRESS_TOKEN: "tok" } }),
    );
    notify(
        &engine,
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "other", "_meta": { PROGRESS_TOKEN: "nobody" } }),
    );
    assert_eq!(methods(&drain(&mut stream)), [NOTIFICATION_MESSAGE]);
    // A log message naming an unknown token is still a log message: the
    // connection gets it (only progress is dropped).
    let conn = drain(&mut connection);
    assert_eq!(methods(&conn), [NOTIFICATION_MESSAGE]);
    assert_eq!(conn[0].params.as_ref().unwrap()["data"], "other");
}

#[tokio::test]
async fn a_subscription_id_routes_to_the_listen_request_with_that_id() {
    let (engine, _outbound, mut connection) = setup();
    let (l, mut sub) = Listener::channel(64);
    let _listen = engine.request(
        Request::new("sub-1", SUBSCRIPTIONS_LISTEN, None),
        RequestOptions::new().listener(l),
    );
    let updated = |id: &str, uri: &str| json!({ "uri": uri, "_meta": { SUBSCRIPTION_ID: id } });
    notify(
        &engine,
        NOTIFICATION_RESOURCES_UPDATED,
        updated("sub-1", "file:///a"),
    );
    notify(
        &engine,
        NOTIFICATION_RESOURCES_UPDATED,
        updated("sub-2", "file:///b"),
    );
    // A number 1 is not the string "sub-1", nor any live id.
    notify(
        &engine,
        NOTIFICATION_RESOURCES_UPDATED,
        json!({ "uri": "file:///c", "_meta": { SUBSCRIPTION_ID: 1 } }),
    );
    let sub = drain(&mut sub);
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].params.as_ref().unwrap()["uri"], "file:///a");
    let conn = drain(&mut connection);
    let uris: Vec<&Value> = conn
        .iter()
        .map(|n| &n.params.as_ref().unwrap()["uri"])
        .collect();
    assert_eq!(uris, [&json!("file:///b"), &json!("file:///c")]);
}

#[tokio::test]
async fn a_progress_token_is_looked_up_before_a_subscription_id() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, by_token) = with_token(&engine, 1, json!("tok"), true);
    let (l, mut by_sub) = Listener::channel(64);
    let _listen = engine.request(
        Request::new("sub-1", SUBSCRIPTIONS_LISTEN, None),
        RequestOptions::new().listener(l),
    );
    notify(
        &engine,
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "both", "_meta": { PROGRESS_TOKEN: "tok", SUBSCRIPTION_ID: "sub-1" } }),
    );
    assert_eq!(drain(&mut by_token.unwrap()).len(), 1);
    assert!(drain(&mut by_sub).is_empty());
    assert!(drain(&mut connection).is_empty());
    // With the token unknown, the subscription id decides.
    notify(
        &engine,
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "sub", "_meta": { PROGRESS_TOKEN: "gone", SUBSCRIPTION_ID: "sub-1" } }),
    );
    assert_eq!(drain(&mut by_sub).len(), 1);
    assert!(drain(&mut connection).is_empty());
}

#[tokio::test]
async fn notifications_tied_to_nothing_go_to_the_connection() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, stream) = with_token(&engine, 1, json!("tok"), true);
    notify(&engine, NOTIFICATION_TOOLS_LIST_CHANGED, json!({}));
    engine.receive(Message::Notification(Notification::new(
        NOTIFICATION_TOOLS_LIST_CHANGED,
        None,
    )));
    assert!(drain(&mut stream.unwrap()).is_empty());
    assert_eq!(
        methods(&drain(&mut connection)),
        [
            NOTIFICATION_TOOLS_LIST_CHANGED,
            NOTIFICATION_TOOLS_LIST_CHANGED
        ]
    );
}

#[tokio::test]
async fn progress_of_a_request_without_a_listener_is_dropped() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, none) = with_token(&engine, 1, json!("tok"), false);
    assert!(none.is_none());
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok"), 1));
    assert!(drain(&mut connection).is_empty());
}

#[tokio::test]
async fn a_finished_request_no_longer_takes_its_progress_or_subscription() {
    let (engine, _outbound, mut connection) = setup();
    let (f, stream) = with_token(&engine, 1, json!("tok"), true);
    let mut stream = stream.unwrap();
    let (l, mut sub) = Listener::channel(64);
    let listen = engine.request(
        Request::new("sub-1", SUBSCRIPTIONS_LISTEN, None),
        RequestOptions::new().listener(l),
    );
    for id in [json!(1), json!("sub-1")] {
        engine.receive(Message::Response(Response {
            id: mcp_protocol::RequestId::from_value(&id).unwrap(),
            result: json!({}),
        }));
    }
    f.await.unwrap();
    listen.await.unwrap();
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok"), 9));
    notify(
        &engine,
        NOTIFICATION_RESOURCES_UPDATED,
        json!({ "uri": "file:///late", "_meta": { SUBSCRIPTION_ID: "sub-1" } }),
    );
    assert!(drain(&mut stream).is_empty());
    assert!(drain(&mut sub).is_empty());
    // Late progress is dropped quietly; the late update is the connection's.
    assert_eq!(
        methods(&drain(&mut connection)),
        [NOTIFICATION_RESOURCES_UPDATED]
    );
}

#[tokio::test]
async fn a_cancelled_request_no_longer_takes_its_progress() {
    let (engine, _outbound, mut connection) = setup();
    let (f, stream) = with_token(&engine, 1, json!("tok"), true);
    drop(f);
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok"), 1));
    assert!(drain(&mut stream.unwrap()).is_empty());
    assert!(drain(&mut connection).is_empty());
    assert_eq!(engine.pending_count(), 0);
}

/// A log message tied by `_meta.progressToken` to a live request that has
/// no listener has nowhere else to go than the connection (as a
/// subscription id in the same case falls through to the connection); only
/// progress itself is dropped.
#[tokio::test]
async fn a_log_message_for_a_request_without_a_listener_reaches_the_connection() {
    let (engine, _outbound, mut connection) = setup();
    let (_f, none) = with_token(&engine, 1, json!("tok"), false);
    assert!(none.is_none());
    notify(
        &engine,
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "working", "_meta": { PROGRESS_TOKEN: "tok" } }),
    );
    assert_eq!(methods(&drain(&mut connection)), [NOTIFICATION_MESSAGE]);
}

#[tokio::test]
async fn a_subscription_without_a_listener_falls_through_to_the_connection() {
    let (engine, _outbound, mut connection) = setup();
    let _listen = engine.request(
        Request::new("sub-1", SUBSCRIPTIONS_LISTEN, None),
        RequestOptions::new(),
    );
    notify(
        &engine,
        NOTIFICATION_RESOURCES_UPDATED,
        json!({ "uri": "file:///a", "_meta": { SUBSCRIPTION_ID: "sub-1" } }),
    );
    assert_eq!(
        methods(&drain(&mut connection)),
        [NOTIFICATION_RESOURCES_UPDATED]
    );
}

/// Two live requests given the same progress token (a caller's mistake the
/// engine does not refuse): when the first ends, the second still gets its
/// progress.
#[tokio::test]
async fn a_progress_token_shared_by_two_requests_survives_the_first_ones_end() {
    let (engine, _outbound, mut connection) = setup();
    let (first, a) = with_token(&engine, 1, json!("tok"), true);
    let (_second, b) = with_token(&engine, 2, json!("tok"), true);
    engine.receive(Message::Response(Response {
        id: 1.into(),
        result: json!({}),
    }));
    first.await.unwrap();
    notify(&engine, NOTIFICATION_PROGRESS, progress(json!("tok"), 1));
    assert!(drain(&mut a.unwrap()).is_empty());
    assert_eq!(
        drain(&mut b.unwrap()).len(),
        1,
        "the live request lost its progress"
    );
    assert!(drain(&mut connection).is_empty());
}

/// A server request that never finishes until dropped.
fn pending_handler(
    _request: Request,
) -> futures::future::BoxFuture<'static, Result<Value, mcp_protocol::ErrorObject>> {
    Box::pin(std::future::pending())
}

#[tokio::test]
async fn a_cancel_for_a_running_server_request_is_consumed_and_others_reach_the_connection() {
    let (listener, mut connection) = Listener::channel(64);
    let handlers = ConnectionHandlers::new(listener)
        .with_server_requests(std::sync::Arc::new(pending_handler));
    let (engine, _outbound) = Engine::new(handlers);
    engine.receive(Message::Request(Request::new(
        "s-1",
        mcp_protocol::methods::PING,
        None,
    )));
    tokio::task::yield_now().await;
    let cancel = |id: Value| json!({ "requestId": id, "reason": "test" });
    notify(
        &engine,
        mcp_protocol::methods::NOTIFICATION_CANCELLED,
        cancel(json!("s-1")),
    );
    // No server request "s-2" is running: the cancel is the connection's
    // to see (it may be for a request the client already answered).
    notify(
        &engine,
        mcp_protocol::methods::NOTIFICATION_CANCELLED,
        cancel(json!("s-2")),
    );
    let conn = drain(&mut connection);
    assert_eq!(conn.len(), 1, "{conn:?}");
    assert_eq!(conn[0].params.as_ref().unwrap()["requestId"], "s-2");
}
