//! The transport's own diagnostics reach `ConnectionHandlers::events` as
//! typed `TransportEvent`s; the connection listener, which carries the
//! server's notifications, never sees them (no invented `$/…` methods).

use mcp_protocol::{ErrorObject, ErrorResponse, Inbound, Message, Notification};
use mcp_transport::{
    ConnectionHandlers, Engine, Listener, ListenerStream, OutboundReceiver, TransportEvent,
};

fn setup() -> (
    Engine,
    OutboundReceiver,
    ListenerStream,
    ListenerStream<TransportEvent>,
) {
    let (listener, connection) = Listener::channel(64);
    let (events, event_stream) = Listener::<TransportEvent>::bounded("transport events", 64);
    let (engine, out) = Engine::new(ConnectionHandlers::new(listener).with_events(events));
    (engine, out, connection, event_stream)
}

#[tokio::test]
async fn noise_malformed_oversized_and_null_id_errors_are_events_not_notifications() {
    let (engine, _out, mut connection, mut events) = setup();
    engine.event(TransportEvent::Noise {
        line: "starting up".into(),
        len: 11,
    });
    engine.receive_malformed(Inbound::parse(br#"{"jsonrpc":"2.0","id":1}"#).unwrap_err());
    engine.receive_oversized(br#"{"jsonrpc":"2.0","id":2,"result":{"#, 4096, 1024);
    engine.receive(Message::Error(ErrorResponse {
        id: None,
        error: ErrorObject::new(-32700, "parse error"),
    }));
    // A real notification afterwards: the only thing the listener gets.
    engine.receive(Message::Notification(Notification::new(
        "notifications/tools/list_changed",
        None,
    )));

    let seen: Vec<Notification> = std::iter::from_fn(|| connection.try_recv()).collect();
    let methods: Vec<&str> = seen.iter().map(|n| n.method.as_str()).collect();
    assert_eq!(
        methods,
        ["notifications/tools/list_changed"],
        "the connection listener was given transport diagnostics"
    );

    let got: Vec<TransportEvent> = std::iter::from_fn(|| events.try_recv()).collect();
    assert!(
        matches!(
            &got[..],
            [
                TransportEvent::Noise { len: 11, .. },
                TransportEvent::Malformed { .. },
                TransportEvent::TooLarge {
                    size: 4096,
                    limit: 1024,
                    request: false,
                    ..
                },
                TransportEvent::NullIdError { .. },
            ]
        ),
        "{got:?}"
    );
}
