//! The response cache, and change notifications as a stream, in both eras.

mod common;

use std::time::Duration;

use common::{FnConnector, FnServer, Reply, discover_result};
use mcp_client::{CallOptions, Client, ServerEvent, Source, Watch};
use mcp_protocol::Message;
use mcp_protocol::methods::ListTools;
use mcp_reference_server::{CacheScope, FakeConfig, FakeServer};
use serde_json::{Value, json};

fn wire_count(server: &FakeServer, method: &str) -> usize {
    server
        .received(0)
        .iter()
        .filter(|m| matches!(m, Message::Request(r) if r.method == method))
        .count()
}

async fn next_change(sub: &mut mcp_client::Subscription) -> ServerEvent {
    tokio::time::timeout(Duration::from_secs(5), sub.recv())
        .await
        .expect("a change arrives")
        .expect("the stream is open")
}

#[tokio::test(start_paused = true)]
async fn modern_lists_are_cached_by_ttl_and_dropped_on_list_changed() {
    let server = FakeServer::new(FakeConfig::modern().cache_hint(60_000, CacheScope::Public));
    let client = Client::builder().connect(server.connector()).await.unwrap();
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(
        wire_count(&server, "tools/list"),
        1,
        "the second list is served fresh from the cache"
    );

    let mut changes = client.subscribe(Watch::new().tools()).await.unwrap();
    client
        .call_tool("add_tool", json!({"name": "new_tool"}))
        .await
        .unwrap();
    assert_eq!(
        next_change(&mut changes).await,
        ServerEvent::ToolsListChanged
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "new_tool"));
    assert_eq!(
        wire_count(&server, "tools/list"),
        2,
        "list_changed dropped the entry"
    );

    // Bypass per call.
    client
        .list_tools()
        .options(&CallOptions::new().bypass_cache())
        .await
        .unwrap();
    assert_eq!(wire_count(&server, "tools/list"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_zero_ttl_always_refetches() {
    let server = FakeServer::new(FakeConfig::modern().cache_hint(0, CacheScope::Public));
    let client = Client::builder().connect(server.connector()).await.unwrap();
    for _ in 0..3 {
        client.list_tools().await.unwrap();
        client.read_resource("fake://text/hello").await.unwrap();
    }
    assert_eq!(wire_count(&server, "tools/list"), 3);
    assert_eq!(wire_count(&server, "resources/read"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_failed_refetch_serves_stale_data_marked_as_such() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let server = FnServer::new(move |_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/list" if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => Reply::Ok(
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}],
                "ttlMs": 1000, "cacheScope": "public"}),
        ),
        _ => Reply::Silent,
    });
    let client = Client::builder()
        .request_timeout(Duration::from_secs(2))
        .connect(FnConnector(server))
        .await
        .unwrap();
    let first = client
        .fetch::<ListTools>(Default::default(), &CallOptions::new())
        .await
        .unwrap();
    assert!(matches!(first.source, Source::Server));
    let again = client
        .fetch::<ListTools>(Default::default(), &CallOptions::new())
        .await
        .unwrap();
    assert!(matches!(again.source, Source::Cache));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stale = client
        .fetch::<ListTools>(Default::default(), &CallOptions::new())
        .await
        .unwrap();
    match stale.source {
        Source::StaleCache(e) => assert!(e.is_timeout(), "{e}"),
        other => panic!("expected a stale answer, got {other:?}"),
    }
    assert_eq!(stale.value.items[0].name, "t");
    // The plain typed call reports the failure instead.
    assert!(client.list_tools().await.unwrap_err().is_timeout());
}

#[tokio::test(start_paused = true)]
async fn legacy_lists_are_cached_only_where_list_changed_is_advertised() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = Client::builder().connect(server.connector()).await.unwrap();
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(wire_count(&server, "tools/list"), 1);
    // Resource reads are never cached in legacy.
    client.read_resource("fake://text/hello").await.unwrap();
    client.read_resource("fake://text/hello").await.unwrap();
    assert_eq!(wire_count(&server, "resources/read"), 2);

    let quiet = FakeServer::new(FakeConfig::legacy().capabilities(json!({"tools": {}})));
    let client = Client::builder().connect(quiet.connector()).await.unwrap();
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(
        wire_count(&quiet, "tools/list"),
        2,
        "no listChanged: no caching"
    );
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_sees_changes_in_both_eras() {
    for config in [FakeConfig::legacy(), FakeConfig::modern()] {
        let server = FakeServer::new(config);
        let client = Client::builder().connect(server.connector()).await.unwrap();
        let era = client.era();
        let mut changes = client
            .subscribe(Watch::new().tools().resource("fake://counter"))
            .await
            .unwrap();
        client.call_tool("add_tool", Value::Null).await.unwrap();
        assert_eq!(
            next_change(&mut changes).await,
            ServerEvent::ToolsListChanged,
            "{era:?}"
        );
        client
            .call_tool("touch_resource", json!({"uri": "fake://counter"}))
            .await
            .unwrap();
        assert_eq!(
            next_change(&mut changes).await,
            ServerEvent::ResourceUpdated {
                uri: "fake://counter".into()
            },
            "{era:?}"
        );
        drop(changes);
        client.close().await;
    }
}

