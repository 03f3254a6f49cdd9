//! Change notifications as a stream, in either era.
//!
//! Legacy servers push list changes on their own and send resource updates
//! after `resources/subscribe`; modern servers send both only on a
//! `subscriptions/listen` stream, which the client opens and opens again
//! when it drops. Each listen has a listener of its own: the transport
//! routes the notifications that carry its subscription id (the listen
//! request's id) to it, its acknowledgement included, so two subscriptions
//! never take each other's. Either way the caller gets a [`Subscription`]
//! yielding [`ServerEvent`]s. The cache drops what a change makes stale as
//! the notification arrives, whether or not anyone reads the stream.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use std::collections::VecDeque;

use futures::Stream;
use mcp_protocol::{Era, Notification, methods};
use mcp_transport::{Listener, ListenerStream, TransportError};
use serde_json::{Value, json};

use crate::call;
use crate::client::Client;
use crate::error::{ClientError, ErrorKind, Result};
use crate::events::{EventStream, ServerEvent};
use crate::options::CallOptions;

/// What to be told about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Watch {
    /// Tool list changes.
    pub tools: bool,
    /// Prompt list changes.
    pub prompts: bool,
    /// Resource list changes.
    pub resources: bool,
    /// Changes to these resources.
    pub resource_uris: Vec<String>,
}

impl Watch {
    /// Nothing yet; add with the builder methods.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every list: tools, prompts, resources.
    pub fn all_lists() -> Self {
        Watch {
            tools: true,
            prompts: true,
            resources: true,
            resource_uris: Vec::new(),
        }
    }

    /// Also tool list changes.
    pub fn tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// Also prompt list changes.
    pub fn prompts(mut self) -> Self {
        self.prompts = true;
        self
    }

    /// Also resource list changes.
    pub fn resources(mut self) -> Self {
        self.resources = true;
        self
    }

    /// Also changes to one resource.
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_uris.push(uri.into());
        self
    }

    fn wants(&self, event: &ServerEvent) -> bool {
        match event {
            ServerEvent::ToolsListChanged => self.tools,
            ServerEvent::PromptsListChanged => self.prompts,
            ServerEvent::ResourcesListChanged => self.resources,
            ServerEvent::ResourceUpdated { uri } => self.resource_uris.iter().any(|u| u == uri),
            _ => false,
        }
    }

    fn filter(&self) -> Value {
        let mut f = serde_json::Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                f.insert(key.into(), Value::Bool(true));
            }
        }
        if !self.resource_uris.is_empty() {
            f.insert("resourceSubscriptions".into(), json!(self.resource_uris));
        }
        Value::Object(f)
    }
}

/// A stream of the changes a [`Watch`] asked for. Dropping it ends the
/// subscription (the listen request is cancelled; legacy resource
/// subscriptions are ended).
pub struct Subscription {
    source: Source,
    watch: Watch,
    listen: Option<tokio::task::JoinHandle<()>>,
    legacy: Option<(Client, Vec<String>)>,
}

impl Subscription {
    /// The next change; `None` once the client (every clone) is dropped.
    pub async fn recv(&mut self) -> Option<ServerEvent> {
        futures::StreamExt::next(self).await
    }
}

/// Where a subscription's events come from.
enum Source {
    /// Legacy: the client's events, filtered.
    Events(EventStream),
    /// Modern: this subscription's own listen stream, with what arrived
    /// before its acknowledgement.
    Listen {
        early: VecDeque<Notification>,
        stream: ListenerStream,
    },
}

impl Stream for Subscription {
    type Item = ServerEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerEvent>> {
        loop {
            let next = match &mut self.source {
                Source::Events(events) => futures::ready!(Pin::new(events).poll_next(cx)),
                Source::Listen { early, stream } => match early.pop_front() {
                    Some(n) => Some(ServerEvent::from_notification(n)),
                    None => futures::ready!(Pin::new(stream).poll_next(cx))
                        .map(ServerEvent::from_notification),
                },
            };
            match next {
                Some(e) if self.watch.wants(&e) => return Poll::Ready(Some(e)),
                Some(_) => continue,
                None => return Poll::Ready(None),
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(task) = self.listen.take() {
            task.abort();
        }
        if let Some((client, uris)) = self.legacy.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                for uri in uris {
                    let _ = client.unsubscribe_resource(&uri).await;
                }
            });
        }
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Subscribes to changes. In modern, returns once the server has
    /// acknowledged the listen request; in legacy, once every resource
    /// subscription is in place.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// use mcp_client::{ServerEvent, Watch};
    ///
    /// let mut changes = client.subscribe(Watch::new().tools()).await?;
    /// client.call_tool("add_tool", serde_json::Value::Null).await?;
    /// assert_eq!(changes.recv().await, Some(ServerEvent::ToolsListChanged));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn subscribe(&self, watch: Watch) -> Result<Subscription> {
        match self.era() {
            Era::Legacy => {
                let events = self.events();
                for uri in &watch.resource_uris {
                    self.subscribe_resource(uri).await?;
                }
                let legacy = (!watch.resource_uris.is_empty())
                    .then(|| (self.clone(), watch.resource_uris.clone()));
                Ok(Subscription {
                    source: Source::Events(events),
                    watch,
                    listen: None,
                    legacy,
                })
            }
            Era::Modern => {
                self.session.gate(methods::SUBSCRIPTIONS_LISTEN)?;
                let (listener, mut stream) =
                    Listener::tapped("subscription", 1024, self.session.invalidation.clone());
                let task = tokio::spawn(listen_loop(self.clone(), watch.filter(), listener));
                // This listen's own acknowledgement: it arrives on its own
                // listener, routed by the listen request's id.
                let mut early = VecDeque::new();
                let wait = async {
                    while let Some(n) = stream.recv().await {
                        if n.method == methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED {
                            return true;
                        }
                        early.push_back(n);
                    }
                    false
                };
                let timeout = self.session.config.request_timeout;
                match tokio::time::timeout(timeout, wait).await {
                    Ok(true) => Ok(Subscription {
                        source: Source::Listen { early, stream },
                        watch,
                        listen: Some(task),
                        legacy: None,
                    }),
                    _ => {
                        task.abort();
                        Err(
                            ClientError::new(ErrorKind::Transport(TransportError::Timeout {
                                method: methods::SUBSCRIPTIONS_LISTEN.into(),
                                after: timeout,
                            }))
                            .with_method(methods::SUBSCRIPTIONS_LISTEN),
                        )
                    }
                }
            }
        }
    }
}

/// Keeps a listen request open, opening it again after a drop, with a
/// growing pause between attempts, until the connection ends or the task
/// is aborted (which cancels the request on the wire).
async fn listen_loop(client: Client, filter: Value, listener: Listener) {
    let mut pause = Duration::from_millis(250);
    let options = CallOptions::new().listener(listener);
    loop {
        let params = json!({ "notifications": filter });
        let outcome = call::as_is(
            &client.session,
            methods::SUBSCRIPTIONS_LISTEN,
            params,
            &options,
        )
        .await;
        match outcome {
            Ok(_) => tracing::debug!("the server ended the listen stream; listening again"),
            Err(e) => match e.transport_error() {
                Some(TransportError::Closed | TransportError::ServerGone(_)) => return,
                _ => tracing::warn!(error = %e, "the listen stream failed; listening again"),
            },
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(30));
    }
}
