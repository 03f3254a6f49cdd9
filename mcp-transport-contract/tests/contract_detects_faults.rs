//! The suite is not vacuous: for every rule there is a transport that
//! breaks it, and the rule fails on that transport.
//!
//! Each [`Case`] is a deliberately broken transport (or wire) and the rules
//! it must fail; a case may also name rules it must still pass, to show that
//! what fails is the fault and not the harness. The test fails when a rule
//! of the suite has no case, so a rule added without a broken transport of
//! its own is caught here.
//!
//! Most cases wrap the [`Engine`] of an in-memory wire and break one thing
//! on the way in or out. Faults of a read loop (blocking on a listener,
//! dying on a bad line) need a transport that owns one: [`LineTransport`],
//! a small newline-delimited JSON transport over an in-memory pipe, whose
//! fault-free form passes every rule.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::framing::encode_line;
use mcp_protocol::methods::NOTIFICATION_CANCELLED;
use mcp_protocol::{ErrorObject, Inbound, Message, Notification, Request, RequestId};
use mcp_transport::{
    ConnectionHandlers, Engine, ExitInfo, GoneInfo, Listener, RequestOptions, ResponseFuture,
    ServerRequestHandler, Transport, TransportError,
};
use mcp_transport_contract::{
    ContractReport, DIE_CODE, DIE_STDERR, Harness, LinePeer, MemoryPeer, Outcome, Peer,
    memory_harness, rules, run_contract_suite,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The suite's default unit, which the faults below measure their delays in.
const UNIT: Duration = Duration::from_millis(100);

/// What a faulty transport over the in-memory wire gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// None: the control.
    None,
    /// Adds 1000 to numeric ids.
    Renumbers,
    /// Hands back the result without the defaulted `resultType`.
    DoesNotNormalize,
    /// Loses the `data` of an error answer.
    DropsErrorData,
    /// Sends notifications from a task of their own, after later requests.
    NotifyOutOfOrder,
    /// Never times a request out.
    IgnoresTimeout,
    /// Times a request out on time, but tells the caller a timeout later.
    ReportsTimeoutLate,
    /// Takes a second request with an id in flight as the new owner of
    /// that id, failing the first.
    ReplacesDuplicates,
    /// Watches each request's token and sends a wire cancel three units
    /// after it fires, whether or not the answer came first.
    LateCancel,
    /// Sends wire cancels even with `no_wire_cancel`.
    IgnoresNoWireCancel,
    /// Says it is alive whatever happened.
    StaysAlive,
    /// Keeps only the reason of a `ServerGone`, losing the exit status and
    /// stderr tail it was given.
    LosesGoneDetails,
    /// `close` refuses new work but leaves pending requests waiting.
    CloseForgetsPending,
    /// Attaches the connection listener at the first request, losing what
    /// the server said before it.
    LateListener,
    /// Never delivers anything to the connection listener.
    DropsConnectionNotifications,
    /// Never delivers anything to a request's listener.
    IgnoresRequestListeners,
    /// Handles one server request at a time.
    SerialServerRequests,
    /// Runs server-request handlers where an inbound cancel cannot reach.
    IgnoresInboundCancel,
    /// Without a handler, answers server requests with -32603, not -32601.
    UnhandledGetsWrongCode,
    /// Holds at most 256 requests in flight; later ones fail at once.
    TableOf256,
}

struct Faulty {
    engine: Engine,
    fault: Fault,
    /// Set at the first request (for [`Fault::LateListener`]).
    started: Arc<AtomicBool>,
    /// Set by `close` (for [`Fault::CloseForgetsPending`]).
    closed: AtomicBool,
}

