//! What follows one attempt of a request, as a pure table: from what the
//! attempt went out with ([`Attempt`]) and how it ended, [`decide`] says
//! what to do next. The request's loop only carries out what it says.
//!
//! | row | outcome | when | next |
//! |---|---|---|---|
//! | `answered` | an answer | | done |
//! | `version_rejected_retry_left` | `-32022` (modern) | a shared revision, a retry left | retry with that revision |
//! | `version_rejected_no_retry_left` | `-32022` (modern) | a shared revision, no retry left (the params were not kept) | fail with the server's error; the next call uses the shared revision |
//! | `version_rejected_none_shared` | `-32022` (modern) | no shared revision, a retry was left | fail: no revision in common |
//! | `version_rejected_none_shared_again` | `-32022` (modern) | no shared revision, no retry left | fail with the server's error |
//! | `session_expired` | session expired | legacy, recoverable, not renewed yet | renew the session, send again |
//! | `answer_lost_may_have_run` | answer lost | recoverable, not re-sent yet, the server may have run it, not harmless | fail: may have run |
//! | `answer_lost` | answer lost | recoverable, not re-sent yet, otherwise | send again |
//! | `connection_ended_after_close` | server gone, unreachable, 503 | supervised, but closed since | fail: closed |
//! | `busy_not_harmless` | 503 | supervised, not restarted yet, not harmless | wait as asked, leave the restart to the next call, fail: may have run |
//! | `server_died_not_harmless` | server gone | supervised, not restarted yet, not harmless | restart, then fail: may have run |
//! | `connection_ended` | server gone or 503 (harmless), unreachable | supervised, not restarted yet | wait as asked, restart, send again |
//! | `anything_else` | any other outcome | | fail with it |
//!
//! Each retry is spent once ([`Spent`]): a server that died with the
//! request spends the restart; an unreachable server or a 503 does not
//! (nothing ran, and the call's timeout bounds the waits). After a
//! restart, [`after_restart`]: a connection closed during it sends nothing
//! more.

use std::time::Duration;

use mcp_protocol::error_codes;
use mcp_protocol::version::{VersionRejection, VersionRetry};
use mcp_protocol::{Era, ProtocolVersion};
use mcp_transport::TransportError;
use serde_json::Value;

use crate::error::{ClientError, ErrorKind};

/// The retries a request has spent; each is made at most once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spent {
    /// A `-32022` retried with a revision from the server's list.
    pub(crate) version_retry: bool,
    /// An expired legacy session renewed.
    pub(crate) renewal: bool,
    /// A lost answer's request sent again.
    pub(crate) resend: bool,
    /// A restart after a server that died with the request.
    pub(crate) restart: bool,
}

/// Whether the connection restarts when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Supervision {
    /// Not supervised.
    Off,
    /// Supervised.
    On,
    /// Supervised until `close`, which came.
    Closed,
}

/// What one attempt went out with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attempt<'a> {
    /// The era of the revision it went out with.
    pub(crate) era: Era,
    /// The retries spent before it.
    pub(crate) spent: Spent,
    /// Whether a `-32022` may still be retried (a copy of the params is
    /// kept for it).
    pub(crate) version_retry: bool,
    /// Whether sessions can expire and answers be lost: only on transports
    /// that answer every request over a connection of their own (HTTP).
    pub(crate) recoverable: bool,
    /// Supervision, as it stands when the outcome is read.
    pub(crate) supervision: Supervision,
    /// The revisions the client offers, newest first.
    pub(crate) offered: &'a [ProtocolVersion],
}

impl Attempt<'_> {
    /// Whether a `-32022` may be retried: modern, not retried yet, and
    /// either the server has not yet accepted the revision or the params
    /// are `small` enough to copy for nothing (a large call's arguments are
    /// not doubled for a retry that rarely comes).
    pub(crate) fn version_retry_left(
        era: Era,
        spent: Spent,
        version_confirmed: bool,
        small: impl FnOnce() -> bool,
    ) -> bool {
        era == Era::Modern && !spent.version_retry && (!version_confirmed || small())
    }

    /// Whether any retry is still possible, so that a copy of the params
    /// must be kept for it.
    pub(crate) fn may_retry(&self) -> bool {
        self.version_retry
            || (self.recoverable && !(self.spent.renewal && self.spent.resend))
            || (self.supervision == Supervision::On && !self.spent.restart)
    }
}

