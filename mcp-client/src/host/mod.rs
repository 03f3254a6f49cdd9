//! A host of many servers: named clients connected concurrently, one tool
//! (and prompt, resource and skill) list across them with names that never
//! collide, each call routed to its server, and one stream of their
//! change notifications, each tagged with its server.
//!
//! One server that fails or hangs never holds the others up: each connects
//! on a task of its own, bounded by its own connect timeout, and has a
//! [`ServerStatus`]. Servers come from code ([`HostBuilder::server`]) or
//! from the `mcpServers` files desktop and editor clients use
//! ([`ServersFile`], [`HostBuilder::servers_file`]).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> mcp_client::Result<()> {
//! use mcp_client::host::Host;
//! use mcp_reference_server::{FakeConfig, FakeServer};
//!
//! let host = Host::builder()
//!     .server("one", FakeServer::new(FakeConfig::legacy()).connector())
//!     .server("two", FakeServer::new(FakeConfig::modern()).connector())
//!     .connect()
//!     .await;
//! let tools = host.list_tools().await;
//! // Both servers have an `echo`; the names tell them apart.
//! assert!(tools.iter().any(|t| t.name == "one__echo"));
//! assert!(tools.iter().any(|t| t.name == "two__echo"));
//! let result = host.call_tool("two__echo", serde_json::json!({"text": "hi"})).await?;
//! assert!(!result.is_error());
//! host.close().await;
//! # Ok(())
//! # }
//! ```

mod config;
mod naming;
mod skills;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use futures::future::join_all;
use mcp_protocol::types::{
    CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, SkillEntry, Tool,
};
use mcp_protocol::{Era, ProtocolVersion};
use mcp_transport::Connector;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio::time::Instant;

pub use config::{ConfigError, ServerDefinition, ServersFile};
pub use naming::{MAX_NAME, Naming};
pub use skills::HostSkill;

use crate::skills::SkillCache;
use crate::{Client, ClientBuilder, ClientError, Result, ServerEvent};

/// Where a server of the host stands.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerStatus {
    /// Still connecting.
    Connecting,
    /// Connected.
    Ready {
        /// Its era.
        era: Era,
        /// The revision in use.
        version: ProtocolVersion,
        /// How long connecting took.
        took: Duration,
    },
    /// A supervised connection is being restored.
    Restarting,
    /// It could not connect (or its restarts ran out).
    Failed {
        /// Why, in words.
        error: String,
    },
}

/// A tool of one of the host's servers, under its host-wide name.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostTool {
    /// The name to call it by through the host.
    pub name: String,
    /// The server it belongs to.
    pub server: String,
    /// The tool as its server lists it (with its own name).
    pub tool: Tool,
}

/// A prompt of one of the host's servers, under its host-wide name.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostPrompt {
    /// The name to get it by through the host.
    pub name: String,
    /// The server it belongs to.
    pub server: String,
    /// The prompt as its server lists it.
    pub prompt: Prompt,
}

/// A resource of one of the host's servers (URIs are read through the
/// server that listed them: [`Host::read_resource`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostResource {
    /// The server it belongs to.
    pub server: String,
    /// The resource as its server lists it.
    pub resource: Resource,
}

/// A notification from one of the host's servers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct HostEvent {
    /// The server that sent it.
    pub server: String,
    /// What it said.
    pub event: ServerEvent,
}

type MakeClient = Arc<dyn Fn(&str) -> ClientBuilder + Send + Sync>;

/// A server's connector, or why this build cannot make one.
type Reach = std::result::Result<Arc<dyn Connector>, String>;

/// Builds a [`Host`].
pub struct HostBuilder {
    servers: Vec<(String, Reach)>,
    client: MakeClient,
    connect_timeout: Duration,
    naming: Naming,
}

impl HostBuilder {
    /// A server by name, reached through `connector`.
    pub fn server(mut self, name: impl Into<String>, connector: impl Connector + 'static) -> Self {
        self.servers.push((name.into(), Ok(Arc::new(connector))));
        self
    }