impl Transport for Faulty {
    fn request(&self, mut request: Request, mut options: RequestOptions) -> ResponseFuture {
        self.started.store(true, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(Err(TransportError::Closed)));
        }
        match self.fault {
            Fault::Renumbers => {
                if let RequestId::Number(n) = request.id {
                    request.id = RequestId::Number(n.wrapping_add(1000));
                }
            }
            Fault::DoesNotNormalize => {
                let f = self.engine.request(request, options);
                return Box::pin(async move {
                    let mut v = f.await?;
                    if v["resultType"] == "complete" {
                        v.as_object_mut().unwrap().remove("resultType");
                    }
                    Ok(v)
                });
            }
            Fault::DropsErrorData => {
                let f = self.engine.request(request, options);
                return Box::pin(async move {
                    f.await.map_err(|e| match e {
                        TransportError::Rpc { code, message, .. } => TransportError::Rpc {
                            code,
                            message,
                            data: None,
                        },
                        other => other,
                    })
                });
            }
            Fault::IgnoresTimeout => {
                options.timeout = None;
                options.max_total = None;
            }
            Fault::ReportsTimeoutLate => {
                let f = self.engine.request(request, options);
                return Box::pin(async move {
                    let got = f.await;
                    if let Err(TransportError::Timeout { after, .. }) = &got {
                        tokio::time::sleep(*after).await;
                    }
                    got
                });
            }
            Fault::ReplacesDuplicates => {
                self.engine
                    .fail_request(&request.id, TransportError::Cancelled);
            }
            Fault::LateCancel => {
                if let Some(token) = options.cancellation.clone() {
                    let engine = self.engine.clone();
                    let id = request.id.clone();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        tokio::time::sleep(UNIT * 3).await;
                        let _ = engine.notify(Notification::new(
                            NOTIFICATION_CANCELLED,
                            Some(json!({ "requestId": id, "reason": "cancelled" })),
                        ));
                    });
                }
            }
            Fault::IgnoresNoWireCancel => options.cancel_on_wire = true,
            Fault::LosesGoneDetails => {
                let f = self.engine.request(request, options);
                return Box::pin(async move {
                    f.await.map_err(|e| match e {
                        TransportError::ServerGone(info) => {
                            TransportError::gone(GoneInfo::new(info.reason))
                        }
                        other => other,
                    })
                });
            }
            Fault::IgnoresRequestListeners => options.listener = None,
            Fault::TableOf256 if self.engine.pending_count() >= 256 => {
                return Box::pin(std::future::ready(Err(TransportError::Closed)));
            }
            _ => {}
        }
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(TransportError::Closed);
        }
        if let Fault::NotifyOutOfOrder = self.fault {
            let engine = self.engine.clone();
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                let _ = engine.notify(notification);
            });
            return Ok(());
        }
        self.engine.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        if let Fault::CloseForgetsPending = self.fault {
            self.closed.store(true, Ordering::SeqCst);
            return Box::pin(std::future::ready(()));
        }
        self.engine.close()
    }

    fn is_alive(&self) -> bool {
        match self.fault {
            Fault::StaysAlive => true,
            _ => !self.closed.load(Ordering::SeqCst) && self.engine.is_alive(),
        }
    }
}

/// Runs server-request handlers one at a time.
struct Serial {
    inner: Arc<dyn ServerRequestHandler>,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl ServerRequestHandler for Serial {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let inner = self.inner.clone();
        let turn = self.turn.clone();
        async move {
            let _turn = turn.lock_owned().await;
            inner.handle(request).await
        }
        .boxed()
    }
}

/// Runs each handler on a detached task: aborting the answer leaves the
/// handler running.
struct Detached(Arc<dyn ServerRequestHandler>);

impl ServerRequestHandler for Detached {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let task = tokio::spawn(self.0.handle(request));
        async move { task.await.expect("the handler panicked") }.boxed()
    }
}

fn wrong_code(request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    let error = ErrorObject::new(INTERNAL_ERROR, format!("{} is not handled", request.method));
    std::future::ready(Err(error)).boxed()
}