/// What follows an attempt.
#[derive(Debug)]
pub(crate) enum Next {
    /// The answer: the request is done.
    Done(Value),
    /// Send again with this revision, which the connection uses from now.
    RetryWithVersion(ProtocolVersion),
    /// Renew the expired session, then send again.
    RenewSession,
    /// Send again: the answer was lost, for this cause.
    SendAgain {
        /// What lost it, in words.
        lost: String,
    },
    /// Wait as the server asked (if it did), restart the connection, then
    /// go on as `then` says.
    Restart {
        /// What ended the connection.
        cause: TransportError,
        /// The server's `Retry-After`.
        wait: Option<Duration>,
        /// What follows the restart.
        then: AfterRestart,
    },
    /// Wait as the server asked (if it did), leave the restart to the next
    /// call, and fail: the server may have run the request.
    RestartOnNextCall {
        /// The server's answer (a 503).
        cause: TransportError,
        /// Its `Retry-After`.
        wait: Option<Duration>,
    },
    /// Fail.
    Fail(ClientError),
    /// Fail, and make later calls use this revision (both sides know it).
    FailUsingVersion {
        /// The revision for later calls.
        version: ProtocolVersion,
        /// The error.
        error: ClientError,
    },
}

/// What follows a restart the table asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterRestart {
    /// Send the request again on the new connection.
    SendAgain,
    /// Fail: the server died with the request, and may have run it.
    FailMayHaveRun,
}

/// The table of the module docs: what follows an attempt that ended with
/// `outcome`, and the retries spent once it is done. `harmless` says
/// whether sending the request again is harmless; it is asked only where
/// a row needs it.
pub(crate) fn decide(
    attempt: &Attempt<'_>,
    outcome: Result<Value, TransportError>,
    harmless: impl FnOnce() -> bool,
) -> (Next, Spent) {
    let mut spent = attempt.spent;
    let next = match outcome {
        Ok(value) => Next::Done(value),
        Err(rejected @ TransportError::Rpc { code, .. })
            if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION && attempt.era == Era::Modern =>
        {
            version_rejected(attempt, rejected, &mut spent)
        }
        Err(TransportError::SessionExpired { .. })
            if attempt.recoverable && !spent.renewal && attempt.era == Era::Legacy =>
        {
            spent.renewal = true;
            Next::RenewSession
        }
        Err(TransportError::StreamBroken {
            may_have_run,
            cause,
        }) if attempt.recoverable && !spent.resend => {
            if may_have_run && !harmless() {
                let cause = TransportError::StreamBroken {
                    may_have_run,
                    cause,
                };
                Next::Fail(ClientError::new(ErrorKind::MayHaveRun { cause }))
            } else {
                spent.resend = true;
                Next::SendAgain { lost: cause }
            }
        }
        Err(
            TransportError::ServerGone(_)
            | TransportError::Unreachable { .. }
            | TransportError::RetryLater { status: 503, .. },
        ) if attempt.supervision == Supervision::Closed => {
            // `close` came while the request was out: what would have
            // restarted the connection is its end.
            Next::Fail(ClientError::from(TransportError::Closed))
        }
        Err(
            cause @ (TransportError::ServerGone(_)
            | TransportError::Unreachable { .. }
            | TransportError::RetryLater { status: 503, .. }),
        ) if attempt.supervision == Supervision::On && !spent.restart => {
            connection_ended(cause, harmless, &mut spent)
        }
        Err(e) => Next::Fail(ClientError::from(e)),
    };
    (next, spent)
}

/// The rows of a modern `-32022`, by what the server's list shares with
/// the client's.
fn version_rejected(attempt: &Attempt<'_>, rejected: TransportError, spent: &mut Spent) -> Next {
    let data = match &rejected {
        TransportError::Rpc { data, .. } => data.as_ref(),
        _ => None,
    };
    let rejection = VersionRejection::read(data, attempt.offered, attempt.version_retry);
    match rejection.next {
        VersionRetry::Retry(version) => {
            spent.version_retry = true;
            Next::RetryWithVersion(version)
        }
        VersionRetry::NoRetry(version) => Next::FailUsingVersion {
            version,
            error: ClientError::from(rejected),
        },
        VersionRetry::NoneShared if attempt.version_retry => {
            Next::Fail(ClientError::new(ErrorKind::Negotiation {
                client: modern(attempt.offered),
                server: rejection.supported,
            }))
        }
        VersionRetry::NoneShared => Next::Fail(ClientError::from(rejected)),
    }
}

