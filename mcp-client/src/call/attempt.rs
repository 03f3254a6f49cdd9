//! One request, attempt after attempt: each attempt goes out in the era's
//! envelope under a span of its own; what follows it is the table of
//! [`after_attempt`](super::after_attempt), which this loop only carries
//! out (retry with a revision, renew the session, send again, restart,
//! fail, done).

use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_protocol::types::ProgressNotificationParams;
use mcp_protocol::{Era, Notification, ProtocolVersion, Request, RequestId, methods};
use mcp_transport::{Listener, RequestOptions, TransportError};
use serde_json::Value;
use tokio::time::Instant;

use super::after_attempt::{
    AfterRestart, Attempt, Next, Spent, Supervision, after_restart, decide,
};
use crate::envelope::envelope;
use crate::error::{ErrorKind, Result};
use crate::in_flight::{Owner, target_of};
use crate::kept_params::{COPY_FOR_RETRY_LIMIT, KeptParams, smaller_than};
use crate::options::{CallOptions, ProgressCallback};
use crate::renewal::Renew;
use crate::session::Session;
use crate::trace;

/// Makes one request and returns its result (normalized). Retried, each
/// at most once and with a new id, as the table of
/// [`after_attempt`](super::after_attempt) says: a modern `-32022` with a
/// revision both sides know; an expired legacy session after one renewal
/// shared by every request that met it; a lost answer when the server
/// cannot have run the request or running it twice is harmless; a
/// supervised connection that ended, after its restart.
///
/// `kept` is the caller's copy of `params`, when it keeps one: a retry is
/// rebuilt from it, so no second copy is made here (a modern `tools/call`
/// would otherwise copy its arguments twice per call).
pub(crate) async fn request(
    session: &Session,
    method: &str,
    params: Option<Value>,
    options: &CallOptions,
    kept: Option<&KeptParams>,
) -> Result<Value> {
    answered(session, method, params, options, kept)
        .await
        .map(|(value, _)| value)
}

/// [`request`], with the id of the attempt that was answered (for the
/// context of the handlers an `input_required` answer reaches).
pub(crate) async fn answered(
    session: &Session,
    method: &str,
    mut params: Option<Value>,
    options: &CallOptions,
    kept: Option<&KeptParams>,
) -> Result<(Value, RequestId)> {
    let _in_flight = session.in_flight.enter();
    let mut attempts = Attempts {
        version: session.version(),
        spent: Spent::default(),
        own: None,
    };
    let recoverable = session.transport().profile().answers_every_request;
    // Waiting for a supervised connection's restart takes from the
    // call's own time, however many restarts it waits for.
    let deadline = Instant::now() + options.timeout.unwrap_or(session.config.request_timeout);
    loop {
        if params.is_none() {
            // A retry: the params went with the last attempt.
            params = kept.or(attempts.own.as_ref()).map(KeptParams::value);
        }
        let generation = session
            .until(deadline, session.ready())
            .await
            .map_err(|e| session.fail(method, e))?;
        let era = attempts.version.era();
        let confirmed = session.version_confirmed.load(Ordering::Relaxed);
        let mut attempt = Attempt {
            era,
            spent: attempts.spent,
            version_retry: Attempt::version_retry_left(era, attempts.spent, confirmed, || {
                smaller_than(params.as_ref(), COPY_FOR_RETRY_LIMIT)
            }),
            recoverable,
            supervision: supervision(session),
            offered: &session.config.versions,
        };
        // A copy of the params is kept only while a retry is still
        // possible; large arguments are not copied for nothing.
        if attempt.may_retry() && kept.is_none() {
            attempts.own = params.as_ref().map(KeptParams::of);
        }
        let (id, outcome) =
            attempt_once(session, method, params.take(), options, &attempts.version).await;
        attempt.supervision = supervision(session);
        let sent = || kept.or(attempts.own.as_ref()).map(KeptParams::value);
        let (next, spent) = decide(&attempt, outcome, || {
            session.resend.is_harmless(method, sent().as_ref())
        });
        attempts.spent = spent;
        let step = Step {
            method,
            generation,
            deadline,
        };
        if let Some(value) = carry_out(session, &step, next, &mut attempts.version).await? {
            return Ok((value, id));
        }
    }
}

