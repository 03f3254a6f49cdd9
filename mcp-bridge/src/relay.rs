//! The relay between one downstream client and its own upstream
//! session: what each side sends unasked goes to the other, requests carry
//! their ids, params and `_meta` through, answers and errors come back
//! verbatim.
//!
//! Both sides are [`Transport`]s built on the engine, which already does
//! what a peer of either role needs: the downstream client's requests
//! reach this relay as the "server requests" of the downstream connection
//! (each on a task of its own, aborted by the client's
//! `notifications/cancelled`), and the upstream server's requests reach it
//! as those of the upstream connection. Dropping a relayed call's future
//! cancels it on the far side, so a cancel crosses the bridge both ways.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{
    INITIALIZE, NOTIFICATION_CANCELLED, NOTIFICATION_INITIALIZED, NOTIFICATION_TOOLS_LIST_CHANGED,
    SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN, TOOLS_CALL, TOOLS_LIST,
};
use mcp_protocol::{ErrorObject, Notification, Request, RequestId};
use mcp_transport::{
    ConnectionHandlers, RequestOptions, ServerRequestHandler, Transport, TransportError,
};
use serde_json::Value;

use crate::downgrade;
use crate::link::{Link, UpstreamEra};
use crate::relayed::{as_sent, passing, relayed_error};
use crate::tool_search::{self, Asked, Index};
use crate::{listen, suspend, translate};

/// What the upstream connection does with what the server sends unasked:
/// notifications go to the client, requests to the client and back.
pub(crate) fn upstream_handlers(link: &Arc<Link>) -> ConnectionHandlers {
    let to_client = link.clone();
    let listener = passing(move |n| {
        if let Some(catalog) = &to_client.search
            && n.method == NOTIFICATION_TOOLS_LIST_CHANGED
        {
            // What a search finds changed, whoever listens.
            catalog.stale();
        }
        // A 2026-07-28 client hears list changes only on its subscriptions.
        if to_client.downgraded.initialized()
            && let Some(tagged) = to_client.subscriptions.deliver(n)
        {
            for (id, n) in tagged {
                to_client.notify_client_during(n, Some(&id));
            }
        } else {
            to_client.notify_client(n.clone());
        }
    });
    let handlers =
        ConnectionHandlers::new(listener).with_server_requests(Arc::new(ToClient(link.clone())));
    match link.server_lines.get() {
        Some(tap) => handlers.with_line_tap(tap.clone()),
        None => handlers,
    }
}

/// What the downstream connection does with what the client sends: its
/// requests go upstream and back, its notifications upstream.
pub(crate) fn downstream_handlers(link: &Arc<Link>) -> ConnectionHandlers {
    let to_server = link.clone();
    let listener = passing(move |n| {
        // The engine acts on a cancel itself (it aborts the relayed call,
        // which cancels it upstream); passing it on would say it twice.
        if n.method == NOTIFICATION_INITIALIZED {
            to_server
                .handshake
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .initialized = true;
        }
        if let Some(translation) = to_server.translation.get() {
            // A 2026-07-28 server takes no notifications; the handshake's
            // end starts the subscription that brings its list changes.
            if n.method == NOTIFICATION_INITIALIZED
                && let Some(upstream) = to_server.upstream()
            {
                let client = Arc::downgrade(&to_server);
                let notify: translate::Notify = Arc::new(move |n| {
                    if let Some(link) = client.upgrade() {
                        link.notify_client(n);
                    }
                });
                translate::listen(translation, upstream, notify);
            } else {
                tracing::debug!(method = %n.method, "a notification a 2026-07-28 server has no use for");
            }
        } else if n.method != NOTIFICATION_CANCELLED {
            forward_to(to_server.upstream(), n.clone(), "server");
        }
    });
    ConnectionHandlers::new(listener).with_server_requests(Arc::new(ToServer(link.clone())))
}

/// Sends a notification to the server, if it is there.
fn forward_to(to: Option<Arc<dyn Transport>>, notification: Notification, side: &str) {
    let Some(transport) = to else {
        tracing::debug!(method = %notification.method, "a notification before the {side} was connected");
        return;
    };
    if let Err(e) = transport.notify(notification) {
        tracing::debug!(error = %e, "a notification for the {side} was not sent");
    }
}