/// The rows of a supervised connection that ended (the server gone or
/// unreachable, or a 503) while a restart is left.
fn connection_ended(
    cause: TransportError,
    harmless: impl FnOnce() -> bool,
    spent: &mut Spent,
) -> Next {
    // A 503 is the server (or its gateway) saying it is not serving now:
    // connect again once it said it would. A gateway answers 503 after
    // forwarding too, so the server may have run the request.
    let (busy, wait) = match &cause {
        TransportError::RetryLater { retry_after, .. } => (true, *retry_after),
        _ => (false, None),
    };
    // Unreachable: the request did not run, so trying again is always
    // safe. A server that died with the request may have run it.
    let died = matches!(cause, TransportError::ServerGone(_));
    let harmless = !(busy || died) || harmless();
    if busy && !harmless {
        // Not sent again: the next call restarts the connection, rather
        // than this one waiting for a restart it cannot use.
        return Next::RestartOnNextCall { cause, wait };
    }
    spent.restart = died;
    let then = if died && !harmless {
        AfterRestart::FailMayHaveRun
    } else {
        AfterRestart::SendAgain
    };
    Next::Restart { cause, wait, then }
}

/// What follows a restart that `then` planned, now that it is done:
/// `Ok` sends the request again.
pub(crate) fn after_restart(
    still_supervised: bool,
    then: AfterRestart,
    cause: TransportError,
) -> Result<(), ClientError> {
    if !still_supervised {
        // Closed during the restart: nothing more goes out.
        return Err(ClientError::from(TransportError::Closed));
    }
    match then {
        AfterRestart::SendAgain => Ok(()),
        AfterRestart::FailMayHaveRun => Err(ClientError::new(ErrorKind::MayHaveRun { cause })),
    }
}

