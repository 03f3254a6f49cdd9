//! The client's requests that name one entry of a merged list, sent to the
//! server that listed it: a tool or prompt by its bridged name (the
//! server's own name put back), a resource by its URI, a completion by the
//! prompt or template it completes. The client's id, params and `_meta`
//! go with it, and its options (a progress listener, the cancel).

use futures::future::join_all;
use mcp_protocol::Request;
use mcp_protocol::error_codes::{INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
use mcp_transport::{RequestOptions, TransportError};
use serde_json::{Value, json};

use crate::fanout::lists::{Kind, merged};
use crate::fanout::member::{Routes, Shared, rpc, unknown};

/// `tools/call` or `prompts/get`: to the server whose entry the name is,
/// under the server's own name.
pub(crate) async fn by_name(
    shared: &Shared,
    kind: Kind,
    mut request: Request,
    options: RequestOptions,
) -> Result<Value, TransportError> {
    let word = if kind == Kind::Tools {
        "tool"
    } else {
        "prompt"
    };
    let name = text(request.params.as_ref(), "/name")
        .ok_or_else(|| rpc(INVALID_PARAMS, format!("{} needs a name", request.method)))?;
    let (index, own) = find(shared, kind, &name)
        .await
        .ok_or_else(|| unknown(word, &name, shared))?;
    if let Some(params) = request.params.as_mut() {
        params["name"] = Value::String(own);
    }
    send(shared, index, request, options).await
}

/// `resources/read`, `resources/subscribe`, `resources/unsubscribe`: to the
/// server that listed the URI; a URI no list has (one of a template, say)
/// is tried on each server in turn, and the first answer that is not an
/// error is the client's.
pub(crate) async fn by_uri(
    shared: &Shared,
    request: Request,
    options: RequestOptions,
) -> Result<Value, TransportError> {
    let uri = text(request.params.as_ref(), "/uri")
        .ok_or_else(|| rpc(INVALID_PARAMS, format!("{} needs a uri", request.method)))?;
    match find_uri(shared, Kind::Resources, &uri).await {
        Some(index) => send(shared, index, request, options).await,
        None => in_turn(shared, request, options, "resource", &uri).await,
    }
}

/// `completion/complete`: to the server of the prompt (under its own
/// name) or of the resource template.
pub(crate) async fn completion(
    shared: &Shared,
    mut request: Request,
    options: RequestOptions,
) -> Result<Value, TransportError> {
    let params = request.params.as_ref();
    match text(params, "/ref/type").as_deref() {
        Some("ref/prompt") => {
            let name = text(params, "/ref/name")
                .ok_or_else(|| rpc(INVALID_PARAMS, "a ref/prompt needs a name"))?;
            let (index, own) = find(shared, Kind::Prompts, &name)
                .await
                .ok_or_else(|| unknown("prompt", &name, shared))?;
            if let Some(reference) = request.params.as_mut().and_then(|p| p.get_mut("ref")) {
                reference["name"] = Value::String(own);
            }
            send(shared, index, request, options).await
        }
        Some("ref/resource") => {
            let uri = text(params, "/ref/uri")
                .ok_or_else(|| rpc(INVALID_PARAMS, "a ref/resource needs a uri"))?;
            match find_uri(shared, Kind::Templates, &uri).await {
                Some(index) => send(shared, index, request, options).await,
                None => in_turn(shared, request, options, "resource template", &uri).await,
            }
        }
        other => Err(rpc(
            INVALID_PARAMS,
            format!("completion/complete: unknown ref type {other:?}"),
        )),
    }
}

/// `logging/setLevel`: to every server that logs; answered once all have.
pub(crate) async fn to_all(
    shared: &Shared,
    request: Request,
    capability: &str,
) -> Result<Value, TransportError> {
    let asked = shared
        .live()
        .filter(|(_, m)| m.has(capability))
        .map(|(_, member)| shared.ask(member, &request.method, request.params.clone()))
        .collect::<Vec<_>>();
    if asked.is_empty() {
        return Err(rpc(
            METHOD_NOT_FOUND,
            format!("none of the bridge's servers has {capability}"),
        ));
    }
    let outcomes = join_all(asked).await;
    let first_error = outcomes.iter().find_map(|o| o.as_ref().err().cloned());
    match (outcomes.iter().any(Result::is_ok), first_error) {
        (false, Some(error)) => Err(error),
        _ => Ok(json!({})),
    }
}

/// Sends the client's request to one member, if it is still there.
async fn send(
    shared: &Shared,
    index: usize,
    request: Request,
    options: RequestOptions,
) -> Result<Value, TransportError> {
    let member = &shared.members[index];
    if !member.is_live() {
        return Err(rpc(
            INTERNAL_ERROR,
            format!(
                "the server {:?} of the bridge is gone; {} needs it",
                member.name, request.method
            ),
        ));
    }
    member.transport.request(request, options).await
}

/// Each live member in turn, until one answers without an error.
async fn in_turn(
    shared: &Shared,
    request: Request,
    options: RequestOptions,
    word: &str,
    uri: &str,
) -> Result<Value, TransportError> {
    let mut last = None;
    for (_, member) in shared.live().filter(|(_, m)| m.has("resources")) {
        match member
            .transport
            .request(request.clone(), options.clone())
            .await
        {
            Ok(result) => return Ok(result),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| unknown(word, uri, shared)))
}

/// Where a bridged tool or prompt name leads; the list is read again
/// once when the name is not known (a client that calls before listing,
/// or after the list changed).
async fn find(shared: &Shared, kind: Kind, name: &str) -> Option<(usize, String)> {
    let lookup = |routes: &Routes| match kind {
        Kind::Tools => routes.tools.get(name).cloned(),
        _ => routes.prompts.get(name).cloned(),
    };
    let known = lookup(&shared.routes());
    if known.is_some() {
        return known;
    }
    merged(shared, kind).await;
    lookup(&shared.routes())
}

/// Which member listed a URI (or URI template), reading the list again
/// once when it is not known.
async fn find_uri(shared: &Shared, kind: Kind, uri: &str) -> Option<usize> {
    let lookup = |routes: &Routes| match kind {
        Kind::Templates => routes.templates.get(uri).copied(),
        _ => routes.resources.get(uri).copied(),
    };
    let known = lookup(&shared.routes());
    if known.is_some() {
        return known;
    }
    merged(shared, kind).await;
    lookup(&shared.routes())
}

/// A string at `pointer` in the params.
fn text(params: Option<&Value>, pointer: &str) -> Option<String> {
    params?.pointer(pointer)?.as_str().map(str::to_owned)
}
