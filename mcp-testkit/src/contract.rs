//! The transport contract suite: runs any [`Transport`] through every rule
//! of the contract and reports each rule by name.
//!
//! The contract is the one stated on [`mcp_transport::Transport`]: the
//! client owns the ids, the future yields the normalized result, errors are
//! a closed set, `request` and `notify` share one ordered queue, timeouts,
//! cancels and drops behave the same everywhere, notifications are routed to
//! the request they belong to, server requests reach the handler, and
//! `close` ends everything. [`rules`] lists every rule the suite checks.
//!
//! # Running the suite on your transport
//!
//! The suite needs two things for each rule: a fresh connection of your
//! transport (built with the [`ConnectionHandlers`] the rule gives, as
//! every transport is), and the other end of that connection, a [`Peer`]
//! the suite plays the server with. You hand it a [`PeerFactory`] (a
//! closure is one) that makes both and returns them as a [`Harness`]:
//!
//! - a transport over bytes (a pipe, a socket, a child's stdio) pairs with
//!   a [`LinePeer`] on the other end of an in-memory pipe
//!   ([`tokio::io::duplex`]), or, for a transport that runs a command, with
//!   the relay: [`RelayServer::argv`] is a command line to start, which
//!   connects back to the [`RelayServer`] so that [`RelayServer::accept`]
//!   gives the peer, and [`Peer::die`] makes that real process exit;
//! - a transport without a wire (a test double) has no peer:
//!   [`Harness::without_peer`], and the rules that need one are reported
//!   [`Outcome::NotApplicable`];
//! - anything else implements [`Peer`] itself (an HTTP transport's peer is
//!   a small server that reports a closed request stream as a
//!   `notifications/cancelled`).
//!
//! Then [`run_contract_suite`] (or [`run_contract_suite_with`] and a
//! [`SuiteConfig`]) returns a [`ContractReport`]: print it for a table,
//! call [`ContractReport::assert_all_passed`] to fail the test.
//!
//! Time-dependent rules use [`tokio::time`] only, so an in-process harness
//! runs under a paused clock (`#[tokio::test(start_paused = true)]`) in
//! milliseconds. A harness with a real process or real sockets must run on
//! the real clock; every wait is then a multiple of [`SuiteConfig::unit`]
//! (100 ms by default, so timeouts the suite sets are a second or more).
//!
//! Here a third-party transport that speaks newline-delimited JSON over any
//! byte stream, built on [`mcp_transport::Engine`], runs the whole suite
//! against a [`LinePeer`] over an in-memory pipe:
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_protocol::{Inbound, framing::encode_line};
//! use mcp_testkit::contract::{Harness, LinePeer, run_contract_suite};
//! use mcp_transport::{ConnectionHandlers, Engine, GoneInfo};
//! use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
//!
//! /// The transport under test: an engine, a writer loop and a reader loop.
//! fn my_transport(
//!     reader: impl AsyncRead + Unpin + Send + 'static,
//!     mut writer: impl AsyncWrite + Unpin + Send + 'static,
//!     handlers: ConnectionHandlers,
//! ) -> Engine {
//!     let (engine, mut outbound) = Engine::new(handlers);
//!     let shutdown = engine.shutdown_token();
//!     tokio::spawn(async move {
//!         loop {
//!             let item = tokio::select! {
//!                 item = outbound.recv() => item,
//!                 _ = shutdown.cancelled() => None,
//!             };
//!             let Some(item) = item else { break };
//!             let line = encode_line(&item.into_message());
//!             if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
//!                 break;
//!             }
//!         }
//!     });
//!     let reading = engine.clone();
//!     tokio::spawn(async move {
//!         let mut lines = BufReader::new(reader).lines();
//!         while let Ok(Some(line)) = lines.next_line().await {
//!             match Inbound::parse(line.as_bytes()) {
//!                 Ok(inbound) => reading.receive_inbound(inbound),
//!                 Err(error) => reading.receive_malformed(error),
//!             }
//!         }
//!         reading.peer_gone(GoneInfo::new("the stream ended"));
//!     });
//!     engine
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
//!     let (client_end, server_end) = tokio::io::duplex(1 << 16);
//!     let (client_read, client_write) = tokio::io::split(client_end);
//!     let (server_read, server_write) = tokio::io::split(server_end);
//!     let transport = my_transport(client_read, client_write, handlers);
//!     Harness::new(Arc::new(transport), LinePeer::new(server_read, server_write))
//! })
//! .await;
//! println!("{report}");
//! report.assert_all_passed();
//! # }
//! ```

