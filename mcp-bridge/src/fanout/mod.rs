//! [`Servers`]: many upstream servers served as one, their tools and
//! prompts named apart.

mod handshake;
mod lists;
mod member;
mod route;
mod session;

use std::sync::Arc;

use futures::future::{BoxFuture, join_all};
use mcp_protocol::Notification;
use mcp_protocol::methods::NOTIFICATION_MESSAGE;
use mcp_transport::{ConnectionHandlers, Connector, GoneInfo, Listener, Transport, TransportError};
use serde_json::Value;

use member::{Member, Names, Shared};
use session::FannedOut;

/// Many servers as one: a [`Connector`] that, connected, connects to every
/// server it names and serves them all as one server of the legacy era
/// (`initialize`), for a [`Bridge`](crate::Bridge) or any client.
///
/// * `initialize` is answered by the bridge, once each server has been
///   told the client's params: the protocol version every server answered
///   (the client's own when they all accept it; when they differ, the
///   oldest of their answers), the union of their capabilities (the lists
///   may change: `listChanged` is always true), `serverInfo` naming the
///   bridge, and each server's instructions under its name.
///   `notifications/initialized` goes to each server.
/// * `tools/list` and `prompts/list` hold every server's entries (each
///   server's pages followed to the end, served as one page), named by the
///   naming given to [`Servers::new`] (`server__tool`, as
///   `mcp_client::host::Naming::default()` names them); `tools/call` and
///   `prompts/get` go to the server of the name, under its own name. A
///   name no server has is refused with `-32602` naming it.
/// * `resources/list` and `resources/templates/list` are merged as they
///   are (URIs are global); `resources/read`, `subscribe` and
///   `unsubscribe` go to the server that listed the URI, else to each
///   server in turn until one answers. `completion/complete` goes to the
///   server of the prompt or template; `logging/setLevel` to every server
///   that logs; `ping` is answered by the bridge. Any other method is
///   refused with `-32601` saying so.
/// * What servers send unasked reaches the client: list changes,
///   resource updates, progress (its tokens are the client's), log
///   messages (their `logger` names the server: `a`, or `a/db` for a
///   logger `db` of server `a`), and their requests (elicitation,
///   sampling, roots) through the handlers the connector is given.
/// * A server that does not start, or fails its handshake, is left out
///   with a warning naming it (if none starts, connecting fails). A server
///   that dies while serving takes its entries with it (the client gets
///   the list-changed notifications) and the others go on; the session is
///   alive while any server is, and closing it closes them all.
///
/// A client of the 2026-07-28 era (no `initialize`) is answered with an
/// error saying that only the legacy era is served.
///
/// ```no_run
/// use mcp_bridge::{Bridge, Servers};
/// use mcp_client::host::Naming;
/// use mcp_transport_stdio::StdioCommand;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let servers = Servers::new(|pairs| Naming::default().names(pairs))
///     .server("time", StdioCommand::new("uvx").arg("mcp-server-time"))
///     .server("fetch", StdioCommand::new("uvx").arg("mcp-server-fetch"));
/// // Tools `time__get_current_time`, `fetch__fetch`, … on this process's stdio.
/// let ended = Bridge::new(servers).serve_stdio().await?;
/// eprintln!("{ended}");
/// # Ok(())
/// # }
/// ```
pub struct Servers {
    servers: Vec<(String, Arc<dyn Connector>)>,
    names: Names,
    info: (String, String),
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.servers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Servers")
            .field("servers", &names)
            .field("server_info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Servers {
    /// No servers yet, their tools and prompts to be named by `naming`:
    /// given the `(server, name)` pairs of one list, it returns one
    /// distinct name for each, in order (`mcp_client::host::Naming` is
    /// such a naming; the bridge keeps none of its own). A naming that
    /// returns fewer names leaves the rest out of the list.
    ///
    /// ```
    /// use mcp_bridge::Servers;
    ///
    /// let servers = Servers::new(|pairs| {
    ///     pairs.iter().map(|(server, tool)| format!("{server}.{tool}")).collect()
    /// });
    /// assert_eq!(servers.names().count(), 0);
    /// ```
    pub fn new(naming: impl Fn(&[(&str, &str)]) -> Vec<String> + Send + Sync + 'static) -> Servers {
        Servers {
            servers: Vec::new(),
            names: Arc::new(naming),
            info: (
                "mcp-bridge".to_owned(),
                env!("CARGO_PKG_VERSION").to_owned(),
            ),
        }
    }

    /// Adds a server under `name` (the prefix of its tools and prompts);
    /// a server already of that name is replaced.
    ///
    /// ```
    /// use mcp_bridge::Servers;
    /// use mcp_client::host::Naming;
    /// use mcp_reference_server::{FakeConfig, FakeServer};
    ///
    /// let a = FakeServer::new(FakeConfig::legacy());
    /// let servers = Servers::new(|pairs| Naming::default().names(pairs))
    ///     .server("a", a.connector())
    ///     .server("b", FakeServer::new(FakeConfig::legacy()).connector());
    /// assert_eq!(servers.names().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn server(
        mut self,
        name: impl Into<String>,
        connector: impl Connector + 'static,
    ) -> Servers {
        let name = name.into();
        let connector: Arc<dyn Connector> = Arc::new(connector);
        match self.servers.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = connector,
            None => self.servers.push((name, connector)),
        }
        self
    }

    /// What the client is told the server is (`serverInfo`); by default
    /// `mcp-bridge` and this crate's version.
    ///
    /// ```
    /// let servers = mcp_bridge::Servers::new(|pairs| {
    ///     pairs.iter().map(|(s, t)| format!("{s}__{t}")).collect()
    /// })
    /// .server_info("my-tools", "1.0.0");
    /// # let _ = servers;
    /// ```
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Servers {
        self.info = (name.into(), version.into());
        self
    }

    /// The servers' names, in the order they were added.
    ///
    /// ```
    /// let servers = mcp_bridge::Servers::new(|_| Vec::new())
    ///     .server("files", mcp_transport_stdio::StdioCommand::new("files-server"));
    /// assert_eq!(servers.names().collect::<Vec<_>>(), ["files"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|(name, _)| name.as_str())
    }
}