/// The client's requests, relayed to the server.
struct ToServer(Arc<Link>);

impl ServerRequestHandler for ToServer {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(relay_to_server(self.0.clone(), request, Vec::new()))
    }
}

/// Relays one of the client's requests to the server, with these HTTP
/// headers (the `Mcp-Param-*` a client over HTTP sent), and gives back
/// the server's answer as the client should get it; under tool search,
/// the client's tools are the bridge's own two.
pub(crate) async fn relay_to_server(
    link: Arc<Link>,
    request: Request,
    headers: Vec<(String, String)>,
) -> Result<Value, ErrorObject> {
    if link.search.is_some() && (request.method == TOOLS_LIST || request.method == TOOLS_CALL) {
        return searching(link, request, headers).await;
    }
    relay(link, request, headers).await
}

/// A client's `tools/list` and `tools/call` under tool search: the list
/// is the two tools, a search is answered from the server's tools, a call
/// relayed as a `tools/call` of the tool named.
async fn searching(
    link: Arc<Link>,
    mut request: Request,
    headers: Vec<(String, String)>,
) -> Result<Value, ErrorObject> {
    if request.method == TOOLS_LIST {
        return Ok(tool_search::list(link.legacy()));
    }
    match tool_search::asked(request.params.as_ref())? {
        Asked::Direct => relay(link, request, headers).await,
        Asked::Search { query, limit } => {
            let index = indexed(&link, &request).await?;
            Ok(tool_search::found(&index, &query, limit, link.legacy()))
        }
        Asked::Call { name, params } => {
            // Listed first: a read-only policy knows a tool's hint from
            // the lists only.
            let index = indexed(&link, &request).await?;
            // The policy's own words for a hidden tool, before "unknown".
            if !link.tools.is_open() {
                link.tools.check_call(Some(&params))?;
            }
            if index.get(&name).is_none() {
                return Err(tool_search::unknown(&name));
            }
            request.params = Some(params);
            relay(link, request, headers).await
        }
    }
}

/// The server's tools as the policy shows them, every page: listed again
/// (through the relay, so in the era the server speaks) when stale.
async fn indexed(link: &Arc<Link>, asking: &Request) -> Result<Arc<Index>, ErrorObject> {
    let catalog = link.search.as_ref().expect("only under tool search");
    if let Some(index) = catalog.fresh() {
        return Ok(index);
    }
    let as_of = catalog.changes();
    // The asking call's `_meta` (a 2026-07-28 client's protocol version
    // and capabilities), but not its progress token: the list is not
    // the call.
    let mut meta = asking.meta().cloned().unwrap_or_default();
    meta.remove(PROGRESS_TOKEN);
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let mut params = serde_json::json!({});
        if !meta.is_empty() {
            params["_meta"] = Value::Object(meta.clone());
        }
        if let Some(cursor) = cursor.take() {
            params["cursor"] = cursor;
        }
        let n = link.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("mcp-bridge-tool-search-{n}"));
        let mut page = relay(
            link.clone(),
            Request::new(id, TOOLS_LIST, Some(params)),
            Vec::new(),
        )
        .await?;
        // The relay applies the policy only to what it relays as it is.
        if !link.tools.is_open() {
            link.tools.filter_list(&mut page);
        }
        if let Some(listed) = page.get_mut("tools").and_then(Value::as_array_mut) {
            tools.append(listed);
        }
        cursor = page
            .get("nextCursor")
            .filter(|c| c.as_str().is_some_and(|c| !c.is_empty()))
            .cloned();
        if cursor.is_none() {
            break;
        }
    }
    Ok(catalog.keep(Index::new(tools), as_of))
}

/// The most pages of tools a search reads: a server whose cursors never
/// end is not read forever.
const MAX_PAGES: usize = 1000;