/// Where a request stands when what follows an attempt is carried out.
struct Step<'a> {
    method: &'a str,
    /// The generation the attempt went out under.
    generation: u64,
    /// When the call's own time runs out.
    deadline: Instant,
}

/// Carries out what [`decide`] said: the value when the request is done,
/// `None` to send it again (with `version`, changed by a version retry).
async fn carry_out(
    session: &Session,
    step: &Step<'_>,
    next: Next,
    version: &mut ProtocolVersion,
) -> Result<Option<Value>> {
    let method = step.method;
    match next {
        Next::Done(value) => {
            session.version_confirmed.store(true, Ordering::Relaxed);
            if let Some(supervisor) = &session.supervisor {
                supervisor.call_succeeded();
            }
            return Ok(Some(value));
        }
        Next::RetryWithVersion(v) => {
            tracing::info!(from = %version, to = %v, "the server rejected the protocol revision; retrying with one it supports");
            session.update_verdict(|verdict| verdict.version = v.clone());
            *version = v;
        }
        Next::RenewSession => session
            .renew(step.generation, Renew::Session)
            .await
            .map_err(|e| session.fail(method, e))?,
        Next::SendAgain { lost } => {
            tracing::info!(method, cause = %lost, "the answer was lost; sending the request again");
        }
        Next::Restart { cause, wait, then } => restart_then(session, step, cause, wait, then)
            .await
            .map_err(|e| session.fail(method, e))?,
        Next::RestartOnNextCall { cause, wait } => {
            if let Some(supervisor) = &session.supervisor {
                supervisor.asked_to_wait(wait);
                supervisor.restart_later(step.generation, cause.clone());
            }
            return Err(session.fail(method, ErrorKind::MayHaveRun { cause }));
        }
        Next::Fail(error) => return Err(session.fail(method, error)),
        Next::FailUsingVersion { version, error } => {
            // The server went back on a revision it had accepted, and no
            // copy of the params was kept (they may be large): the next
            // call uses a revision it lists.
            session.update_verdict(|verdict| verdict.version = version);
            return Err(session.fail(method, error));
        }
    }
    Ok(None)
}

/// One attempt: the request in the era's envelope, under a span of its
/// own, with its progress handed to the caller's callback.
async fn attempt_once(
    session: &Session,
    method: &str,
    params: Option<Value>,
    options: &CallOptions,
    version: &ProtocolVersion,
) -> (RequestId, std::result::Result<Value, TransportError>) {
    let id = session.ids.next();
    let token = options.wants_progress().then(|| id.clone());
    let level = session.log_level();
    let span = trace::request_span(method, &id, version, params.as_ref());
    trace::note_id_on_round(&id);
    let extra = trace::extras_with_context(&span, params.as_ref(), &options.meta);
    let transport = session.transport();
    let profile = transport.profile();
    // A legacy server may ask the client something during the request, on
    // a stream that ties it to this request: its handlers are the call's.
    // Kept only where the transport can tie them (not over stdio).
    let _owned = (version.era() == Era::Legacy && profile.ties_server_requests).then(|| {
        let owner = Owner {
            method: method.to_owned(),
            target: target_of(method, params.as_ref()),
            on_behalf_of: options.on_behalf_of.clone(),
            handlers: options.handlers.clone(),
        };
        session.in_flight.own(id.clone(), owner)
    });
    let enveloped = envelope(
        &session.config,
        version,
        params,
        &extra,
        token,
        level.as_ref(),
        profile.takes_shared_meta,
    );
    let request = Request::new(id.clone(), method, enveloped.params);
    let mut transport_options = transport_options(session, method, options);
    transport_options.shared_meta = enveloped.shared;
    let progress = match &options.on_progress {
        Some(callback) if method != methods::SUBSCRIPTIONS_LISTEN => {
            let (listener, stream) = Listener::bounded("progress", 64);
            transport_options = transport_options.listener(listener);
            Some((stream, callback.clone()))
        }
        _ => None,
    };
    let answer = transport.request(request, transport_options);
    let outcome =
        tracing::Instrument::instrument(with_progress(answer, progress), span.clone()).await;
    trace::record_request(&span, &outcome);
    (id, outcome)
}