mod line;
mod memory;
mod relay;
mod rules;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::Message;
use mcp_transport::{ConnectionHandlers, Transport};

pub use line::LinePeer;
pub(crate) use memory::Tap;
pub use memory::{MemoryPeer, memory_harness};
pub use relay::{DIE_CODE, DIE_STDERR, RelayPeer, RelayServer};

/// The other end of a connection, played by the suite: it sees what the
/// transport sent and sends what a server would.
///
/// A wire cancel is reported as the `notifications/cancelled` message a
/// stdio transport writes (a peer whose wire cancels differently, such as
/// by closing an HTTP stream, reports it in that form).
pub trait Peer: Send {
    /// The next message the transport sent, or `None` when the connection
    /// ended.
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>>;

    /// Sends a message to the transport.
    fn send(&mut self, message: Message) -> BoxFuture<'_, ()>;

    /// Sends one line of raw bytes (without its newline), which need not
    /// be valid JSON. Only called when [`can_send_raw`](Self::can_send_raw).
    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()>;

    /// Whether [`send_raw`](Self::send_raw) is possible on this wire.
    fn can_send_raw(&self) -> bool {
        true
    }

    /// Makes the server die: a process exits (with [`DIE_CODE`], after
    /// writing [`DIE_STDERR`] to its stderr, when it can), a stream ends.
    fn die(&mut self) -> BoxFuture<'_, ()>;
}

impl<P: Peer + ?Sized> Peer for Box<P> {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        (**self).recv()
    }
    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        (**self).send(message)
    }
    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        (**self).send_raw(line)
    }
    fn can_send_raw(&self) -> bool {
        (**self).can_send_raw()
    }
    fn die(&mut self) -> BoxFuture<'_, ()> {
        (**self).die()
    }
}

/// One connection under test: the transport, and the peer at its other
/// end when there is one.
pub struct Harness {
    /// The transport under test.
    pub transport: Arc<dyn Transport>,
    /// The other end of its connection; `None` for a transport without a
    /// wire (the null transport), whose rules needing a peer are then
    /// reported not applicable.
    pub peer: Option<Box<dyn Peer>>,
}

impl Harness {
    /// A transport and its peer.
    pub fn new(transport: Arc<dyn Transport>, peer: impl Peer + 'static) -> Self {
        Harness {
            transport,
            peer: Some(Box::new(peer)),
        }
    }

    /// A transport without a peer.
    pub fn without_peer(transport: Arc<dyn Transport>) -> Self {
        Harness {
            transport,
            peer: None,
        }
    }
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("alive", &self.transport.is_alive())
            .field("peer", &self.peer.is_some())
            .finish()
    }
}

/// Makes a fresh connection for each rule. Any
/// `Fn(ConnectionHandlers) -> impl Future<Output = Harness>` is one.
///
/// A factory that cannot connect panics; the rule is then reported failed
/// with the panic's message.
pub trait PeerFactory: Send + Sync {
    /// A new connection whose inbound traffic goes to `handlers`.
    fn connect(&self, handlers: ConnectionHandlers) -> BoxFuture<'static, Harness>;
}

impl<F, Fut> PeerFactory for F
where
    F: Fn(ConnectionHandlers) -> Fut + Send + Sync,
    Fut: Future<Output = Harness> + Send + 'static,
{
    fn connect(&self, handlers: ConnectionHandlers) -> BoxFuture<'static, Harness> {
        Box::pin(self(handlers))
    }
}

/// How the suite runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SuiteConfig {
    /// The time scale: every timeout and wait of the suite is a multiple
    /// of it (a request timeout is 10 units). 100 ms by default, which
    /// keeps real-process runs safe from scheduling noise; under a paused
    /// clock it costs nothing.
    pub unit: Duration,
    /// Rules not to run, by name; they are reported not applicable.
    pub skip: Vec<String>,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            unit: Duration::from_millis(100),
            skip: Vec::new(),
        }
    }
}

impl SuiteConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the time scale.
    pub fn unit(mut self, unit: Duration) -> Self {
        self.unit = unit;
        self
    }

    /// Skips a rule by name.
    pub fn skip(mut self, rule: impl Into<String>) -> Self {
        self.skip.push(rule.into());
        self
    }
}

/// A rule of the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleInfo {
    /// Its stable name, as reported.
    pub name: &'static str,
    /// What it checks, in a sentence.
    pub summary: &'static str,
}