/// [`relay_to_server`], the tools as the server has them.
async fn relay(
    link: Arc<Link>,
    mut request: Request,
    headers: Vec<(String, String)>,
) -> Result<Value, ErrorObject> {
    let Some(upstream) = link.upstream() else {
        return Err(ErrorObject::new(
            INTERNAL_ERROR,
            "the bridge is not connected to the server yet",
        ));
    };
    let initialize = request.method == INITIALIZE;
    // An `initialize` on a link already serving a 2026-07-28 client from
    // its own legacy session is that client's (refused below), not a
    // legacy client's handshake.
    if initialize && !link.downgraded.initialized() {
        let _ = link.legacy.set(true);
        link.handshake
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .initialize = request.params.clone();
    }
    let _counted = Counted::new(&link.in_flight);
    let listened = listened_for(&link, &request);
    let downgraded = link.upstream_era == UpstreamEra::Legacy && !link.legacy();
    if downgraded {
        match made_legacy(&link, &upstream, request).await? {
            Ok(fit) if fit.method == SUBSCRIPTIONS_LISTEN => {
                return listen::subscribed(&link, &upstream, fit).await;
            }
            Ok(fit) => request = fit,
            Err(discovered) => return Ok(discovered),
        }
    }
    if let Some(translation) = link.translation.get().cloned() {
        let (asker, during) = (link.clone(), request.id.clone());
        let ask = move |question: Request| -> BoxFuture<'static, Result<Value, ErrorObject>> {
            let (link, during) = (asker.clone(), during.clone());
            Box::pin(async move { link.ask_client(question, Some(&during)).await })
        };
        return translate::request(&translation, &upstream, request, listened, &ask)
            .await
            .map(|result| as_sent(result, true));
    }
    // A legacy client's handshake (a 2026-07-28 client's `initialize` is
    // relayed, and refused, as the request it is).
    let handshake = initialize && link.legacy();
    if handshake && link.upstream_era == UpstreamEra::Modern {
        return translated(&link, &upstream, &request).await;
    }
    let as_is = AsIs {
        initialize,
        handshake,
        downgraded,
    };
    relay_as_is(&link, &upstream, request, headers, listened(), as_is).await
}

/// How a request goes on in the era it came in.
struct AsIs {
    initialize: bool,
    /// A legacy client's handshake, translated if the server refuses it.
    handshake: bool,
    /// A 2026-07-28 client's request made fit for a legacy session.
    downgraded: bool,
}

/// The options of each request `request` becomes: progress reaches a
/// call only through a listener of its own (anything else tied to a call
/// goes on to the connection's), and goes to the client as it comes; so
/// do a subscription's notifications.
fn listened_for(link: &Arc<Link>, request: &Request) -> impl Fn() -> RequestOptions + use<> {
    let tied = (request.method == SUBSCRIPTIONS_LISTEN
        || request
            .meta()
            .is_some_and(|m| m.contains_key(PROGRESS_TOKEN)))
    .then(|| (link.clone(), request.id.clone()));
    move || {
        let options = RequestOptions::new();
        match &tied {
            Some((link, during)) => {
                let (link, during) = (link.clone(), during.clone());
                options.listener(passing(move |n| {
                    link.notify_client_during(n.clone(), Some(&during))
                }))
            }
            None => options,
        }
    }
}

/// A request relayed in its own era: `Mcp-Param-*` headers for a
/// 2026-07-28 call, the tool policy, a call the server may ask during
/// held for the client's retry, and the answer as the client should get it.
async fn relay_as_is(
    link: &Arc<Link>,
    upstream: &Arc<dyn Transport>,
    request: Request,
    headers: Vec<(String, String)>,
    mut options: RequestOptions,
    how: AsIs,
) -> Result<Value, ErrorObject> {
    let handshake = how.handshake.then(|| request.clone());
    let method = request.method.clone();
    options.headers = if headers.is_empty() && method == TOOLS_CALL && !link.legacy() {
        // A 2026-07-28 call mirrors its annotated arguments in headers,
        // which a client that did not come over HTTP never wrote.
        link.schemas.param_headers(request.params.as_ref())
    } else {
        headers
    };
    if how.initialize {
        // The spec says initialize is never cancelled.
        options = options.no_wire_cancel();
    }
    let policed = !link.tools.is_open();
    if policed && method == TOOLS_CALL {
        link.tools.check_call(request.params.as_ref())?;
    }
    if how.downgraded && suspend::may_suspend(&method) {
        // The server may ask during the call: held for the client's retry.
        let relayed = link.suspended.relay(upstream, request, options).await;
        let result = relayed.map_err(downgrade::modern_error)?;
        return Ok(downgrade::hinted(&method, result));
    }
    match upstream.request(request, options).await {
        Ok(mut result) => {
            if method == TOOLS_LIST {
                link.schemas.learn(&result);
                if policed {
                    link.tools.filter_list(&mut result);
                }
            }
            if how.downgraded {
                result = downgrade::hinted(&method, result);
            }
            Ok(as_sent(result, link.legacy()))
        }
        Err(error) if handshake.is_some() && translate::refuses_handshake(&error) => {
            let request = handshake.expect("checked");
            translated(link, upstream, &request).await
        }
        Err(error) => Err(upstream_error(link, &method, error)),
    }
}

