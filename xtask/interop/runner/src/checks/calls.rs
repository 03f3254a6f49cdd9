//! Checks on calling tools: listing, results, elicitation, progress, errors,
//! concurrency, cancellation, close.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::protocol::Era;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_client::transport::{CancellationToken, TransportError};
use mcp_client::{CallOptions, Client, ServerEvent};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::{call, echo_args, err, missing, object, text_of, tool_names};
use crate::model::{Check, Kind, Seen};
use crate::table::ms;

/// The `list-tools` check: the server lists the tools the other checks use.
pub(crate) async fn check_list_tools(client: &Client, kind: Kind) -> Check {
    let names = tool_names(client).await?;
    let want: &[&str] = match kind {
        Kind::Python => &["echo", "greet", "roots", "count", "slow", "add_tool"],
        Kind::Everything => &["echo", "get-sum", "trigger-long-running-operation"],
    };
    let lost = missing(&names, want);
    if !lost.is_empty() {
        return Err(format!("missing {lost:?} from {names:?}"));
    }
    Ok(format!("{} tools", names.len()))
}

/// The `echo` check: text (and structuredContent) round-trip through a tool.
pub(crate) async fn check_echo(client: &Client, kind: Kind) -> Check {
    let text = "héllo ✓ 🦀 \"quoted\"\nline 2";
    match kind {
        Kind::Python => {
            let r = call(client, "echo", json!({ "text": text })).await?;
            if text_of(&r) != text {
                return Err(format!("content {:?}, sent {text:?}", text_of(&r)));
            }
            if r.structured_content != Some(json!({ "result": text })) {
                return Err(format!("structuredContent {:?}", r.structured_content));
            }
            Ok(format!(
                "text of {} B and structuredContent round-trip",
                text.len()
            ))
        }
        Kind::Everything => {
            let r = call(client, "echo", json!({ "message": text })).await?;
            let want = format!("Echo: {text}");
            if text_of(&r) != want {
                return Err(format!("content {:?}, expected {want:?}", text_of(&r)));
            }
            Ok(format!("text of {} B round-trips", text.len()))
        }
    }
}

/// The `elicitation` check: a tool asks once, and the handler's answer reaches it.
pub(crate) async fn check_elicitation(client: &Client, kind: Kind, seen: &Seen) -> Check {
    let before = seen.elicitations.lock().unwrap().len();
    let (tool, args, wants): (&str, Value, &[&str]) = match kind {
        Kind::Python => (
            "greet",
            json!({ "greeting": "Welcome" }),
            &["Welcome, Ada Lovelace!"],
        ),
        Kind::Everything => (
            "trigger-elicitation-request",
            json!({}),
            // The integer is the schema's default: the client filled it in.
            &[
                "- Name: Ada Lovelace",
                "- Agreed to terms: true",
                "- Favorite Integer: 42",
            ],
        ),
    };
    let r = call(client, tool, args).await?;
    let text = text_of(&r);
    let asked = seen.elicitations.lock().unwrap()[before..].to_vec();
    if asked.len() != 1 {
        return Err(format!(
            "the handler ran {} times (once expected)",
            asked.len()
        ));
    }
    for want in wants {
        if !text.contains(want) {
            return Err(format!("result {text:?} lacks {want:?}"));
        }
    }
    let how = match client.era() {
        Era::Modern => "input_required round trip",
        _ => "elicitation/create request",
    };
    Ok(format!(
        "{how}: {:?}",
        asked[0].message().unwrap_or_default()
    ))
}

/// The `progress` check: every progress notification reaches the call, in order.
pub(crate) async fn check_progress(client: &Client, kind: Kind) -> Check {
    let (tool, args, steps) = match kind {
        Kind::Python => ("count", json!({ "steps": 4 }), 4),
        Kind::Everything => (
            "trigger-long-running-operation",
            json!({ "duration": 0.4, "steps": 4 }),
            4,
        ),
    };
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock().unwrap().push((p.progress_f64(), p.total_f64()));
    });
    let params = CallToolRequestParams::new(tool).with_arguments(object(args));
    let start = Instant::now();
    let r = client.call_tool_with(params, &options).await.map_err(err)?;
    let took = start.elapsed();
    if r.is_error() {
        return Err(format!("isError: {}", text_of(&r)));
    }
    // The callback runs on a task of its own: progress that came just
    // before the answer may reach it just after the call returned.
    let deadline = Instant::now() + Duration::from_secs(2);
    while got.lock().unwrap().len() < steps as usize && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let got = got.lock().unwrap().clone();
    let want: Vec<(f64, Option<f64>)> = (1..=steps)
        .map(|i| (f64::from(i), Some(f64::from(steps))))
        .collect();
    if got != want {
        return Err(format!("progress {got:?}, expected {want:?}"));
    }
    Ok(format!(
        "{steps} notifications, in order; the call took {}",
        ms(took)
    ))
}