/// Every rule the suite checks, in the order it runs them.
pub fn rules() -> Vec<RuleInfo> {
    rules::RULES
        .iter()
        .map(|r| RuleInfo {
            name: r.name,
            summary: r.summary,
        })
        .collect()
}

/// How one rule went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The transport keeps the rule.
    Passed,
    /// The transport breaks the rule; why.
    Failed(String),
    /// The rule does not apply to this harness (it has no peer, or cannot
    /// send raw bytes, or the rule was skipped); why.
    NotApplicable(String),
}

impl Outcome {
    /// Whether the rule passed.
    pub fn is_passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }

    /// Whether the rule failed.
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }
}

/// One row of a [`ContractReport`].
#[derive(Clone, Debug)]
pub struct RuleResult {
    /// The rule's name.
    pub name: &'static str,
    /// What the rule checks.
    pub summary: &'static str,
    /// How it went.
    pub outcome: Outcome,
    /// How long it took, on the wall clock.
    pub elapsed: Duration,
}

/// The result of a suite run: each rule by name.
#[derive(Clone, Debug, Default)]
pub struct ContractReport {
    /// One entry per rule, in the order they ran.
    pub results: Vec<RuleResult>,
}

impl ContractReport {
    /// The outcome of one rule, by name.
    pub fn outcome(&self, rule: &str) -> Option<&Outcome> {
        self.results
            .iter()
            .find(|r| r.name == rule)
            .map(|r| &r.outcome)
    }

    /// The rules that failed.
    pub fn failures(&self) -> Vec<&RuleResult> {
        self.results
            .iter()
            .filter(|r| r.outcome.is_failed())
            .collect()
    }

    /// How many rules passed.
    pub fn passed_count(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome.is_passed())
            .count()
    }

    /// Whether no rule failed (rules not applicable are allowed).
    pub fn all_passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// Panics, listing every failure, unless no rule failed. Rules that
    /// are not applicable are allowed.
    #[track_caller]
    pub fn assert_all_passed(&self) {
        let failures = self.failures();
        if failures.is_empty() {
            return;
        }
        let mut text = format!(
            "{} of {} contract rules failed:\n",
            failures.len(),
            self.results.len()
        );
        for f in failures {
            if let Outcome::Failed(why) = &f.outcome {
                text.push_str(&format!("- {} ({}): {}\n", f.name, f.summary, why));
            }
        }
        text.push('\n');
        text.push_str(&self.to_string());
        panic!("{text}");
    }
}

impl fmt::Display for ContractReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .results
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            f,
            "{:<width$}  {:<7}  {:>8}  detail",
            "rule", "outcome", "time"
        )?;
        writeln!(f, "{}", "-".repeat(width + 30))?;
        for r in &self.results {
            let (word, detail) = match &r.outcome {
                Outcome::Passed => ("pass", ""),
                Outcome::Failed(why) => ("FAIL", why.as_str()),
                Outcome::NotApplicable(why) => ("n/a", why.as_str()),
            };
            let ms = format!("{}ms", r.elapsed.as_millis());
            writeln!(f, "{:<width$}  {word:<7}  {ms:>8}  {detail}", r.name)?;
        }
        let failed = self.failures().len();
        let na = self.results.len() - failed - self.passed_count();
        write!(
            f,
            "{} passed, {} failed, {} not applicable",
            self.passed_count(),
            failed,
            na
        )
    }
}

/// Runs every rule with the default [`SuiteConfig`].
pub async fn run_contract_suite(factory: impl PeerFactory + 'static) -> ContractReport {
    run_contract_suite_with(factory, SuiteConfig::default()).await
}

/// Runs every rule, one after the other, each on a fresh connection from
/// `factory`, and reports each by name. A rule that panics or hangs (past
/// 400 units) is reported failed; the run goes on.
pub async fn run_contract_suite_with(
    factory: impl PeerFactory + 'static,
    config: SuiteConfig,
) -> ContractReport {
    let factory: Arc<dyn PeerFactory> = Arc::new(factory);
    let mut report = ContractReport::default();
    for rule in rules::RULES {
        let started = std::time::Instant::now();
        let outcome = if config.skip.iter().any(|s| s == rule.name) {
            Outcome::NotApplicable("skipped by the configuration".into())
        } else {
            rules::run_one(rule, factory.clone(), config.unit).await
        };
        report.results.push(RuleResult {
            name: rule.name,
            summary: rule.summary,
            outcome,
            elapsed: started.elapsed(),
        });
    }
    report
}