/// A listen stream that ends (the server closed it) is opened again, with
/// a growing pause, until the subscription gives up waiting for an
/// acknowledgement this server never sends.
#[tokio::test(start_paused = true)]
async fn a_dropped_listen_stream_is_opened_again() {
    const ANSWER_AFTER: Duration = Duration::from_millis(50);
    let opened = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = opened.clone();
    let server = FnServer::new(move |_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "subscriptions/listen" => {
            seen.lock().unwrap().push(tokio::time::Instant::now());
            Reply::Later(
                ANSWER_AFTER,
                json!({"resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": r.id.to_value()}}),
            )
        }
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let e = client.subscribe(Watch::new().tools()).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    let opened = opened.lock().unwrap().clone();
    assert!(
        opened.len() >= 4,
        "opened again after each end: {}",
        opened.len()
    );
    // The pause after each end: the time between two listens, less the
    // time the server took to end the first. On the paused clock these
    // are exact to the millisecond.
    let pauses: Vec<Duration> = opened
        .windows(2)
        .map(|w| w[1] - w[0] - ANSWER_AFTER)
        .collect();
    assert!(
        pauses[0] >= Duration::from_millis(100),
        "no hot loop: {pauses:?}"
    );
    for w in pauses.windows(2) {
        assert!(
            w[1] >= w[0] * 3 / 2,
            "each pause grows (at least by half): {pauses:?}"
        );
    }
}

/// Two listens opened at once each get their own acknowledgement and only
/// their own notifications: one change reaches each subscription once.
#[tokio::test(start_paused = true)]
async fn concurrent_listens_are_demultiplexed_by_subscription() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = Client::builder().connect(server.connector()).await.unwrap();
    let (a, b) = tokio::join!(
        client.subscribe(Watch::new().tools()),
        client.subscribe(Watch::new().tools())
    );
    let (mut a, mut b) = (a.unwrap(), b.unwrap());
    assert_eq!(wire_count(&server, "subscriptions/listen"), 2);
    client
        .call_tool("add_tool", json!({"name": "new_tool"}))
        .await
        .unwrap();
    for sub in [&mut a, &mut b] {
        assert_eq!(next_change(sub).await, ServerEvent::ToolsListChanged);
        let again = tokio::time::timeout(Duration::from_secs(5), sub.recv()).await;
        assert!(
            again.is_err(),
            "a subscription saw another listen's notification: {again:?}"
        );
    }
}

/// The cache drops a stale list when the change arrives, even while the
/// event callback is stuck on an earlier event: the next list is fresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_event_callback_never_delays_invalidation() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (release, stuck) = std::sync::mpsc::channel::<()>();
    let stuck = std::sync::Mutex::new(stuck);
    let client = Client::builder()
        // So that the log tool's message is sent (the first event).
        .log_level(mcp_protocol::types::LoggingLevel::Debug)
        .on_event(move |_| {
            // Blocks on the first event until the test ends.
            let _ = stuck.lock().unwrap().recv();
        })
        .connect(server.connector())
        .await
        .unwrap();
    let before = client.list_all_tools().await.unwrap();
    client.list_all_tools().await.unwrap();
    assert_eq!(wire_count(&server, "tools/list"), 1, "cached");
    // An event to get the callback stuck on, then a change behind it.
    client
        .call_tool("log", json!({"level": "emergency"}))
        .await
        .unwrap();
    client
        .call_tool("add_tool", json!({"name": "new_tool"}))
        .await
        .unwrap();
    let after = client.list_all_tools().await.unwrap();
    assert!(
        after.iter().any(|t| t.name == "new_tool"),
        "the cache served the list from before the change ({} tools, then {})",
        before.len(),
        after.len()
    );
    assert_eq!(wire_count(&server, "tools/list"), 2);
    drop(release);
}