    /// Every server of a configuration file. A server whose transport this
    /// build lacks (the `stdio` or `http` feature) is listed as failed,
    /// saying which feature it needs.
    pub fn servers_file(mut self, file: &ServersFile) -> Self {
        for (name, definition) in &file.servers {
            self.servers
                .push((name.clone(), definition.connector(name)));
        }
        self
    }

    /// How each server's client is built (its era, timeouts, handlers,
    /// restart policy), given the server's name. The default is
    /// `Client::builder().server_name(name)`.
    pub fn client_builder(
        mut self,
        make: impl Fn(&str) -> ClientBuilder + Send + Sync + 'static,
    ) -> Self {
        self.client = Arc::new(make);
        self
    }

    /// How long each server may take to connect (default 30 s); one that
    /// takes longer is failed, and the others never wait for it.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How tool and prompt names are made distinct (default:
    /// [`Naming::Prefixed`] with `__`).
    pub fn naming(mut self, naming: Naming) -> Self {
        self.naming = naming;
        self
    }

    /// Starts connecting every server, each on a task of its own, and
    /// returns at once; [`Host::settled`] waits for them.
    pub fn start(self) -> Host {
        let (events, _) = broadcast::channel(1024);
        let inner = Arc::new(Inner {
            servers: Mutex::new(BTreeMap::new()),
            events,
            naming: self.naming,
            routes: RwLock::new(Routes::default()),
            skills: RwLock::new(HashMap::new()),
            skill_cache: SkillCache::new(),
        });
        let mut tasks = Vec::new();
        for (name, connector) in self.servers {
            inner.set(&name, ServerStatus::Connecting, None);
            let task = tokio::spawn(connect_one(
                Arc::downgrade(&inner),
                name,
                connector,
                self.client.clone(),
                self.connect_timeout,
            ));
            tasks.push(task);
        }
        Host {
            inner,
            tasks: Arc::new(Mutex::new(tasks)),
        }
    }

    /// Connects every server concurrently and returns once each is ready
    /// or has failed (each within its own connect timeout).
    pub async fn connect(self) -> Host {
        let host = self.start();
        host.settled().await;
        host
    }
}

/// What the host names across its servers, and routes calls of by name.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
        }
    }
}

/// Host-wide name to (server, the server's own name), by kind.
type Table = HashMap<String, (String, String)>;

#[derive(Default)]
struct Routes {
    tools: Table,
    prompts: Table,
}

impl Routes {
    fn of(&self, kind: Kind) -> &Table {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Prompt => &self.prompts,
        }
    }

    fn of_mut(&mut self, kind: Kind) -> &mut Table {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Prompt => &mut self.prompts,
        }
    }
}

struct Entry {
    status: ServerStatus,
    client: Option<Client>,
}

struct Inner {
    servers: Mutex<BTreeMap<String, Entry>>,
    events: broadcast::Sender<HostEvent>,
    naming: Naming,
    routes: RwLock<Routes>,
    /// Host-wide skill name to (server, the skill's entry).
    skills: RwLock<HashMap<String, (String, SkillEntry)>>,
    /// Verified skill files of every server, keyed by server and URI.
    skill_cache: SkillCache,
}

impl Inner {
    fn set(&self, name: &str, status: ServerStatus, client: Option<Client>) {
        let mut servers = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        let entry = servers.entry(name.to_owned()).or_insert(Entry {
            status: ServerStatus::Connecting,
            client: None,
        });
        entry.status = status;
        if client.is_some() {
            entry.client = client;
        }
    }

    fn ready(&self) -> Vec<(String, Client)> {
        let servers = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        servers
            .iter()
            .filter_map(|(name, e)| e.client.clone().map(|c| (name.clone(), c)))
            .collect()
    }
}

