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
//!   [`Harness::without_peer`]; the parts of rules that need no peer (a
//!   token cancelled before the request, `close`) still run, and the
//!   rules are reported [`Outcome::PassedInPart`] or, when nothing of
//!   them can run, [`Outcome::NotApplicable`];
//! - anything else implements [`Peer`] itself (an HTTP transport's peer is
//!   a small server that reports a closed request stream as a
//!   `notifications/cancelled`).
//!
//! A transport that runs its server as a process also says what it learns
//! of that process's death ([`Harness::reports_exit_status`],
//! [`Harness::reports_stderr_tail`]), and `peer_death` then requires it.
//!
//! Then [`run_contract_suite`] (or [`run_contract_suite_with`] and a
//! [`SuiteConfig`]) returns a [`ContractReport`]: print it for a table,
//! call [`ContractReport::assert_all_passed`] to fail the test unless every
//! rule ran whole and passed, or
//! [`ContractReport::assert_all_passed_except`] with the exact list of
//! rules your harness cannot run whole. A rule that did not run is never
//! counted as passed.
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
//! use mcp_transport_contract::{Harness, LinePeer, run_contract_suite};
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

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod binaries;
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
pub use memory::Tap;
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
/// end when there is one, with what the transport can know about that
/// peer's death.
///
/// ```
/// use std::sync::Arc;
///
/// use mcp_transport_contract::{Harness, memory_harness};
/// use mcp_transport::ConnectionHandlers;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (engine, peer) = memory_harness(ConnectionHandlers::discard());
/// // An in-memory wire has no process: nothing to require of a death.
/// let harness = Harness::new(Arc::new(engine), peer);
/// assert!(!harness.reports_exit_status && !harness.reports_stderr_tail);
/// // A transport that runs its server as a process says so, and
/// // `peer_death` then requires the exit status and the stderr tail.
/// let (engine, peer) = memory_harness(ConnectionHandlers::discard());
/// let harness = Harness::new(Arc::new(engine), peer)
///     .reports_exit_status()
///     .reports_stderr_tail();
/// assert!(harness.reports_exit_status && harness.reports_stderr_tail);
/// # }
/// ```
#[non_exhaustive]
pub struct Harness {
    /// The transport under test.
    pub transport: Arc<dyn Transport>,
    /// The other end of its connection; `None` for a transport without a
    /// wire (the null transport), for which only the parts of rules that
    /// need no peer run.
    pub peer: Option<Box<dyn Peer>>,
    /// Whether the transport learns how its peer's process ended (it runs
    /// that process): `peer_death` then requires
    /// [`GoneInfo::exit`](mcp_transport::GoneInfo::exit) to say the peer
    /// exited with [`DIE_CODE`].
    pub reports_exit_status: bool,
    /// Whether the transport captures its peer's stderr: `peer_death` then
    /// requires [`GoneInfo::stderr_tail`](mcp_transport::GoneInfo::stderr_tail)
    /// to hold [`DIE_STDERR`].
    pub reports_stderr_tail: bool,
}

impl Harness {
    /// A transport and its peer. Nothing is required of `ServerGone`'s
    /// details until [`reports_exit_status`](Self::reports_exit_status) or
    /// [`reports_stderr_tail`](Self::reports_stderr_tail) say the transport
    /// can know them.
    pub fn new(transport: Arc<dyn Transport>, peer: impl Peer + 'static) -> Self {
        Harness {
            transport,
            peer: Some(Box::new(peer)),
            reports_exit_status: false,
            reports_stderr_tail: false,
        }
    }

    /// A transport without a peer.
    pub fn without_peer(transport: Arc<dyn Transport>) -> Self {
        Harness {
            transport,
            peer: None,
            reports_exit_status: false,
            reports_stderr_tail: false,
        }
    }