/// Carries out a restart the table asked for: waits as the server
/// asked, restarts (within the call's time), then sends again or fails
/// as planned.
async fn restart_then(
    session: &Session,
    step: &Step<'_>,
    cause: TransportError,
    wait: Option<Duration>,
    then: AfterRestart,
) -> Result<()> {
    if let Some(supervisor) = &session.supervisor {
        supervisor.asked_to_wait(wait);
    }
    let restart = session.renew(step.generation, Renew::Connection(&cause));
    session.until(step.deadline, restart).await?;
    after_restart(session.supervised(), then, cause)?;
    tracing::info!(
        method = step.method,
        "sending the request again on the new connection"
    );
    Ok(())
}

/// Whether the connection restarts when it ends, and whether `close`
/// stopped that.
fn supervision(session: &Session) -> Supervision {
    match &session.supervisor {
        None => Supervision::Off,
        Some(_) if session.supervised() => Supervision::On,
        Some(_) => Supervision::Closed,
    }
}

/// The transport's options for one attempt.
fn transport_options(session: &Session, method: &str, options: &CallOptions) -> RequestOptions {
    if method == methods::SUBSCRIPTIONS_LISTEN {
        // A listen stream lives as long as it is wanted; its
        // notifications feed the client's events like any others.
        let listener = options.listener.clone();
        let mut o =
            RequestOptions::new().listener(listener.unwrap_or_else(|| session.listener.clone()));
        if let Some(token) = &options.cancellation {
            o = o.cancellation(token.clone());
        }
        return o;
    }
    let timeout = options.timeout.unwrap_or(session.config.request_timeout);
    let max_total = options
        .max_total
        .unwrap_or(session.config.max_total_timeout)
        .max(timeout);
    let mut o = RequestOptions::new().timeout(timeout).max_total(max_total);
    o.headers = options.headers.clone();
    o.reset_on_progress = options.reset_on_progress;
    if method == methods::INITIALIZE {
        o = o.no_wire_cancel();
    }
    if let Some(token) = &options.cancellation {
        o = o.cancellation(token.clone());
    }
    o
}

/// Waits for an answer while handing the request's progress to its
/// callback, on the caller's task and in order; progress that arrived
/// before the answer is delivered before this returns.
async fn with_progress(
    answer: mcp_transport::ResponseFuture,
    progress: Option<(mcp_transport::ListenerStream, ProgressCallback)>,
) -> std::result::Result<Value, TransportError> {
    let Some((mut stream, callback)) = progress else {
        return answer.await;
    };
    let deliver = |n: Notification| {
        if n.method != methods::NOTIFICATION_PROGRESS {
            return;
        }
        match serde_json::from_value::<ProgressNotificationParams>(n.params.unwrap_or(Value::Null))
        {
            Ok(p) => callback(p),
            Err(e) => tracing::debug!(error = %e, "skipped a malformed progress notification"),
        }
    };
    tokio::pin!(answer);
    loop {
        tokio::select! {
            biased;
            Some(n) = stream.recv() => deliver(n),
            outcome = &mut answer => {
                while let Some(n) = stream.try_recv() {
                    deliver(n);
                }
                return outcome;
            }
        }
    }
}

/// A request's attempts so far: the revision they go out with, the
/// retries spent, and the copy of the params kept for a retry when the
/// caller keeps none.
struct Attempts {
    version: ProtocolVersion,
    spent: Spent,
    own: Option<KeptParams>,
}