impl Connector for Servers {
    /// Connects to every server at once; those that fail are left out
    /// with a warning, and the error is the last one's when none starts.
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let servers = self.servers.clone();
        let names = self.names.clone();
        let info = self.info.clone();
        Box::pin(async move {
            let connecting = servers.iter().map(|(name, connector)| {
                let mut own = handlers.clone();
                own.listener = naming_logs(name, handlers.listener.clone());
                async move { (name.clone(), connector.connect(own).await) }
            });
            let mut members = Vec::new();
            let mut failures = Vec::new();
            for (name, outcome) in join_all(connecting).await {
                match outcome {
                    Ok(transport) => members.push(Member::new(name, transport)),
                    Err(error) => {
                        tracing::warn!(server = %name, %error, "a server of the bridge did not start; serving the others");
                        failures.push(format!("{name}: {error}"));
                    }
                }
            }
            if members.is_empty() {
                let why = match failures.is_empty() {
                    true => "the bridge was given no server to serve".to_owned(),
                    false => format!(
                        "none of the bridge's servers started ({})",
                        failures.join("; ")
                    ),
                };
                return Err(TransportError::gone(GoneInfo::new(why)));
            }
            let shared = Shared::new(members, names, handlers.listener, info);
            Ok(Arc::new(FannedOut::start(shared)) as Arc<dyn Transport>)
        })
    }
}

/// The client's listener for one server: its log messages' `logger`
/// names it (`a`, or `a/db`); anything else passes as it is.
fn naming_logs(server: &str, to_client: Listener) -> Listener {
    let server = server.to_owned();
    let tap = move |n: &Notification| {
        if n.method != NOTIFICATION_MESSAGE {
            to_client.push(n.clone());
            return;
        }
        let mut named = n.clone();
        if let Some(params) = named.params.as_mut().and_then(Value::as_object_mut) {
            let logger = match params.get("logger").and_then(Value::as_str) {
                Some(own) => format!("{server}/{own}"),
                None => server.clone(),
            };
            params.insert("logger".into(), Value::String(logger));
        }
        to_client.push(named);
    };
    let (listener, queue) = Listener::tapped("a server's notifications", 1, Arc::new(tap));
    // Nothing reads the queue: the tap has done the work.
    drop(queue);
    listener
}