    /// Declares that the transport reports its peer's exit status in
    /// `ServerGone` (it runs the peer as a process, as
    /// [`RelayServer::argv`] asks), so `peer_death` requires it. The
    /// status must come from the transport itself: a peer that hands the
    /// transport its own exit status proves nothing.
    pub fn reports_exit_status(mut self) -> Self {
        self.reports_exit_status = true;
        self
    }

    /// Declares that the transport reports the tail of its peer's stderr in
    /// `ServerGone`, so `peer_death` requires it.
    pub fn reports_stderr_tail(mut self) -> Self {
        self.reports_stderr_tail = true;
        self
    }
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("alive", &self.transport.is_alive())
            .field("peer", &self.peer.is_some())
            .field("reports_exit_status", &self.reports_exit_status)
            .field("reports_stderr_tail", &self.reports_stderr_tail)
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
///
/// ```
/// use std::time::Duration;
/// use mcp_transport_contract::SuiteConfig;
///
/// let config = SuiteConfig::new().unit(Duration::from_millis(20)).skip("thousand_concurrent");
/// assert_eq!(config.skip, ["thousand_concurrent"]);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SuiteConfig {
    /// The time scale: every timeout and wait of the suite is a multiple
    /// of it (a request timeout is 10 units). 100 ms by default, which
    /// keeps real-process runs safe from scheduling noise; under a paused
    /// clock it costs nothing.
    pub unit: Duration,
    /// Rules not to run, by name; they are reported not applicable (and
    /// so must be named to [`ContractReport::assert_all_passed_except`]).
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
#[non_exhaustive]
pub struct RuleInfo {
    /// Its stable name, as reported.
    pub name: &'static str,
    /// What it checks, in a sentence.
    pub summary: &'static str,
}

/// Every rule the suite checks, in the order it runs them.
///
/// ```
/// let rules = mcp_transport_contract::rules();
/// assert!(rules.iter().any(|r| r.name == "peer_death"));
/// ```
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
///
/// ```
/// use mcp_transport_contract::Outcome;
///
/// let part = Outcome::PassedInPart("the harness has no peer".into());
/// assert!(part.ran() && !part.is_passed() && part.is_incomplete());
/// let skipped = Outcome::NotApplicable("skipped by the configuration".into());
/// assert!(!skipped.ran() && !skipped.is_failed());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The transport keeps the rule: every part of it ran and passed.
    Passed,
    /// Only the parts of the rule that need no peer ran (the harness has
    /// none), and they passed; why the rest did not run. Not a pass: the
    /// report counts it apart, and the assertions require it to be named.
    PassedInPart(String),
    /// The transport breaks the rule; why.
    Failed(String),
    /// The rule did not run (the harness has no peer, or cannot send raw
    /// bytes, or the configuration skips it); why. Not a pass.
    NotApplicable(String),
}

impl Outcome {
    /// Whether the rule ran whole and passed.
    pub fn is_passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }

    /// Whether the rule failed.
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }

    /// Whether the rule ran at all, whole or in part (passed or failed).
    pub fn ran(&self) -> bool {
        !matches!(self, Outcome::NotApplicable(_))
    }

    /// Whether some or all of the rule did not run: not applicable, or
    /// passed in part.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, Outcome::NotApplicable(_) | Outcome::PassedInPart(_))
    }
}