/// The `errors` check: a failing tool gives isError; an unknown resource, -32602.
pub(crate) async fn check_errors(client: &Client, kind: Kind) -> Check {
    // A tool that fails is a result with isError (and is not checked
    // against the tool's output schema: the Python echo has one).
    let r = client.call_tool("echo", json!({})).await.map_err(err)?;
    if !r.is_error() || text_of(&r).is_empty() {
        return Err(format!("echo without its argument gave {r:?}"));
    }
    let uri = match kind {
        Kind::Python => "interop://missing",
        Kind::Everything => "demo://resource/static/document/missing.md",
    };
    match client.read_resource(uri).await {
        Err(e) if e.code() == Some(-32602) => {}
        other => return Err(format!("reading {uri} gave {other:?}, not a -32602 error")),
    }
    if !client.is_alive() {
        return Err("the connection died".into());
    }
    Ok("tool error as isError result; unknown resource as -32602".into())
}

/// The `concurrent` check: 16 calls at once each get their own answer.
pub(crate) async fn check_concurrent(client: &Client, kind: Kind) -> Check {
    let calls = (0..16).map(|i| {
        let client = client.clone();
        async move {
            let text = format!("call {i}");
            let r = call(&client, "echo", echo_args(kind, &text)).await?;
            if text_of(&r).ends_with(&text) {
                Ok(())
            } else {
                Err(format!("call {i} got {:?}", text_of(&r)))
            }
        }
    });
    let start = Instant::now();
    let results = futures::future::join_all(calls).await;
    let took = start.elapsed();
    let wrong: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    Ok(format!(
        "16 echo calls at once, each answered with its own text, in {}",
        ms(took)
    ))
}

/// What the Python server writes to stderr when its `slow` tool is
/// cancelled (see python_server.py).
const SLOW_CANCELLED: &str = "interop-python: slow was cancelled";

/// The `cancel` check: a cancelled call ends at once, the cancel reaches
/// the server (the Python server says so on stderr; server-everything
/// finishes the operation but sends no result for it), and the connection
/// still works.
pub(crate) async fn check_cancel(client: &Client, kind: Kind, seen: &Seen) -> Check {
    let (tool, args) = match kind {
        Kind::Python => ("slow", json!({ "seconds": 30 })),
        Kind::Everything => (
            "trigger-long-running-operation",
            json!({ "duration": 3, "steps": 15 }),
        ),
    };
    if seen.wire_log.is_none() && !seen.wire.is_http() {
        return Err(
            "no wire log (the wire tap needs --python): cannot show the cancel reached the server"
                .into(),
        );
    }
    let token = CancellationToken::new();
    let first = Arc::new(Notify::new());
    let count = Arc::new(AtomicUsize::new(0));
    let (f, n) = (first.clone(), count.clone());
    let options = CallOptions::new()
        .cancellation(token.clone())
        .on_progress(move |_| {
            n.fetch_add(1, Ordering::SeqCst);
            f.notify_one();
        });
    let params = CallToolRequestParams::new(tool).with_arguments(object(args));
    let events_before = seen.events().len();
    let c = client.clone();
    let mut pending = tokio::spawn(async move { c.call_tool_with(params, &options).await });
    tokio::select! {
        _ = first.notified() => {}
        r = &mut pending => return Err(format!("the call ended before any progress: {r:?}")),
        _ = tokio::time::sleep(Duration::from_secs(10)) => {
            pending.abort();
            return Err("no progress within 10 s".into());
        }
    }
    token.cancel();
    let cancelled_at = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .map_err(|_| "the call did not end within 5 s of the cancel".to_owned())?
        .map_err(|e| format!("the call's task failed: {e}"))?;
    let took = cancelled_at.elapsed();
    match r {
        Err(e) if matches!(e.transport_error(), Some(TransportError::Cancelled)) => {}
        other => return Err(format!("expected Cancelled, got {other:?}")),
    }
    if took > Duration::from_secs(1) {
        return Err(format!("Cancelled only after {took:?}"));
    }
    // The server may go on working (server-everything does, sending
    // progress): that must not reach the cancelled call's callback, nor
    // hurt the connection.
    let at_cancel = count.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let late_callback = count.load(Ordering::SeqCst) - at_cancel;
    let late_events = seen.events()[events_before..]
        .iter()
        .filter(|e| matches!(e, ServerEvent::Progress(_)))
        .count();
    if late_callback > 0 {
        return Err(format!(
            "{late_callback} progress notification(s) reached the cancelled call's callback"
        ));
    }
    let received = match (kind, seen.wire.is_http()) {
        (Kind::Python, true) => python_took_the_cancel(seen, "the call").await?,
        // Over HTTP there is no wire tap, and server-everything says
        // nothing of a cancel it took.
        (Kind::Everything, true) => "the server's receipt is not observable over HTTP".to_owned(),
        (_, false) => {
            let (id, progress_token) = cancel_on_the_wire(seen, tool)?;
            match kind {
                Kind::Python => python_took_the_cancel(seen, &format!("request {id}")).await?,
                Kind::Everything => everything_took_the_cancel(seen, &id, &progress_token).await?,
            }
        }
    };
    let after = call(client, "echo", echo_args(kind, "after cancel")).await?;
    if !text_of(&after).contains("after cancel") {
        return Err(format!("echo after the cancel said {:?}", text_of(&after)));
    }
    Ok(format!(
        "Cancelled in {}; {received}; {late_events} late progress as events; echo works after",
        ms(took)
    ))
}