/// The connection as a faulty transport builds it: the handlers it keeps
/// (or breaks), then the engine over the in-memory wire.
fn faulty_parts(fault: Fault, mut handlers: ConnectionHandlers) -> (Arc<Faulty>, MemoryPeer) {
    let started = Arc::new(AtomicBool::new(false));
    match fault {
        Fault::LateListener => {
            let original = handlers.listener.clone();
            let started = started.clone();
            handlers.listener = Listener::from_fn(64, move |n| {
                if started.load(Ordering::SeqCst) {
                    original.push(n);
                }
            });
        }
        Fault::DropsConnectionNotifications => handlers.listener = Listener::discard(),
        Fault::SerialServerRequests => {
            if let Some(inner) = handlers.server_requests.take() {
                handlers = handlers.with_server_requests(Arc::new(Serial {
                    inner,
                    turn: Arc::default(),
                }));
            }
        }
        Fault::IgnoresInboundCancel => {
            if let Some(inner) = handlers.server_requests.take() {
                handlers = handlers.with_server_requests(Arc::new(Detached(inner)));
            }
        }
        Fault::UnhandledGetsWrongCode if handlers.server_requests.is_none() => {
            handlers = handlers.with_server_requests(Arc::new(wrong_code));
        }
        _ => {}
    }
    let (engine, peer) = memory_harness(handlers);
    let transport = Arc::new(Faulty {
        engine,
        fault,
        started,
        closed: AtomicBool::new(false),
    });
    (transport, peer)
}

fn faulty_harness(fault: Fault, handlers: ConnectionHandlers) -> Harness {
    let (transport, peer) = faulty_parts(fault, handlers);
    Harness::new(transport, peer)
}

/// A peer whose wire loses every cancel.
struct CancelEater(MemoryPeer);

impl Peer for CancelEater {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        Box::pin(async move {
            loop {
                let m = self.0.recv().await?;
                if m.method() != Some(NOTIFICATION_CANCELLED) {
                    return Some(m);
                }
            }
        })
    }
    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        self.0.send(message)
    }
    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        self.0.send_raw(line)
    }
    fn die(&mut self) -> BoxFuture<'_, ()> {
        self.0.die()
    }
}

/// An in-memory peer that dies as a process would, telling the engine
/// the exit status and stderr a process-running transport would have
/// learned. With it, a harness may declare those details known, and the
/// rule then checks what the transport above the engine does with them.
struct DiesLikeAProcess(MemoryPeer);

impl Peer for DiesLikeAProcess {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        self.0.recv()
    }
    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        self.0.send(message)
    }
    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        self.0.send_raw(line)
    }
    fn die(&mut self) -> BoxFuture<'_, ()> {
        self.0.die_with(
            GoneInfo::new("the process exited")
                .with_exit(ExitInfo::code(DIE_CODE))
                .with_stderr_tail(DIE_STDERR),
        );
        Box::pin(std::future::ready(()))
    }
}

/// What [`LineTransport`]'s read loop gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadFault {
    /// None: the control.
    None,
    /// Once a request's listener has had to drop a notification, the read
    /// loop waits for room in it before reading on (and nobody reads it).
    WaitsForListeners,
    /// Takes a line that is not JSON-RPC for the end of the stream.
    DiesOnMalformedLine,
    /// Reports the end of the stream with the exit status and stderr of
    /// the process it pretends to run, but a status that is not the one
    /// the process exited with.
    WrongExitStatus,
}

/// A newline-delimited JSON transport on an [`Engine`], with a read loop of
/// its own.
struct LineTransport {
    engine: Engine,
    listeners: Arc<Mutex<Vec<Listener>>>,
}

impl LineTransport {
    fn start(
        reader: impl AsyncRead + Unpin + Send + 'static,
        mut writer: impl AsyncWrite + Unpin + Send + 'static,
        handlers: ConnectionHandlers,
        fault: ReadFault,
    ) -> LineTransport {
        let (engine, mut outbound) = Engine::new(handlers);
        let shutdown = engine.shutdown_token();
        tokio::spawn(async move {
            loop {
                let item = tokio::select! {
                    item = outbound.recv() => item,
                    _ = shutdown.cancelled() => None,
                };
                let Some(item) = item else { break };
                let line = encode_line(&item.into_message());
                if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
        });
        let listeners: Arc<Mutex<Vec<Listener>>> = Arc::default();
        let watched = listeners.clone();
        let reading = engine.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match Inbound::parse(line.as_bytes()) {
                    Ok(inbound) => reading.receive_inbound(inbound),
                    Err(_) if fault == ReadFault::DiesOnMalformedLine => break,
                    Err(error) => reading.receive_malformed(error),
                }
                let full = watched.lock().unwrap().iter().any(|l| l.dropped() > 0);
                if fault == ReadFault::WaitsForListeners && full {
                    std::future::pending::<()>().await;
                }
            }
            let mut info = GoneInfo::new("the stream ended");
            if fault == ReadFault::WrongExitStatus {
                info = info
                    .with_exit(ExitInfo::code(DIE_CODE + 1))
                    .with_stderr_tail(DIE_STDERR);
            }
            reading.peer_gone(info);
        });
        LineTransport { engine, listeners }
    }
}