/// One row of a [`ContractReport`].
#[derive(Clone, Debug)]
#[non_exhaustive]
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
///
/// A rule that did not run (not applicable) or ran only in part is never
/// counted as passed: [`assert_all_passed`](Self::assert_all_passed)
/// requires every rule to run whole, and
/// [`assert_all_passed_except`](Self::assert_all_passed_except) takes the
/// exact list of rules the caller expects not to run whole (the testkit's
/// crate docs show the report of its null transport, which has no peer).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
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

    /// How many rules ran whole and passed.
    pub fn passed_count(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome.is_passed())
            .count()
    }

    /// How many rules ran, whole or in part (passed or failed).
    pub fn ran_count(&self) -> usize {
        self.results.iter().filter(|r| r.outcome.ran()).count()
    }

    /// The names of the rules that ran, whole or in part.
    pub fn ran(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| r.outcome.ran())
            .map(|r| r.name)
            .collect()
    }

    /// The names of the rules that did not run whole: not applicable, or
    /// passed in part.
    pub fn incomplete(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| r.outcome.is_incomplete())
            .map(|r| r.name)
            .collect()
    }

    /// Whether every rule ran whole and passed.
    pub fn all_passed(&self) -> bool {
        self.passed_count() == self.results.len()
    }

    /// Panics, listing every failure and every rule that did not run
    /// whole, unless every rule ran and passed.
    #[track_caller]
    pub fn assert_all_passed(&self) {
        self.assert_all_passed_except(&[]);
    }

    /// Panics unless no rule failed and the rules that did not run whole
    /// (not applicable, or passed in part) are exactly `expected`: a rule
    /// that did not run and is not named fails the assertion, and so does
    /// a named rule that ran whole (the list is out of date) or a name the
    /// suite does not know.
    ///
    /// ```should_panic
    /// use std::sync::Arc;
    ///
    /// use mcp_transport_contract::{Harness, SuiteConfig, memory_harness, run_contract_suite_with};
    /// use mcp_transport::ConnectionHandlers;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let factory = |handlers: ConnectionHandlers| async move {
    ///     let (engine, peer) = memory_harness(handlers);
    ///     Harness::new(Arc::new(engine), peer)
    /// };
    /// let report = run_contract_suite_with(factory, SuiteConfig::new().skip("thousand_concurrent")).await;
    /// report.assert_all_passed_except(&["thousand_concurrent"]); // fine
    /// report.assert_all_passed(); // panics: a rule was skipped
    /// # }
    /// ```
    #[track_caller]
    pub fn assert_all_passed_except(&self, expected: &[&str]) {
        let mut problems = Vec::new();
        for r in &self.results {
            let named = expected.contains(&r.name);
            match (&r.outcome, named) {
                (Outcome::Failed(why), _) => {
                    problems.push(format!("- {} failed ({}): {why}", r.name, r.summary))
                }
                (Outcome::NotApplicable(why), false) => problems.push(format!(
                    "- {} did not run, and was not named as expected not to: {why}",
                    r.name
                )),
                (Outcome::PassedInPart(why), false) => problems.push(format!(
                    "- {} ran only in part, and was not named as expected to: {why}",
                    r.name
                )),
                (Outcome::Passed, true) => problems.push(format!(
                    "- {} was named as expected not to run whole, but it ran and passed",
                    r.name
                )),
                _ => {}
            }
        }
        for name in expected {
            if !self.results.iter().any(|r| r.name == *name) {
                problems.push(format!(
                    "- {name} was named, but the suite has no such rule"
                ));
            }
        }
        if problems.is_empty() {
            return;
        }
        let mut text = format!(
            "the contract suite did not pass as expected ({} of {} rules ran):\n",
            self.ran_count(),
            self.results.len()
        );
        for p in problems {
            text.push_str(&p);
            text.push('\n');
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
                Outcome::PassedInPart(why) => ("part", why.as_str()),
                Outcome::Failed(why) => ("FAIL", why.as_str()),
                Outcome::NotApplicable(why) => ("n/a", why.as_str()),
            };
            let ms = format!("{}ms", r.elapsed.as_millis());
            writeln!(f, "{:<width$}  {word:<7}  {ms:>8}  {detail}", r.name)?;
        }
        let failed = self.failures().len();
        let part = self
            .results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::PassedInPart(_)))
            .count();
        write!(
            f,
            "{} of {} rules ran: {} passed, {} passed in part, {} failed; {} not applicable",
            self.ran_count(),
            self.results.len(),
            self.passed_count(),
            part,
            failed,
            self.results.len() - self.ran_count()
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
