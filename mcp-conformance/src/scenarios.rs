//! What each scenario asks of a client: which calls to make and which
//! answers to give. Everything on the wire is the library's own doing.

use mcp_client::handlers::HandlerError;
use mcp_client::mrtr::{InputAnswer, Outcome};
use mcp_client::protocol::Era;
use mcp_client::protocol::types::{CallToolRequestParams, ElicitResult};
use mcp_client::{CallOptions, Client, ClientBuilder, EraMode, HttpTransportBuilder};
use serde_json::{Map, Value, json};
use std::sync::Arc;

use crate::context::Run;

/// A flow's failure: a message for stderr.
type Flow = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Connects, runs the scenario's flow, and closes.
pub(crate) async fn run(run: &Run) -> Flow {
    let mut transport = HttpTransportBuilder::new(run.url.clone());
    let oauth = crate::auth::provider(run, &transport.http_service()?)?;
    if let Some(oauth) = &oauth {
        transport = transport.header_provider(Arc::new(oauth.clone()));
    }
    let client = builder(run).connect(transport).await;
    let client = match (client, &oauth) {
        (Ok(client), _) => client,
        (Err(e), Some(oauth)) => return Err(with_auth_error(e.into(), oauth)),
        (Err(e), None) => return Err(e.into()),
    };
    eprintln!(
        "mcp-conformance-client: connected, {} era, protocol {}",
        client.era(),
        client.protocol_version()
    );
    let outcome = flow(run, &client).await;
    client.close().await;
    match (outcome, &oauth) {
        (Err(e), Some(oauth)) => Err(with_auth_error(e, oauth)),
        (outcome, _) => outcome,
    }
}

/// The error, with why authorization failed when it did (the transport
/// only reports the server's 401 or 403).
fn with_auth_error(
    e: Box<dyn std::error::Error + Send + Sync>,
    oauth: &mcp_auth::OAuthProvider,
) -> Box<dyn std::error::Error + Send + Sync> {
    match oauth.last_error() {
        Some(auth) => format!("{e} ({auth})").into(),
        None => e,
    }
}

/// The client as a user who knows the server's revision would set it up:
/// that era and version pinned, elicitation answered by accepting (the
/// library fills in the schema's defaults for what the answer leaves out).
/// The suite's mocks advertise less than they serve (request-metadata's
/// `server/discover` answers `capabilities: {}`, then serves `tools/list`),
/// so requests are not held back for want of a capability, the library's
/// documented switch for servers that under-advertise.
fn builder(run: &Run) -> ClientBuilder {
    let era = match run.version.era() {
        Era::Modern => EraMode::Modern,
        _ => EraMode::Legacy,
    };
    Client::builder()
        .client_info("mcp-steady-conformance", env!("CARGO_PKG_VERSION"))
        .era(era)
        .protocol_versions([run.version.clone()])
        .cache_capacity(0)
        .enforce_server_capabilities(false)
        .on_elicitation(|request, _ctx| async move {
            eprintln!(
                "mcp-conformance-client: elicitation {:?}: accepting",
                request.message()
            );
            Ok::<_, HandlerError>(ElicitResult::accept(Map::new()))
        })
}