impl Transport for LineTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        if let Some(listener) = &options.listener {
            self.listeners.lock().unwrap().push(listener.clone());
        }
        self.engine.request(request, options)
    }
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        self.engine.close()
    }
    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }
}

fn line_harness(fault: ReadFault, handlers: ConnectionHandlers) -> Harness {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(ours);
    let (peer_read, peer_write) = tokio::io::split(theirs);
    let transport = LineTransport::start(read, write, handlers, fault);
    let harness = Harness::new(Arc::new(transport), LinePeer::new(peer_read, peer_write));
    match fault {
        ReadFault::WrongExitStatus => harness.reports_exit_status(),
        _ => harness,
    }
}

/// A broken transport, or a control.
#[derive(Clone, Copy, Debug)]
enum Case {
    /// A faulty transport over the in-memory wire.
    Faulty(Fault),
    /// The in-memory engine over a wire that loses every cancel.
    CancelEater,
    /// A faulty transport whose peer dies as a process would; the harness
    /// declares exit status and stderr tail known.
    DiesLikeAProcess(Fault),
    /// The line transport, its read loop broken (or not).
    Line(ReadFault),
}

async fn run(case: Case) -> ContractReport {
    run_contract_suite(move |handlers: ConnectionHandlers| async move {
        match case {
            Case::Faulty(fault) => faulty_harness(fault, handlers),
            Case::CancelEater => {
                let (engine, peer) = memory_harness(handlers);
                Harness::new(Arc::new(engine), CancelEater(peer))
            }
            Case::DiesLikeAProcess(fault) => {
                let (transport, peer) = faulty_parts(fault, handlers);
                Harness::new(transport, DiesLikeAProcess(peer))
                    .reports_exit_status()
                    .reports_stderr_tail()
            }
            Case::Line(fault) => line_harness(fault, handlers),
        }
    })
    .await
}