/// The wire log shows the call to `tool` and a `notifications/cancelled`
/// for it, both from the client: the call's id and progress token.
fn cancel_on_the_wire(seen: &Seen, tool: &str) -> Result<(Value, Value), String> {
    let wire = seen.wire();
    let call = wire
        .iter()
        .rev()
        .find(|(_, dir, m)| {
            *dir == '>' && m["method"] == "tools/call" && m["params"]["name"] == tool
        })
        .map(|(_, _, m)| m)
        .ok_or_else(|| format!("the wire log has no call to {tool}"))?;
    let id = call["id"].clone();
    let cancelled = wire.iter().any(|(_, dir, m)| {
        *dir == '>' && m["method"] == "notifications/cancelled" && m["params"]["requestId"] == id
    });
    if !cancelled {
        return Err(format!(
            "no notifications/cancelled for request {id} on the wire"
        ));
    }
    Ok((id, call["params"]["_meta"]["progressToken"].clone()))
}

/// The Python server's `slow` tool says on stderr that it was cancelled.
async fn python_took_the_cancel(seen: &Seen, what: &str) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !seen.stderr_has(SLOW_CANCELLED) {
        if Instant::now() >= deadline {
            return Err(format!(
                "the server never said {SLOW_CANCELLED:?} within 5 s of the cancel of {what}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(format!("the server stopped {what} (its stderr says so)"))
}

/// server-everything goes on with a cancelled operation (it keeps sending
/// progress) but, having taken the cancel, sends no result for it: the
/// wire log shows the operation's last step and no answer after it.
async fn everything_took_the_cancel(
    seen: &Seen,
    id: &Value,
    token: &Value,
) -> Result<String, String> {
    if token.is_null() {
        return Err(format!("request {id} carried no progress token"));
    }
    let last_step = || {
        seen.wire().into_iter().find_map(|(at, dir, m)| {
            let p = &m["params"];
            (dir == '<'
                && m["method"] == "notifications/progress"
                && p["progressToken"] == *token
                && p["progress"].is_number()
                && p["progress"] == p["total"])
                .then_some(at)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    let at = loop {
        if let Some(at) = last_step() {
            break at;
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the cancelled operation (request {id}) sent no last progress step within 15 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Its answer would follow the last step at once; 2 s is ample.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let answered = seen
        .wire()
        .into_iter()
        .any(|(_, dir, m)| dir == '<' && m.get("method").is_none() && m["id"] == *id);
    if answered {
        return Err(format!(
            "server-everything answered the cancelled request {id}: the cancel did not reach it"
        ));
    }
    Ok(format!(
        "the server finished the operation ({} ms into the log) and sent no result for request {id}",
        at as u64
    ))
}

/// The `close` check: after close, calls fail with Closed.
pub(crate) async fn check_close(client: &Client) -> Check {
    client.close().await;
    if client.is_alive() {
        return Err("still alive after close".into());
    }
    match client.call_tool("echo", json!({})).await {
        Err(e) if matches!(e.transport_error(), Some(TransportError::Closed)) => {
            Ok("closed; later calls fail with Closed".into())
        }
        other => Err(format!("a call after close gave {other:?}")),
    }
}
