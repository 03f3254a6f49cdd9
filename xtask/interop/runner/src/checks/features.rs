//! Checks on the rest of a server: resources, prompts, list changes, roots.

use std::time::Duration;

use base64::Engine as _;

use mcp_client::protocol::Era;
use mcp_client::protocol::types::{ReadResourceResult, ResourceContents};
use mcp_client::{Client, ServerEvent, Watch};
use serde_json::json;

use super::{call, err, missing, text_of, tool_names};
use crate::model::{Check, Kind, PY_TEXT, ROOT_URI, Seen, Target};

/// The `resource` check: resources read back byte for byte.
pub(crate) async fn check_resource(client: &Client, target: &Target) -> Check {
    match target.kind {
        Kind::Python => {
            let text = read_one(client, "interop://text").await?;
            let ResourceContents::Text(t) = &text else {
                return Err(format!("interop://text came as {text:?}"));
            };
            if t.text.as_bytes() != PY_TEXT.as_bytes() {
                return Err(format!("text {:?}, expected {PY_TEXT:?}", t.text));
            }
            let blob = read_one(client, "interop://blob").await?;
            let ResourceContents::Blob(b) = &blob else {
                return Err(format!("interop://blob came as {blob:?}"));
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .map_err(|e| format!("the blob is not valid base64: {e}"))?;
            let want: Vec<u8> = (0..=255).collect();
            if bytes != want {
                return Err(format!(
                    "blob decodes to {} bytes, not 0..=255",
                    bytes.len()
                ));
            }
            Ok(format!("text {} B and blob 256 B identical", PY_TEXT.len()))
        }
        Kind::Everything => {
            let docs = target.docs.as_ref().ok_or("no docs folder")?;
            let file = std::fs::read(docs.join("instructions.md"))
                .map_err(|e| format!("reading the server's own file: {e}"))?;
            let uri = "demo://resource/static/document/instructions.md";
            let contents = read_one(client, uri).await?;
            let ResourceContents::Text(t) = &contents else {
                return Err(format!("{uri} came as {contents:?}"));
            };
            if t.text.as_bytes() != file.as_slice() {
                return Err(format!(
                    "{} bytes read, the file has {}",
                    t.text.len(),
                    file.len()
                ));
            }
            if t.mime_type.as_deref() != Some("text/markdown") {
                return Err(format!("mimeType {:?}", t.mime_type));
            }
            Ok(format!("{} B identical to the file", file.len()))
        }
    }
}

/// Reads `uri`, which must come back as exactly one contents, for `uri`.
async fn read_one(client: &Client, uri: &str) -> Result<ResourceContents, String> {
    let ReadResourceResult { contents, .. } = client.read_resource(uri).await.map_err(err)?;
    let [one] = <[ResourceContents; 1]>::try_from(contents)
        .map_err(|c| format!("{uri}: {} contents, one expected", c.len()))?;
    if one.uri() != Some(uri) {
        return Err(format!("{uri}: contents for {:?}", one.uri()));
    }
    Ok(one)
}

/// The `prompt` check: a prompt with arguments comes back as expected.
pub(crate) async fn check_prompt(client: &Client, kind: Kind) -> Check {
    let (name, args, want) = match kind {
        Kind::Python => (
            "review",
            vec![("code".to_owned(), "fn main() {}".to_owned())],
            "Please review this code:\n\nfn main() {}".to_owned(),
        ),
        Kind::Everything => (
            "args-prompt",
            vec![
                ("city".to_owned(), "Zürich".to_owned()),
                ("state".to_owned(), "ZH".to_owned()),
            ],
            "What's weather in Zürich, ZH?".to_owned(),
        ),
    };
    let r = client.get_prompt(name, args).await.map_err(err)?;
    let texts: Vec<&str> = r
        .messages
        .iter()
        .filter_map(|m| m.content.as_text())
        .collect();
    if texts != [want.as_str()] {
        return Err(format!("messages {texts:?}, expected [{want:?}]"));
    }
    Ok(format!("{} message(s) as expected", r.messages.len()))
}

/// The `list-changed` check: a tools list change is seen, and listing again shows it.
pub(crate) async fn check_list_changed(client: &Client, kind: Kind, seen: &Seen) -> Check {
    match kind {
        Kind::Everything => {
            // Sent right after `initialized`: the on_event callback, which
            // sees events from the first message on, must have it.
            seen.wait_event(Duration::from_secs(5), |e| {
                *e == ServerEvent::ToolsListChanged
            })
            .await
            .ok_or("no tools/list_changed after initialized")?;
            // Listed again, the tools registered on `initialized` are there
            // (a list cached before the notification was dropped).
            let names = tool_names(client).await?;
            let lost = missing(&names, &["trigger-elicitation-request", "get-roots-list"]);
            if !lost.is_empty() {
                return Err(format!(
                    "after list_changed, {lost:?} missing from {names:?}"
                ));
            }
            Ok(format!("event seen; {} tools after it", names.len()))
        }
        Kind::Python => {
            let mut subscription = client.subscribe(Watch::new().tools()).await.map_err(err)?;
            let before = tool_names(client).await?;
            let r = call(client, "add_tool", json!({})).await?;
            let added = text_of(&r);
            let event = tokio::time::timeout(Duration::from_secs(10), subscription.recv())
                .await
                .map_err(|_| "no tools list change within 10 s".to_owned())?;
            if event != Some(ServerEvent::ToolsListChanged) {
                return Err(format!("subscription gave {event:?}"));
            }
            let after = tool_names(client).await?;
            if before.contains(&added) || !after.contains(&added) {
                return Err(format!("{added:?}: before {before:?}, after {after:?}"));
            }
            let how = match client.era() {
                Era::Modern => "subscriptions/listen",
                _ => "notification",
            };
            Ok(format!("{how}; {added} listed after it"))
        }
    }
}

/// The `roots` check: the server asks for the roots and gets ours.
pub(crate) async fn check_roots(client: &Client, kind: Kind, seen: &Seen) -> Check {
    match kind {
        Kind::Everything => {
            // The server asks for roots 350 ms after `initialized`, then
            // logs how many it got.
            let log = seen
                .wait_event(Duration::from_secs(5), |e| {
                    matches!(e, ServerEvent::Log(l) if l.data.as_str().is_some_and(|d| d.starts_with("Roots updated")))
                })
                .await
                .ok_or("the server did not log that it got the roots")?;
            let ServerEvent::Log(log) = log else {
                unreachable!()
            };
            let said = log.data.as_str().unwrap_or_default().to_owned();
            if !said.contains("1 root(s)") {
                return Err(format!("the server logged {said:?}"));
            }
            let r = call(client, "get-roots-list", json!({})).await?;
            if !text_of(&r).contains(ROOT_URI) {
                return Err(format!("get-roots-list said {:?}", text_of(&r)));
            }
            Ok("roots/list answered; the server lists our root".into())
        }
        Kind::Python => {
            let r = call(client, "roots", json!({})).await?;
            if text_of(&r) != ROOT_URI {
                return Err(format!("roots tool said {:?}", text_of(&r)));
            }
            let how = match client.era() {
                Era::Modern => "input_required round trip",
                _ => "roots/list request",
            };
            Ok(format!("{how}; our root came back"))
        }
    }
}