/// Connects one server and forwards its events. Both hold the host only
/// weakly: the host owns its clients, and a client's events end only when
/// the client is dropped, so a strong reference here would keep the host
/// and every server alive after the last `Host` handle is gone.
async fn connect_one(
    inner: Weak<Inner>,
    name: String,
    connector: Reach,
    make: MakeClient,
    timeout: Duration,
) {
    let set = |status: ServerStatus| {
        if let Some(inner) = inner.upgrade() {
            inner.set(&name, status, None);
        }
    };
    let connector = match connector {
        Ok(c) => c,
        Err(error) => return set(ServerStatus::Failed { error }),
    };
    let started = Instant::now();
    let builder = make(&name);
    // The client keeps the connector for restarts.
    let connecting = builder.connect(move |handlers| connector.connect(handlers));
    let client = match tokio::time::timeout(timeout, connecting).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            tracing::warn!(server = %name, error = %e, "a server of the host could not connect");
            let error = e.to_string();
            return set(ServerStatus::Failed { error });
        }
        Err(_) => {
            let error = format!("did not connect within {timeout:?}");
            tracing::warn!(server = %name, %error, "a server of the host hangs");
            return set(ServerStatus::Failed { error });
        }
    };
    let ready = ServerStatus::Ready {
        era: client.era(),
        version: client.protocol_version(),
        took: started.elapsed(),
    };
    let mut events = client.events();
    {
        // A host dropped while this server connected: the client is
        // dropped here, which closes it.
        let Some(host) = inner.upgrade() else { return };
        host.set(&name, ready.clone(), Some(client));
    }
    // Its events, tagged, into the host's stream; restarts move the status.
    // The stream ends when the host, and with it the client, is dropped.
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let Some(host) = inner.upgrade() else { break };
            if let ServerEvent::Restarted(attempt) = &event {
                let status = if attempt.failure.is_none() {
                    ready.clone()
                } else {
                    ServerStatus::Restarting
                };
                host.set(&name, status, None);
            }
            let _ = host.events.send(HostEvent {
                server: name.clone(),
                event,
            });
        }
    });
}

impl ServerDefinition {
    /// A connector to this server (named `name` in its logs): a
    /// `StdioCommand` or an `HttpTransportBuilder` (with the `stdio` and
    /// `http` features) with the
    /// file's headers. `Err` says why this build cannot reach it (the
    /// feature it lacks, or a header that is not valid HTTP).
    pub fn connector(&self, name: &str) -> std::result::Result<Arc<dyn Connector>, String> {
        match self {
            #[cfg(feature = "stdio")]
            ServerDefinition::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut command = crate::StdioCommand::new(command)
                    .args(args)
                    .envs(env)
                    .name(name);
                if let Some(dir) = cwd {
                    command = command.current_dir(dir);
                }
                Ok(Arc::new(command))
            }
            #[cfg(feature = "http")]
            ServerDefinition::Http { url, headers } => {
                let mut builder = crate::HttpTransportBuilder::new(url.clone());
                for (key, value) in headers {
                    let header = (
                        mcp_transport_http::http::HeaderName::try_from(key.as_str()),
                        mcp_transport_http::http::HeaderValue::try_from(value.as_str()),
                    );
                    match header {
                        (Ok(k), Ok(v)) => builder = builder.header(k, v),
                        _ => return Err(format!("header {key:?} is not a valid HTTP header")),
                    }
                }
                Ok(Arc::new(builder))
            }
            #[allow(unreachable_patterns)]
            other => Err(format!(
                "this build cannot reach {name:?}: it needs the {:?} feature of mcp-client",
                match other {
                    ServerDefinition::Stdio { .. } => "stdio",
                    _ => "http",
                }
            )),
        }
    }
}

