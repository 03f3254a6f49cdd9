//! Correlation: the ids the client chose, the result and error answers
//! they carry, duplicates, and a thousand at once.

use std::collections::HashMap;

use mcp_protocol::error_codes::{METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION};
use mcp_protocol::methods::TOOLS_LIST;
use mcp_protocol::{ErrorObject, ErrorResponse, Message, RequestId};
use mcp_transport::{ResponseFuture, TransportError};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::conn::{Ctx, complete, show};
use super::{Checked, Verdict, fail, peerless_part};

pub(super) async fn ids_not_renumbered(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let ids: Vec<RequestId> = vec![
        RequestId::Number(7),
        RequestId::String("req-α/1".into()),
        RequestId::Number(0),
        RequestId::Number(i64::MAX),
        RequestId::Number(-5),
        RequestId::String(String::new()),
        RequestId::String("42".into()),
        RequestId::Number(42),
    ];
    let mut futures = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        futures.push(c.request(id.clone(), "contract/echo", Some(json!({ "i": i }))));
    }
    for (i, id) in ids.iter().enumerate() {
        let r = c.recv_request(id.clone(), "contract/echo").await?;
        ensure!(
            r.params == Some(json!({ "i": i })),
            "request {id} reached the peer with params {:?}",
            r.params
        );
    }
    for (i, id) in ids.iter().enumerate().rev() {
        c.answer(id.clone(), json!({ "i": i, "id": id })).await?;
    }
    for (i, (f, id)) in futures.into_iter().zip(&ids).enumerate() {
        c.expect_result(
            f,
            complete(json!({ "i": i, "id": id })),
            &format!("request {id}"),
        )
        .await?;
    }
    c.end().await;
    Ok(())
}

pub(super) async fn result_normalized(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if c.peer.is_none() {
        let r = c
            .outcome(c.request(1, TOOLS_LIST, None), 30, "request 1")
            .await?;
        let v = r.map_err(|e| fail(format!("expected a result, got {e:?}")))?;
        ensure!(
            v.get("resultType") == Some(&json!("complete")),
            "the result {v} has no resultType \"complete\""
        );
        c.end().await;
        return Err(peerless_part(
            "the check that the transport's own result has resultType \"complete\"",
        ));
    }
    let cases = [
        (
            json!({ "tools": [] }),
            json!({ "tools": [], "resultType": "complete" }),
        ),
        (json!({}), json!({ "resultType": "complete" })),
        (
            json!({ "resultType": "input_required", "inputRequests": {}, "requestState": "s" }),
            json!({ "resultType": "input_required", "inputRequests": {}, "requestState": "s" }),
        ),
        (
            json!({ "resultType": "complete", "_meta": { "x": 1 } }),
            json!({ "resultType": "complete", "_meta": { "x": 1 } }),
        ),
    ];
    for (i, (wire, expected)) in cases.into_iter().enumerate() {
        let id = i as i64 + 1;
        let f = c.request(id, "contract/result", None);
        c.recv_request(id, "contract/result").await?;
        c.answer(id, wire.clone()).await?;
        c.expect_result(f, expected, &format!("the answer {wire}"))
            .await?;
    }
    c.end().await;
    Ok(())
}

pub(super) async fn rpc_error_verbatim(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let cases = [
        ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version").with_data(
            json!({
                "supported": ["2025-06-18", "2025-11-25"],
                "requested": "2026-07-28",
                "nested": { "a": [1, 2.5, null, true, "ü"] },
            }),
        ),
        ErrorObject::new(METHOD_NOT_FOUND, "Method not found"),
        ErrorObject::new(42, "a custom code").with_data(json!("just a string")),
        ErrorObject::new(-32000, "").with_data(json!(null)),
    ];
    for (i, error) in cases.into_iter().enumerate() {
        let id = i as i64 + 1;
        let f = c.request(id, "contract/error", None);
        c.recv_request(id, "contract/error").await?;
        c.send(ErrorResponse {
            id: Some(id.into()),
            error: error.clone(),
        })
        .await?;
        let got = c.outcome(f, 30, "the error answer").await?;
        // A `"data": null` on the wire reads as no data in JSON-RPC terms;
        // either form is verbatim.
        let ok = match &got {
            Err(TransportError::Rpc {
                code,
                message,
                data,
            }) => {
                *code == error.code
                    && *message == error.message
                    && (*data == error.data || (error.data == Some(Value::Null) && data.is_none()))
            }
            _ => false,
        };
        ensure!(ok, "the error answer {error:?} came out as {got:?}");
    }
    c.end().await;
    Ok(())
}

pub(super) async fn duplicate_id_refused(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let first = c.request(5, "contract/first", None);
    c.recv_request(5, "contract/first").await?;
    let second = c.request(5, "contract/second", None);
    let got = c
        .outcome(second, 10, "the second request with id 5")
        .await?;
    ensure!(
        matches!(&got, Err(TransportError::DuplicateId(id)) if *id == RequestId::Number(5)),
        "a second request with an id in flight gave {got:?}, not DuplicateId"
    );
    c.expect_quiet("for a refused duplicate").await?;
    c.answer(5, json!({ "first": true })).await?;
    c.expect_result(
        first,
        complete(json!({ "first": true })),
        "the first request",
    )
    .await?;
    c.end().await;
    Ok(())
}

pub(super) async fn thousand_concurrent(ctx: Ctx) -> Checked {
    const N: usize = 1000;
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let id_of = |i: usize| -> RequestId {
        if i.is_multiple_of(2) {
            RequestId::Number(10_000 + i as i64)
        } else {
            RequestId::String(format!("c-{i}"))
        }
    };
    let futures: Vec<ResponseFuture> = (0..N)
        .map(|i| c.request(id_of(i), "contract/many", Some(json!({ "i": i }))))
        .collect();
    let mut seen: HashMap<RequestId, usize> = HashMap::new();
    for _ in 0..N {
        let m = c.recv("the next of a thousand requests").await?;
        let Message::Request(r) = &m else {
            return Err(fail(format!(
                "expected a request, the peer saw {}",
                show(&m)
            )));
        };
        let i = r
            .params
            .as_ref()
            .and_then(|p| p["i"].as_u64())
            .ok_or_else(|| fail(format!("a request lost its params: {}", show(&m))))?
            as usize;
        ensure!(r.id == id_of(i), "request {i} arrived with the id {}", r.id);
        seen.insert(r.id.clone(), i);
    }
    ensure!(
        seen.len() == N,
        "only {} distinct requests arrived",
        seen.len()
    );
    // 7919 is prime to 1000: a permutation that is far from the order sent.
    for k in 0..N {
        let i = (k * 7919) % N;
        c.answer(id_of(i), json!({ "i": i })).await?;
    }
    let within = c.u(100);
    let results = timeout(within, futures::future::join_all(futures))
        .await
        .map_err(|_| fail(format!("not every answer arrived within {within:?}")))?;
    for (i, r) in results.into_iter().enumerate() {
        ensure!(
            r.as_ref().ok() == Some(&complete(json!({ "i": i }))),
            "request {i} yielded {r:?}"
        );
    }
    c.end().await;
    Ok(())
}