async fn flow(run: &Run, client: &Client) -> Flow {
    match run.scenario.as_str() {
        "initialize" => {
            client.list_all_tools().await?;
        }
        "tools_call" => call_each(client, &["add_numbers"], json!({"a": 2, "b": 3})).await?,
        "elicitation-sep1034-client-defaults" => {
            call(client, "test_client_elicitation_defaults", Map::new()).await?;
        }
        "sse-retry" => {
            call(client, "test_reconnection", Map::new()).await?;
        }
        "request-metadata" | "json-schema-ref-no-deref" => {
            client.list_all_tools().await?;
        }
        "sep-2322-client-request-state" => request_state(client).await?,
        // SEP-2640: list, and load nothing (no file may be fetched).
        "sep-2640-client-no-prefetch" => {
            let skills = client.list_all_skills().await?;
            eprintln!("mcp-conformance-client: {} skill(s) listed", skills.len());
        }
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => load_skills(client).await?,
        "http-standard-headers" => standard_headers(client).await?,
        "http-custom-headers" => {
            client.list_all_tools().await?;
            for (name, arguments) in run.tool_calls() {
                call(client, &name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // The library leaves out the tools it must refuse; every tool it
            // lists may be called.
            for tool in client.list_all_tools().await? {
                call(client, &tool.name, Map::new()).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_all_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("json_schema_2020_12_tool is not listed")?;
            let mut arguments = Map::new();
            arguments.insert("schema".into(), Value::Object(focal.input_schema.clone()));
            call(client, "json_schema_echo", arguments).await?;
        }
        // auth/...: the basic flow (authorization is the provider's part),
        // and the same for any scenario this binary does not know.
        _ => {
            client.list_all_tools().await?;
            call_each(client, &["test-tool"], json!({})).await?;
        }
    }
    Ok(())
}

/// Loads each listed skill through the verified loader, then reads each
/// of its other files: a host acting on a skill. A skill that fails
/// verification ends the flow with its error, before any of its files is
/// read.
async fn load_skills(client: &Client) -> Flow {
    let loader = client.skill_loader("conformance-server");
    for entry in client.list_all_skills().await? {
        let skill = loader.load(&entry).await?;
        eprintln!(
            "mcp-conformance-client: loaded {} from {}",
            skill.entry().uri,
            skill.origin()
        );
        let files = entry.resources.files().unwrap_or_default();
        for file in files.iter().filter(|f| f.uri != entry.uri) {
            let read = skill.read(&file.uri).await?;
            eprintln!(
                "mcp-conformance-client: read {} ({} bytes)",
                read.uri,
                read.bytes.len()
            );
        }
    }
    Ok(())
}

/// Calls `name` and reports the result on stderr.
async fn call(client: &Client, name: &str, arguments: Map<String, Value>) -> Flow {
    let result = client.call_tool(name, Value::Object(arguments)).await?;
    eprintln!(
        "mcp-conformance-client: {name} -> {}",
        serde_json::to_string(&result.content)?
    );
    Ok(())
}

/// Calls each named tool the server lists, with `arguments`.
async fn call_each(client: &Client, names: &[&str], arguments: Value) -> Flow {
    let tools = client.list_all_tools().await?;
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    for name in names {
        if tools.iter().any(|t| t.name == *name) {
            call(client, name, arguments.clone()).await?;
        } else {
            eprintln!("mcp-conformance-client: the server lists no {name}");
        }
    }
    Ok(())
}

/// Every method whose headers the scenario checks, once or more.
async fn standard_headers(client: &Client) -> Flow {
    for tool in client.list_all_tools().await? {
        call(client, &tool.name, Map::new()).await?;
    }
    for resource in client.list_all_resources().await? {
        client.read_resource(&resource.uri).await?;
    }
    for prompt in client.list_all_prompts().await? {
        client
            .get_prompt(&prompt.name, std::iter::empty::<(String, String)>())
            .await?;
    }
    Ok(())
}

/// The MRTR rounds driven by hand, so that an unrelated call sits between
/// a round and its retry (it must carry nothing of that round); then the
/// round without `requestState` and the result without `resultType`, both
/// through the automatic calls.
async fn request_state(client: &Client) -> Flow {
    client.list_all_tools().await?;
    let options = CallOptions::new();
    let params = CallToolRequestParams::new("test_mrtr_echo_state");
    let mut answer: Option<InputAnswer> = None;
    let mut rounds = 0;
    loop {
        match client
            .call_tool_once(&params, answer.as_ref(), &options)
            .await?
        {
            Outcome::Complete(result) => {
                eprintln!(
                    "mcp-conformance-client: test_mrtr_echo_state -> {}",
                    serde_json::to_string(&result.content)?
                );
                break;
            }
            Outcome::InputRequired(asked) => {
                rounds += 1;
                if rounds > 4 {
                    return Err("test_mrtr_echo_state keeps asking for input".into());
                }
                answer = Some(client.fulfil_input(&asked).await?);
                if rounds == 1 {
                    call(client, "test_mrtr_unrelated", Map::new()).await?;
                }
            }
            _ => return Err("an outcome this client does not know".into()),
        }
    }
    call(client, "test_mrtr_no_state", Map::new()).await?;
    call(client, "test_mrtr_no_result_type", Map::new()).await
}