/// Every case: the rules it must fail, and the rules it must still pass.
fn cases() -> Vec<(Case, &'static [&'static str], &'static [&'static str])> {
    use Fault::*;
    vec![
        (Case::Faulty(Renumbers), &["ids_not_renumbered"], &[]),
        (Case::Faulty(DoesNotNormalize), &["result_normalized"], &[]),
        (Case::Faulty(DropsErrorData), &["rpc_error_verbatim"], &[]),
        (Case::Faulty(NotifyOutOfOrder), &["ordering"], &[]),
        (
            Case::Faulty(IgnoresTimeout),
            &["timeout", "timeout_resets_on_progress", "hard_maximum"],
            &[],
        ),
        (
            Case::Faulty(ReportsTimeoutLate),
            &["timeout", "timeout_resets_on_progress", "hard_maximum"],
            &[],
        ),
        (
            Case::CancelEater,
            &[
                "timeout",
                "cancel_by_token",
                "drop_sends_cancel",
                "hard_maximum",
            ],
            &["no_wire_cancel", "no_cancel_after_answer"],
        ),
        (
            Case::Faulty(ReplacesDuplicates),
            &["duplicate_id_refused"],
            &[],
        ),
        (Case::Faulty(LateCancel), &["no_cancel_after_answer"], &[]),
        (Case::Faulty(IgnoresNoWireCancel), &["no_wire_cancel"], &[]),
        (Case::Faulty(StaysAlive), &["peer_death", "close"], &[]),
        (Case::DiesLikeAProcess(None), &[], &["peer_death"]),
        (
            Case::DiesLikeAProcess(LosesGoneDetails),
            &["peer_death"],
            &[],
        ),
        (Case::Line(ReadFault::WrongExitStatus), &["peer_death"], &[]),
        (Case::Faulty(CloseForgetsPending), &["close"], &[]),
        (
            Case::Faulty(LateListener),
            &["server_speaks_first"],
            &["notification_routing"],
        ),
        (
            Case::Faulty(DropsConnectionNotifications),
            &["listeners_cannot_block", "server_speaks_first"],
            &[],
        ),
        (
            Case::Faulty(IgnoresRequestListeners),
            &["notification_routing"],
            &[],
        ),
        (
            Case::Line(ReadFault::WaitsForListeners),
            &["listeners_cannot_block"],
            &["notification_routing"],
        ),
        (
            Case::Faulty(SerialServerRequests),
            &["server_requests"],
            &["unhandled_server_request"],
        ),
        (
            Case::Faulty(IgnoresInboundCancel),
            &["server_requests"],
            &[],
        ),
        (
            Case::Faulty(UnhandledGetsWrongCode),
            &["unhandled_server_request"],
            &["server_requests"],
        ),
        (Case::Faulty(TableOf256), &["thousand_concurrent"], &[]),
        (
            Case::Line(ReadFault::DiesOnMalformedLine),
            &["malformed_line_skipped"],
            &[],
        ),
    ]
}

#[test]
fn every_rule_has_a_transport_that_breaks_it() {
    let names: Vec<&str> = rules().iter().map(|r| r.name).collect();
    let cases = cases();
    let shown: Vec<&str> = cases
        .iter()
        .flat_map(|(_, fails, _)| fails.iter().copied())
        .collect();
    let missing: Vec<&&str> = names.iter().filter(|n| !shown.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "no broken transport is shown to fail these rules: {missing:?}"
    );
    for (case, fails, passes) in &cases {
        for name in fails.iter().chain(passes.iter()) {
            assert!(
                names.contains(name),
                "{case:?} names {name:?}, which is no rule"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn each_broken_transport_fails_its_rules() {
    let mut problems = Vec::new();
    for (case, fails, passes) in cases() {
        let report = run(case).await;
        println!("{case:?}:\n{report}\n");
        for rule in fails {
            if !report.outcome(rule).is_some_and(Outcome::is_failed) {
                problems.push(format!(
                    "{case:?} should fail {rule}, but: {:?}",
                    report.outcome(rule)
                ));
            }
        }
        for rule in passes {
            if !report.outcome(rule).is_some_and(Outcome::is_passed) {
                problems.push(format!(
                    "{case:?} should pass {rule}, but: {:?}",
                    report.outcome(rule)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test(start_paused = true)]
async fn the_fault_free_forms_pass_every_rule() {
    for case in [
        Case::Faulty(Fault::None),
        Case::DiesLikeAProcess(Fault::None),
        Case::Line(ReadFault::None),
    ] {
        let report = run(case).await;
        println!("{case:?}:\n{report}\n");
        report.assert_all_passed();
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_error_data_fails_only_its_rule() {
    let report = run(Case::Faulty(Fault::DropsErrorData)).await;
    let failed: Vec<&str> = report.failures().iter().map(|r| r.name).collect();
    assert_eq!(failed, ["rpc_error_verbatim"]);
}

/// A cancel sent three units after the token fired is caught by the very
/// check that follows the cancel, not by a later one: the quiet wait is
/// long enough (with a two-unit wait it slipped through to the next check).
#[tokio::test(start_paused = true)]
async fn a_late_cancel_is_caught_by_the_check_that_follows_it() {
    let report = run(Case::Faulty(Fault::LateCancel)).await;
    let Some(Outcome::Failed(why)) = report.outcome("no_cancel_after_answer") else {
        panic!("{report}");
    };
    assert!(
        why.contains("for a token cancelled after the answer"),
        "caught by another check: {why}"
    );
}
