//! Choosing the server and connecting to it: a child process over stdio,
//! a URL, a server of a servers file, or the embedded reference server in
//! process.

use std::path::Path;
use std::sync::Arc;

use mcp_client::handlers::{HandlerError, sampling_fn};
use mcp_client::host::{ServerDefinition, ServersFile};
use mcp_client::http::RecordingHeaders;
use mcp_client::http::http::{HeaderName, HeaderValue};
use mcp_client::protocol::ProtocolVersion;
use mcp_client::protocol::types::{ContentBlock, CreateMessageRequestParams};
use mcp_client::protocol::types::{CreateMessageResult, Root, SamplingContent};
use mcp_client::transport::record::Recorder;
use mcp_client::transport::{Connector, TransportError};
use mcp_client::{Client, ClientBuilder, EraMode, HttpTransportBuilder};
use mcp_reference_server::{FakeConfig, FakeServer};
use mcp_transport_stdio::StdioCommand;

use crate::args::{Cli, EraArg};
use crate::exit::{Failure, Outcome};
use crate::progress::Progress;
use crate::prompts;

/// Where the server is.
#[derive(Debug)]
pub(crate) enum Server {
    /// A child process: program and arguments.
    Stdio(Vec<String>),
    /// A server at a URL, over HTTP.
    Http(String),
    /// The embedded reference server (`mcp_reference_server`, both eras).
    Embedded,
    /// A server of a servers file, by name.
    Configured(String, ServerDefinition),
    /// Every server of a servers file, served as one (`mcp bridge
    /// --config FILE` without --server): the file's name, and its servers.
    Everything(String, ServersFile),
}

impl Server {
    /// The server the command line names.
    pub(crate) fn from_cli(cli: &Cli) -> Outcome<Server> {
        if let Some(name) = &cli.server.server {
            if cli.server.url.is_some() || cli.server.stdio.is_some() || !cli.program.is_empty() {
                return Err(Failure::usage(
                    "give the server either with --server, --url, --stdio or after --, not two of them",
                ));
            }
            let file = servers_file(cli)?;
            return match file.servers.get(name) {
                Some(definition) => Ok(Server::Configured(name.clone(), definition.clone())),
                None => {
                    let known: Vec<&str> = file.servers.keys().map(String::as_str).collect();
                    Err(Failure::usage(format!(
                        "the servers file has no server {name:?}; it has: {}",
                        known.join(", ")
                    )))
                }
            };
        }
        if let (Some(path), Some(crate::args::Command::Bridge(_))) =
            (&cli.server.config, &cli.command)
            && cli.server.url.is_none()
            && cli.server.stdio.is_none()
            && cli.program.is_empty()
        {
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            return Ok(Server::Everything(name, servers_file(cli)?));
        }
        if let Some(url) = &cli.server.url {
            if cli.server.stdio.is_some() || !cli.program.is_empty() {
                return Err(Failure::usage(
                    "give the server either with --url, --stdio or after --, not two of them",
                ));
            }
            return Ok(Server::Http(url.clone()));
        }
        if !cli.server.header.is_empty() {
            return Err(Failure::usage("--header needs --url"));
        }
        match (&cli.server.stdio, cli.program.is_empty()) {
            (Some(_), false) => Err(Failure::usage(
                "give the server either with --stdio or after --, not both",
            )),
            (Some(line), true) => match shlex::split(line) {
                Some(words) if !words.is_empty() => Ok(Server::Stdio(words)),
                _ => Err(Failure::usage(format!(
                    "--stdio {line:?} is not a command line (empty, or unbalanced quotes)"
                ))),
            },
            (None, false) => Ok(Server::Stdio(cli.program.clone())),
            (None, true) => Ok(Server::Embedded),
        }
    }
}