/// Many named servers as one; see the [module docs](self). Cheap to clone.
///
/// Dropping the last handle drops the host's clients, which closes each
/// server as dropping a [`Client`] does (a child process is killed, an HTTP
/// session deleted), unless the caller still holds a clone of that client
/// ([`Host::client`]). [`Host::close`] closes them in order instead.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Host {
    /// A builder with no servers.
    pub fn builder() -> HostBuilder {
        HostBuilder {
            servers: Vec::new(),
            client: Arc::new(|name: &str| Client::builder().server_name(name)),
            connect_timeout: Duration::from_secs(30),
            naming: Naming::default(),
        }
    }

    /// Waits until every server is ready or has failed.
    pub async fn settled(&self) {
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        join_all(tasks).await;
    }

    /// Every server's status, by name.
    pub fn status(&self) -> BTreeMap<String, ServerStatus> {
        let servers = self.inner.servers.lock().unwrap_or_else(|p| p.into_inner());
        servers
            .iter()
            .map(|(n, e)| (n.clone(), e.status.clone()))
            .collect()
    }

    /// One server's client, once it is connected.
    pub fn client(&self, server: &str) -> Option<Client> {
        let servers = self.inner.servers.lock().unwrap_or_else(|p| p.into_inner());
        servers.get(server).and_then(|e| e.client.clone())
    }

    /// The change notifications of every server, each tagged with its
    /// server, from now on.
    pub fn events(&self) -> HostEvents {
        HostEvents(self.inner.events.subscribe())
    }

    /// Every connected server's tools under host-wide names. The servers
    /// are asked concurrently (each client serves its cached list while it
    /// holds); one that fails is left out with a warning.
    pub async fn list_tools(&self) -> Vec<HostTool> {
        let listed = self
            .gather(|c| async move { c.list_all_tools().await })
            .await;
        self.name_and_route(
            Kind::Tool,
            listed,
            |t| &t.name,
            |name, server, tool| HostTool { name, server, tool },
        )
    }

    /// Calls a tool by its host-wide name, on its server.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        let (server, tool) = self.route(name, Kind::Tool).await?;
        self.client_or_err(&server)?
            .call_tool(&tool, arguments)
            .await
    }

    /// Every connected server's prompts under host-wide names.
    pub async fn list_prompts(&self) -> Vec<HostPrompt> {
        let listed = self
            .gather(|c| async move { c.list_all_prompts().await })
            .await;
        self.name_and_route(
            Kind::Prompt,
            listed,
            |p| &p.name,
            |name, server, prompt| HostPrompt {
                name,
                server,
                prompt,
            },
        )
    }

    /// Gets a prompt by its host-wide name, from its server.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GetPromptResult> {
        let (server, prompt) = self.route(name, Kind::Prompt).await?;
        self.client_or_err(&server)?
            .get_prompt(&prompt, arguments)
            .await
    }

    /// Every connected server's resources, each with its server.
    pub async fn list_resources(&self) -> Vec<HostResource> {
        self.gather(|c| async move { c.list_all_resources().await })
            .await
            .into_iter()
            .map(|(server, resource)| HostResource { server, resource })
            .collect()
    }

    /// Reads a resource through the server that listed it.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        self.client_or_err(server)?.read_resource(uri).await
    }

    /// Closes every server, concurrently, each bounded by its client's own
    /// close (a server that will not stop is killed).
    pub async fn close(&self) {
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            task.abort();
        }
        let clients = self.inner.ready();
        join_all(clients.iter().map(|(_, c)| c.close())).await;
    }

    async fn gather<T, F, Fut>(&self, list: F) -> Vec<(String, T)>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<Vec<T>>>,
    {
        let clients = self.inner.ready();
        let lists = join_all(clients.iter().map(|(_, c)| list(c.clone()))).await;
        let mut out = Vec::new();
        for ((server, _), listed) in clients.into_iter().zip(lists) {
            match listed {
                Ok(items) => out.extend(items.into_iter().map(|i| (server.clone(), i))),
                Err(e) => tracing::warn!(%server, error = %e, "left a server out of the list"),
            }
        }
        out
    }

    /// Gives each listed item (with its server) a host-wide name, and
    /// replaces the routes of its kind with these names: what a later call
    /// by name finds.
    fn name_and_route<T, H>(
        &self,
        kind: Kind,
        listed: Vec<(String, T)>,
        own_name: impl Fn(&T) -> &String,
        make: impl Fn(String, String, T) -> H,
    ) -> Vec<H> {
        let pairs: Vec<(&str, &str)> = listed
            .iter()
            .map(|(server, item)| (server.as_str(), own_name(item).as_str()))
            .collect();
        let names = self.inner.naming.names(&pairs);
        let routes = listed
            .iter()
            .zip(&names)
            .map(|((server, item), name)| (name.clone(), (server.clone(), own_name(item).clone())))
            .collect();
        *self
            .inner
            .routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .of_mut(kind) = routes;
        listed
            .into_iter()
            .zip(names)
            .map(|((server, item), name)| make(name, server, item))
            .collect()
    }

    /// The server and own name behind a host-wide name, listing first when
    /// the name is not known yet.
    async fn route(&self, name: &str, kind: Kind) -> Result<(String, String)> {
        let lookup = |host: &Host| {
            let routes = host.inner.routes.read().unwrap_or_else(|p| p.into_inner());
            routes.of(kind).get(name).cloned()
        };
        if let Some(found) = lookup(self) {
            return Ok(found);
        }
        // Listing names the items and fills in the routes.
        match kind {
            Kind::Tool => {
                self.list_tools().await;
            }
            Kind::Prompt => {
                self.list_prompts().await;
            }
        }
        lookup(self).ok_or_else(|| {
            ClientError::usage(format!(
                "no server of the host has a {} named {name:?}",
                kind.noun()
            ))
        })
    }

    fn client_or_err(&self, server: &str) -> Result<Client> {
        self.client(server).ok_or_else(|| {
            let status = self.status().get(server).cloned();
            ClientError::usage(format!("server {server:?} is not connected ({status:?})"))
        })
    }
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("servers", &self.status())
            .finish_non_exhaustive()
    }
}

