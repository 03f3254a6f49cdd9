//! Requests from the server: handled concurrently, answered, aborted by an
//! inbound cancel, or refused without a handler.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::error_codes::{METHOD_NOT_FOUND, URL_ELICITATION_REQUIRED};
use mcp_protocol::methods::{
    ELICITATION_CREATE, NOTIFICATION_CANCELLED, PING, ROOTS_LIST, SAMPLING_CREATE_MESSAGE,
};
use mcp_protocol::{ErrorObject, ErrorResponse, Message, Request, RequestId, Response};
use mcp_transport::{ConnectionHandlers, ServerRequestHandler};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::conn::{Conn, Ctx, show};
use super::{Checked, Verdict};

/// The handler the server-request rule installs.
struct TestHandler {
    started: tokio::sync::mpsc::UnboundedSender<RequestId>,
    aborted: tokio::sync::mpsc::UnboundedSender<RequestId>,
}

struct OnDrop(Option<(tokio::sync::mpsc::UnboundedSender<RequestId>, RequestId)>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some((tx, id)) = self.0.take() {
            let _ = tx.send(id);
        }
    }
}

impl ServerRequestHandler for TestHandler {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        match request.method.as_str() {
            PING => std::future::ready(Ok(json!({}))).boxed(),
            ROOTS_LIST => std::future::ready(Ok(json!({
                "roots": [{ "uri": "file:///tmp", "name": "tmp" }]
            })))
            .boxed(),
            ELICITATION_CREATE => std::future::ready(Err(ErrorObject::new(
                URL_ELICITATION_REQUIRED,
                "a URL elicitation comes first",
            )
            .with_data(json!({ "why": "the contract suite" }))))
            .boxed(),
            "contract/slow" => {
                let _ = self.started.send(request.id.clone());
                let guard = OnDrop(Some((self.aborted.clone(), request.id)));
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok(json!({ "finished": true }))
                }
                .boxed()
            }
            _ => std::future::ready(Err(ErrorObject::new(METHOD_NOT_FOUND, "not handled"))).boxed(),
        }
    }
}

pub(super) async fn server_requests(ctx: Ctx) -> Checked {
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let (aborted_tx, mut aborted) = tokio::sync::mpsc::unbounded_channel();
    let handler = TestHandler {
        started: started_tx,
        aborted: aborted_tx,
    };
    let handlers = ConnectionHandlers::discard().with_server_requests(Arc::new(handler));
    let mut c = ctx.connect(handlers).await;
    c.peer()?;

    c.send(Request::new("s-1", PING, None)).await?;
    expect_answer(&mut c, "s-1".into(), Ok(json!({}))).await?;
    c.send(Request::new(2, ROOTS_LIST, Some(json!({})))).await?;
    expect_answer(
        &mut c,
        2.into(),
        Ok(json!({ "roots": [{ "uri": "file:///tmp", "name": "tmp" }] })),
    )
    .await?;
    c.send(Request::new(
        3,
        ELICITATION_CREATE,
        Some(json!({ "message": "?" })),
    ))
    .await?;
    expect_answer(
        &mut c,
        3.into(),
        Err(
            ErrorObject::new(URL_ELICITATION_REQUIRED, "a URL elicitation comes first")
                .with_data(json!({ "why": "the contract suite" })),
        ),
    )
    .await?;

    // A slow handler holds up nothing, and an inbound cancel aborts it.
    c.send(Request::new(4, "contract/slow", None)).await?;
    let within = c.u(30);
    let got = timeout(within, started.recv()).await;
    ensure!(
        matches!(&got, Ok(Some(id)) if *id == RequestId::Number(4)),
        "the handler did not start on request 4 within {within:?}"
    );
    c.send(Request::new("s-5", PING, None)).await?;
    expect_answer(&mut c, "s-5".into(), Ok(json!({}))).await?;
    c.notify_from_peer(
        NOTIFICATION_CANCELLED,
        json!({ "requestId": 4, "reason": "changed my mind" }),
    )
    .await?;
    let got = timeout(within, aborted.recv()).await;
    ensure!(
        matches!(&got, Ok(Some(id)) if *id == RequestId::Number(4)),
        "an inbound notifications/cancelled did not abort the handler within {within:?}"
    );
    c.expect_quiet("for an aborted server request").await?;
    c.end().await;
    Ok(())
}

async fn expect_answer(
    c: &mut Conn,
    id: RequestId,
    expected: Result<Value, ErrorObject>,
) -> Checked {
    let what = format!("the answer to server request {id}");
    let m = c.recv(&what).await?;
    let ok = match (&m, &expected) {
        (Message::Response(r), Ok(v)) => r.id == id && r.result == *v,
        (Message::Error(e), Err(err)) => e.id.as_ref() == Some(&id) && e.error == *err,
        _ => false,
    };
    let expected = match expected {
        Ok(result) => Message::Response(Response {
            id: id.clone(),
            result,
        }),
        Err(error) => Message::Error(ErrorResponse {
            id: Some(id.clone()),
            error,
        }),
    };
    ensure!(
        ok,
        "{what}: expected {}, the peer saw {}",
        show(&expected),
        show(&m)
    );
    Ok(())
}

pub(super) async fn unhandled_server_request(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    c.send(Request::new(7, SAMPLING_CREATE_MESSAGE, Some(json!({}))))
        .await?;
    let m = c.recv("the answer to server request 7").await?;
    ensure!(
        matches!(&m, Message::Error(e) if e.id == Some(7.into()) && e.error.code == METHOD_NOT_FOUND),
        "an unhandled server request got {}, not a {METHOD_NOT_FOUND} error",
        show(&m)
    );
    c.end().await;
    Ok(())
}