/// The servers file --config names, else `.mcp.json` or
/// `.vscode/mcp.json` in the current directory.
pub(crate) fn servers_file(cli: &Cli) -> Outcome<ServersFile> {
    let path = match &cli.server.config {
        Some(path) => path.clone(),
        None => [".mcp.json", ".vscode/mcp.json"]
            .iter()
            .map(std::path::PathBuf::from)
            .find(|p| p.exists())
            .ok_or_else(|| {
                Failure::usage("no servers file: give one with --config (no .mcp.json here)")
            })?,
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    ServersFile::from_json(&text).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

/// The client's settings from the command line: era, versions, timeout,
/// and only the handlers the CLI can honour.
pub(crate) fn builder(
    cli: &Cli,
    progress: &Progress,
    stdin_is_terminal: bool,
) -> Outcome<ClientBuilder> {
    let mut builder = Client::builder()
        .client_info("mcp-cli", env!("CARGO_PKG_VERSION"))
        .era(match cli.server.era {
            EraArg::Auto => EraMode::Auto,
            EraArg::Legacy => EraMode::Legacy,
            EraArg::Modern => EraMode::Modern,
        })
        // Each run is one connection: nothing to reuse a cache for.
        .cache_capacity(0);
    if let Some(version) = &cli.server.protocol_version {
        let version = ProtocolVersion::new(version.as_str());
        if !version.is_known() {
            let known: Vec<&str> = ProtocolVersion::KNOWN.iter().map(|v| v.as_str()).collect();
            return Err(Failure::usage(format!(
                "unknown protocol version {version}; known: {}",
                known.join(", ")
            )));
        }
        builder = builder.protocol_versions([version]);
    }
    if let Some(timeout) = cli.server.timeout {
        builder = builder
            .request_timeout(timeout)
            .max_total_timeout(timeout.max(std::time::Duration::from_secs(600)));
    }
    if let Some(json) = &cli.offer.elicit_json {
        builder = builder.elicitation_handler(prompts::fixed_handler(prompts::fixed_answer(json)?));
    } else if stdin_is_terminal {
        builder = builder.elicitation_handler(prompts::terminal_handler(progress.clone()));
    }
    if cli.offer.sampling_echo {
        builder = builder.sampling_handler(sampling_fn(|params: CreateMessageRequestParams| async move {
            Ok::<_, HandlerError>(echo(&params))
        }));
    }
    if !cli.offer.root.is_empty() {
        let roots = cli
            .offer
            .root
            .iter()
            .map(|p| root(p))
            .collect::<Outcome<Vec<_>>>()?;
        builder = builder.roots(roots);
    }
    Ok(builder)
}

/// The server as a [`Connector`], with what is needed to explain a failure
/// to reach it.
pub(crate) struct Upstream {
    /// Its name in logs and errors (a URL without credentials).
    pub(crate) name: String,
    pub(crate) connector: Arc<dyn Connector>,
    /// The URL and its stored authorization, for an HTTP server.
    http: Option<(String, Option<mcp_auth::OAuthProvider>)>,
}

impl Upstream {
    /// What to tell the user about a failure to connect: why the stored
    /// authorization failed, or to log in when the server asks for it.
    /// The step to take when the server asks for authorization: log in.
    pub(crate) fn login_hint(&self) -> Option<String> {
        self.http
            .as_ref()
            .map(|(url, _)| crate::auth::login_hint(url))
    }

    pub(crate) fn hint(&self, error: Option<&TransportError>) -> Option<String> {
        let (url, oauth) = self.http.as_ref()?;
        match oauth.as_ref().and_then(|o| o.last_error()) {
            Some(why) => Some(why),
            None if matches!(error, Some(TransportError::AuthorizationRequired { .. })) => {
                Some(crate::auth::login_hint(url))
            }
            None => None,
        }
    }
}

/// How long `mcp bridge` gives its server to exit after closing its stdin
/// (once its own client has left), before `SIGTERM`; then
/// [`BRIDGE_TERM_GRACE`] before `SIGKILL`. The bridge is a stdio server
/// itself, and its client gives it 2 s after closing its stdin before
/// sending `SIGTERM` (the official TypeScript and Python SDKs do): its own
/// server's shutdown must end within that, or the client's signal cuts it
/// short and the server is killed without ever being asked to stop.
const BRIDGE_CLOSE_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);
/// See [`BRIDGE_CLOSE_GRACE`].
const BRIDGE_TERM_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// A stdio server as the CLI runs it: under `mcp bridge`, with the short
/// close graces of [`BRIDGE_CLOSE_GRACE`]; with -v, its stderr shown,
/// each line prefixed with its name.
pub(crate) fn as_the_cli_runs(cli: &Cli, mut command: StdioCommand) -> StdioCommand {
    if matches!(cli.command, Some(crate::args::Command::Bridge(_))) {
        command = command
            .close_grace(BRIDGE_CLOSE_GRACE)
            .term_grace(BRIDGE_TERM_GRACE);
    }
    if cli.verbose > 0 {
        let prefix = format!("[{}] ", command.get_name());
        command = command.on_stderr(move |line| say!("{prefix}{line}"));
    }
    command
}

/// The server the command line names, as a connector, through `recorder`
/// when recording.
pub(crate) fn upstream(
    cli: &Cli,
    server: Server,
    recorder: Option<&Recorder>,
) -> Outcome<Upstream> {
    let (name, connector): (String, Arc<dyn Connector>) = match server {
        Server::Embedded => (
            "embedded".to_owned(),
            Arc::new(FakeServer::new(FakeConfig::dual()).connector()),
        ),
        Server::Stdio(words) => {
            let mut command = StdioCommand::new(&words[0]).args(&words[1..]);
            for (key, value) in &cli.server.env {
                command = command.env(key, value);
            }
            if let Some(dir) = &cli.server.cwd {
                command = command.current_dir(dir);
            }
            let command = as_the_cli_runs(cli, command);
            (command.get_name(), Arc::new(command))
        }
        Server::Everything(name, file) => {
            if recorder.is_some() {
                return Err(Failure::usage(
                    "--record records one server; give it with --server NAME",
                ));
            }
            (name, crate::fanout::every_server(cli, &file)?)
        }
        Server::Configured(name, definition) => {
            // Header and env values from the file are tokens, mostly: a
            // server that echoes one must not write it into the cassette.
            if let Some(recorder) = recorder {
                for value in definition.secret_values() {
                    recorder.redact_secret(value);
                }
            }
            let connector = definition
                .connector(&name)
                .map_err(|e| Failure::usage(format!("server {name:?}: {e}")))?;
            (name, connector)
        }
        Server::Http(url) => {
            let http = http(cli, &url)?;
            let oauth = crate::auth::stored(&url, &http)?;
            let provider = oauth
                .clone()
                .map(|o| Arc::new(o) as Arc<dyn mcp_client::http::HeaderProvider>);
            let http = match (recorder.as_ref(), provider) {
                (Some(recorder), provider) => {
                    recorder.connection_headers(
                        cli.server
                            .header
                            .iter()
                            .map(|(n, v)| (n.as_str(), v.as_str())),
                    );
                    let recording = RecordingHeaders::new(Recorder::clone(recorder));
                    let recording = match provider {
                        Some(provider) => recording.wrapping(provider),
                        None => recording,
                    };
                    http.header_provider(Arc::new(recording))
                }
                (None, Some(provider)) => http.header_provider(provider),
                (None, None) => http,
            };
            let connector: Arc<dyn Connector> = match recorder {
                Some(recorder) => Arc::new(recorder.connector(http)),
                None => Arc::new(http),
            };
            return Ok(Upstream {
                // Shown in logs and errors: without credentials.
                name: mcp_client::transport::record::redact_url(&url),
                connector,
                http: Some((url, oauth)),
            });
        }
    };
    let connector = match recorder {
        Some(recorder) => Arc::new(recorder.connector(connector)),
        None => connector,
    };
    Ok(Upstream {
        name,
        connector,
        http: None,
    })
}

/// Connects to the server, through `recorder` when recording.
pub(crate) async fn connect(
    cli: &Cli,
    server: Server,
    builder: ClientBuilder,
    recorder: Option<&Recorder>,
) -> Outcome<Client> {
    let upstream = upstream(cli, server, recorder)?;
    let connector = upstream.connector.clone();
    builder
        .server_name(upstream.name.clone())
        .connect(move |handlers| connector.connect(handlers))
        .await
        .map_err(|e| {
            let hint = upstream.hint(e.transport_error());
            let failure = Failure::connecting(e);
            match hint {
                Some(hint) => failure.hint(hint),
                None => failure,
            }
        })
}

/// The HTTP transport for `url` with the --header values.
pub(crate) fn http(cli: &Cli, url: &str) -> Outcome<HttpTransportBuilder> {
    let mut http = HttpTransportBuilder::new(url);
    for (name, value) in &cli.server.header {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| Failure::usage(format!("--header {name:?}: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| Failure::usage(format!("--header {name}: {e}")))?;
        http = http.header(name, value);
    }
    Ok(http)
}

/// The sampling answer of `--sampling-echo`: the last message's text.
fn echo(params: &CreateMessageRequestParams) -> CreateMessageResult {
    let text: Vec<&str> = params
        .messages
        .last()
        .map(|m| {
            m.content
                .blocks()
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect()
        })
        .unwrap_or_default();
    let reply = format!("echo: {}", text.join(" "));
    say!("mcp: answered a sampling request with {reply:?} (--sampling-echo)");
    CreateMessageResult::new(
        SamplingContent::from(ContentBlock::text(reply)),
        "mcp-cli-echo",
    )
}

/// A root for a directory: its `file://` URI, named after it.
fn root(path: &Path) -> Outcome<Root> {
    let path = path
        .canonicalize()
        .map_err(|e| Failure::usage(format!("--root {}: {e}", path.display())))?;
    let uri = format!("file://{}", percent_encode_path(&path.to_string_lossy()));
    let root = Root::new(uri);
    Ok(match path.file_name() {
        Some(name) => root.with_name(name.to_string_lossy()),
        None => root,
    })
}

/// Encodes what may not stand in a URI path as is.
fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_file_uris() {
        assert_eq!(percent_encode_path("/a b/ü"), "/a%20b/%C3%BC");
        let root = root(Path::new(".")).unwrap();
        assert!(root.uri.starts_with("file:///"), "{}", root.uri);
    }
}