/// The modern revisions of `offered`.
fn modern(offered: &[ProtocolVersion]) -> Vec<ProtocolVersion> {
    offered
        .iter()
        .filter(|v| v.era() == Era::Modern)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use mcp_transport::GoneInfo;
    use serde_json::json;

    use super::*;

    const OFFERED: &[ProtocolVersion] = &[
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];

    fn attempt(era: Era) -> Attempt<'static> {
        Attempt {
            era,
            spent: Spent::default(),
            version_retry: era == Era::Modern,
            recoverable: true,
            supervision: Supervision::Off,
            offered: OFFERED,
        }
    }

    fn supervised(era: Era) -> Attempt<'static> {
        Attempt {
            supervision: Supervision::On,
            recoverable: false,
            ..attempt(era)
        }
    }

    fn never() -> bool {
        panic!("this row does not ask whether re-sending is harmless")
    }

    fn rejected(supported: &[&str]) -> Result<Value, TransportError> {
        Err(TransportError::Rpc {
            code: error_codes::UNSUPPORTED_PROTOCOL_VERSION,
            message: "unsupported".into(),
            data: Some(json!({ "supported": supported })),
        })
    }

    fn gone() -> TransportError {
        TransportError::gone(GoneInfo::new("exited"))
    }

    fn busy() -> TransportError {
        TransportError::RetryLater {
            status: 503,
            retry_after: Some(Duration::from_secs(2)),
            body: String::new(),
        }
    }

    fn lost(may_have_run: bool) -> Result<Value, TransportError> {
        Err(TransportError::StreamBroken {
            may_have_run,
            cause: "reset".into(),
        })
    }

    fn kind(next: &Next) -> &ErrorKind {
        match next {
            Next::Fail(e) | Next::FailUsingVersion { error: e, .. } => e.kind(),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn answered() {
        let (next, spent) = decide(&attempt(Era::Modern), Ok(json!({"ok": 1})), never);
        assert!(matches!(next, Next::Done(v) if v == json!({"ok": 1})));
        assert_eq!(spent, Spent::default());
    }

    #[test]
    fn version_rejected_retry_left() {
        let (next, spent) = decide(
            &attempt(Era::Modern),
            rejected(&["2026-07-28", "2099-01-01"]),
            never,
        );
        // Even the revision just sent: the server lists it.
        assert!(matches!(next, Next::RetryWithVersion(v) if v == ProtocolVersion::V2026_07_28));
        assert!(spent.version_retry);
        // A legacy attempt's -32022 is no version retry: the last row.
        let (next, _) = decide(&attempt(Era::Legacy), rejected(&["2026-07-28"]), never);
        assert!(matches!(kind(&next), ErrorKind::Server { code, .. }
            if *code == error_codes::UNSUPPORTED_PROTOCOL_VERSION));
    }

    #[test]
    fn version_rejected_no_retry_left() {
        let spent_one = Attempt {
            version_retry: false,
            ..attempt(Era::Modern)
        };
        let (next, spent) = decide(&spent_one, rejected(&["2026-07-28"]), never);
        let Next::FailUsingVersion { version, error } = next else {
            panic!("expected a failure that switches the revision, got {next:?}");
        };
        assert_eq!(version, ProtocolVersion::V2026_07_28);
        assert_eq!(
            error.code(),
            Some(error_codes::UNSUPPORTED_PROTOCOL_VERSION)
        );
        assert!(!spent.version_retry);
    }

    #[test]
    fn version_rejected_none_shared() {
        let (next, _) = decide(&attempt(Era::Modern), rejected(&["2099-01-01"]), never);
        let ErrorKind::Negotiation { client, server } = kind(&next) else {
            panic!("expected a negotiation error, got {next:?}");
        };
        assert_eq!(client, &vec![ProtocolVersion::V2026_07_28]);
        assert!(server.iter().all(|v| v.as_str() == "2099-01-01"));
    }

    #[test]
    fn version_rejected_none_shared_again() {
        let spent_one = Attempt {
            version_retry: false,
            ..attempt(Era::Modern)
        };
        let (next, _) = decide(&spent_one, rejected(&["2099-01-01"]), never);
        assert!(matches!(next, Next::Fail(ref e)
            if e.code() == Some(error_codes::UNSUPPORTED_PROTOCOL_VERSION)));
    }

    #[test]
    fn session_expired() {
        let expired = || Err(TransportError::SessionExpired { status: 404 });
        let (next, spent) = decide(&attempt(Era::Legacy), expired(), never);
        assert!(matches!(next, Next::RenewSession));
        assert!(spent.renewal);
        // Renewed once already, in modern, or over stdio: the last row.
        let renewed = Attempt {
            spent,
            ..attempt(Era::Legacy)
        };
        let stdio = Attempt {
            recoverable: false,
            ..attempt(Era::Legacy)
        };
        for other in [renewed, attempt(Era::Modern), stdio] {
            let (next, _) = decide(&other, expired(), never);
            assert!(matches!(
                kind(&next),
                ErrorKind::Transport(TransportError::SessionExpired { .. })
            ));
        }
    }

    #[test]
    fn answer_lost_may_have_run() {
        let (next, spent) = decide(&attempt(Era::Legacy), lost(true), || false);
        assert!(matches!(
            kind(&next),
            ErrorKind::MayHaveRun {
                cause: TransportError::StreamBroken {
                    may_have_run: true,
                    ..
                }
            }
        ));
        assert!(!spent.resend);
    }

    #[test]
    fn answer_lost() {
        // Harmless to send again, or never run.
        let (next, spent) = decide(&attempt(Era::Legacy), lost(true), || true);
        assert!(matches!(next, Next::SendAgain { ref lost } if lost == "reset"));
        assert!(spent.resend);
        let (next, _) = decide(&attempt(Era::Modern), lost(false), never);
        assert!(matches!(next, Next::SendAgain { .. }));
        // Re-sent once already, or over stdio: the last row.
        let resent = Attempt {
            spent,
            ..attempt(Era::Legacy)
        };
        let stdio = Attempt {
            recoverable: false,
            ..attempt(Era::Legacy)
        };
        for other in [resent, stdio] {
            let (next, _) = decide(&other, lost(false), never);
            assert!(matches!(
                kind(&next),
                ErrorKind::Transport(TransportError::StreamBroken { .. })
            ));
        }
    }

    #[test]
    fn connection_ended_after_close() {
        let closed = Attempt {
            supervision: Supervision::Closed,
            ..supervised(Era::Legacy)
        };
        let unreachable = TransportError::Unreachable {
            cause: "refused".into(),
        };
        for ended in [gone(), unreachable, busy()] {
            let (next, _) = decide(&closed, Err(ended), never);
            assert!(matches!(
                kind(&next),
                ErrorKind::Transport(TransportError::Closed)
            ));
        }
    }

    #[test]
    fn busy_not_harmless() {
        let (next, spent) = decide(&supervised(Era::Modern), Err(busy()), || false);
        assert!(matches!(next, Next::RestartOnNextCall {
            cause: TransportError::RetryLater { status: 503, .. },
            wait: Some(w),
        } if w == Duration::from_secs(2)));
        assert!(!spent.restart);
    }

    #[test]
    fn server_died_not_harmless() {
        let (next, spent) = decide(&supervised(Era::Legacy), Err(gone()), || false);
        assert!(matches!(
            next,
            Next::Restart {
                cause: TransportError::ServerGone(_),
                wait: None,
                then: AfterRestart::FailMayHaveRun,
            }
        ));
        assert!(spent.restart);
    }

    #[test]
    fn connection_ended() {
        // The server died, harmless to send again: spends the restart.
        let (next, spent) = decide(&supervised(Era::Legacy), Err(gone()), || true);
        assert!(matches!(
            next,
            Next::Restart {
                then: AfterRestart::SendAgain,
                wait: None,
                ..
            }
        ));
        assert!(spent.restart);
        // Unreachable: nothing ran, nothing asked, nothing spent.
        let unreachable = TransportError::Unreachable {
            cause: "refused".into(),
        };
        let (next, spent) = decide(&supervised(Era::Legacy), Err(unreachable), never);
        assert!(matches!(
            next,
            Next::Restart {
                cause: TransportError::Unreachable { .. },
                then: AfterRestart::SendAgain,
                ..
            }
        ));
        assert!(!spent.restart);
        // A 503 for a harmless request: its wait, nothing spent.
        let (next, spent) = decide(&supervised(Era::Modern), Err(busy()), || true);
        assert!(matches!(
            next,
            Next::Restart {
                wait: Some(_),
                then: AfterRestart::SendAgain,
                ..
            }
        ));
        assert!(!spent.restart);
    }

    #[test]
    fn anything_else() {
        // Restarted once already: the server's end is the call's.
        let restarted = Attempt {
            spent: Spent {
                restart: true,
                ..Spent::default()
            },
            ..supervised(Era::Legacy)
        };
        let (next, _) = decide(&restarted, Err(gone()), never);
        assert!(matches!(
            kind(&next),
            ErrorKind::Transport(TransportError::ServerGone(_))
        ));
        // Not supervised; a 429; a server's own error; a timeout.
        let (next, _) = decide(&attempt(Era::Legacy), Err(gone()), never);
        assert!(matches!(
            kind(&next),
            ErrorKind::Transport(TransportError::ServerGone(_))
        ));
        let slow_down = TransportError::RetryLater {
            status: 429,
            retry_after: None,
            body: String::new(),
        };
        let (next, _) = decide(&supervised(Era::Modern), Err(slow_down), never);
        assert!(matches!(
            kind(&next),
            ErrorKind::Transport(TransportError::RetryLater { status: 429, .. })
        ));
        let refused = TransportError::Rpc {
            code: -32601,
            message: "no".into(),
            data: None,
        };
        let (next, spent) = decide(&attempt(Era::Modern), Err(refused), never);
        assert!(matches!(
            kind(&next),
            ErrorKind::Server { code: -32601, .. }
        ));
        assert_eq!(spent, Spent::default());
    }

    #[test]
    fn after_a_restart() {
        let closed = after_restart(false, AfterRestart::SendAgain, gone());
        assert!(matches!(
            closed.unwrap_err().kind(),
            ErrorKind::Transport(TransportError::Closed)
        ));
        assert!(after_restart(true, AfterRestart::SendAgain, gone()).is_ok());
        let died = after_restart(true, AfterRestart::FailMayHaveRun, gone());
        assert!(died.unwrap_err().may_have_run());
    }

    #[test]
    fn what_an_attempt_keeps_a_copy_for() {
        let small = || true;
        let large = || false;
        let none = Spent::default();
        assert!(Attempt::version_retry_left(Era::Modern, none, false, never));
        assert!(Attempt::version_retry_left(Era::Modern, none, true, small));
        assert!(!Attempt::version_retry_left(Era::Modern, none, true, large));
        assert!(!Attempt::version_retry_left(
            Era::Legacy,
            none,
            false,
            never
        ));
        let retried = Spent {
            version_retry: true,
            ..none
        };
        assert!(!Attempt::version_retry_left(
            Era::Modern,
            retried,
            false,
            never
        ));

        let stdio = Attempt {
            version_retry: false,
            recoverable: false,
            ..attempt(Era::Legacy)
        };
        assert!(!stdio.may_retry());
        assert!(
            Attempt {
                version_retry: true,
                ..stdio
            }
            .may_retry()
        );
        let http = Attempt {
            recoverable: true,
            ..stdio
        };
        assert!(http.may_retry());
        let both_spent = Spent {
            renewal: true,
            resend: true,
            ..none
        };
        assert!(
            !Attempt {
                spent: both_spent,
                ..http
            }
            .may_retry()
        );
        let on = Attempt {
            supervision: Supervision::On,
            ..stdio
        };
        assert!(on.may_retry());
        let restarted = Spent {
            restart: true,
            ..none
        };
        assert!(
            !Attempt {
                spent: restarted,
                ..on
            }
            .may_retry()
        );
        assert!(
            !Attempt {
                supervision: Supervision::Closed,
                ..stdio
            }
            .may_retry()
        );
    }
}