/// The host's merged notifications; see [`Host::events`].
pub struct HostEvents(broadcast::Receiver<HostEvent>);

impl HostEvents {
    /// The next notification, or `None` once the host is gone. Events a
    /// slow reader missed are skipped.
    pub async fn recv(&mut self) -> Option<HostEvent> {
        loop {
            match self.0.recv().await {
                Ok(event) => return Some(event),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "host events were missed by a slow reader");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl std::fmt::Debug for HostEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostEvents").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_reference_server::{FakeConfig, FakeServer};
    use std::sync::Weak;

    async fn two_servers() -> Host {
        Host::builder()
            .server("one", FakeServer::new(FakeConfig::legacy()).connector())
            .server("two", FakeServer::new(FakeConfig::modern()).connector())
            .connect()
            .await
    }

    /// Waits (bounded) until the host's shared state is freed.
    async fn freed(inner: &Weak<Inner>) -> bool {
        tokio::time::timeout(Duration::from_secs(10), async {
            while inner.upgrade().is_some() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .is_ok()
    }

    /// The forwarding tasks hold the host weakly: once the last handle is
    /// gone, the host's state and its clients' sessions are freed, with
    /// or without `close()`.
    #[tokio::test]
    async fn a_dropped_host_frees_its_state_and_its_clients() {
        for close in [false, true] {
            let host = two_servers().await;
            let inner = Arc::downgrade(&host.inner);
            let sessions: Vec<Weak<crate::session::Session>> = ["one", "two"]
                .iter()
                .map(|n| Arc::downgrade(&host.client(n).expect("connected").session))
                .collect();
            let mut events = host.events();
            if close {
                host.close().await;
            }
            drop(host);
            assert!(
                freed(&inner).await,
                "the host's state leaks (close: {close})"
            );
            assert!(
                sessions.iter().all(|s| s.upgrade().is_none()),
                "a client's session leaks (close: {close})"
            );
            let end = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
            assert!(matches!(end, Ok(None)), "the events end with the host");
        }
    }

    /// A host dropped while a server still connects: the client that
    /// connects afterwards is dropped, not kept by the connecting task.
    #[tokio::test]
    async fn a_host_dropped_while_connecting_frees_its_state() {
        let host = Host::builder()
            .server("one", FakeServer::new(FakeConfig::legacy()).connector())
            .start();
        let inner = Arc::downgrade(&host.inner);
        drop(host);
        assert!(freed(&inner).await, "the host's state leaks");
    }
}