/// A 2026-07-28 client's request to a server spoken to in the handshake
/// era: the session opened once, its discover answered from it
/// (`Err`: the answer), any other request made fit for it.
async fn made_legacy(
    link: &Arc<Link>,
    upstream: &Arc<dyn Transport>,
    request: Request,
) -> Result<Result<Request, Value>, ErrorObject> {
    downgrade::admit(&request)?;
    let discovered = match link.downgraded.get() {
        Some(discovered) => discovered,
        None => {
            opened(link, upstream, &request).await?;
            link.downgraded.get().expect("opened")
        }
    };
    if request.method == SERVER_DISCOVER {
        return Ok(Err(discovered.clone()));
    }
    // A call that may be held is stripped once its capabilities are read.
    if suspend::may_suspend(&request.method) {
        Ok(Ok(request))
    } else {
        Ok(Ok(downgrade::strip(request)))
    }
}

/// Opens the legacy session once, on a task of its own: a first request
/// given up half way (a probe's timeout, a closed stream) must not throw
/// away the server's answer to the one `initialize` it takes. Its params
/// are kept for a restart to send again.
async fn opened(
    link: &Arc<Link>,
    upstream: &Arc<dyn Transport>,
    request: &Request,
) -> Result<(), ErrorObject> {
    let (link, upstream, request) = (link.clone(), upstream.clone(), request.clone());
    let opening = tokio::spawn(async move {
        link.downgraded
            .get_or_try_init(|| async {
                let (discovered, params) = downgrade::discover(&upstream, &request).await?;
                let mut handshake = link.handshake.lock().unwrap_or_else(|p| p.into_inner());
                handshake.initialize = Some(params);
                handshake.initialized = true;
                Ok::<_, ErrorObject>(discovered)
            })
            .await
            .map(|_| ())
    });
    opening.await.unwrap_or_else(|e| {
        Err(ErrorObject::new(
            INTERNAL_ERROR,
            format!("the bridge's handshake with the legacy server stopped: {e}"),
        ))
    })
}

/// The server's failure of a relayed request, as the client gets it (with
/// what to do when the server asks for authorization).
fn upstream_error(link: &Link, method: &str, error: TransportError) -> ErrorObject {
    let mut object = relayed_error(method, error.clone(), "server");
    if let (TransportError::AuthorizationRequired { .. }, Some(hint)) =
        (&error, &link.authorization_hint)
    {
        object.message = format!("{}; {hint}", object.message);
    }
    object
}

/// Answers a legacy client's `initialize` from a 2026-07-28 server's
/// `server/discover`, and translates the link from then on.
async fn translated(
    link: &Arc<Link>,
    upstream: &Arc<dyn Transport>,
    request: &Request,
) -> Result<Value, ErrorObject> {
    let (result, translation) = translate::initialize(upstream, request).await?;
    link.translate(translation);
    Ok(result)
}

/// The server's requests (elicitation, sampling, roots, ping), relayed to
/// the client.
struct ToClient(Arc<Link>);

impl ServerRequestHandler for ToClient {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let link = self.0.clone();
        Box::pin(async move { link.ask_client(request, None).await })
    }

    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let (link, during) = (self.0.clone(), during.clone());
        Box::pin(async move { link.ask_client(request, Some(&during)).await })
    }
}

/// Counts itself in while it lives.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Counted(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
