//! Why serving ends ([`Ended`]), and one client served over a byte stream,
//! watched until it does: the client leaves, `stop` resolves, or the
//! server goes and cannot be restarted within its budget. Each way out
//! tells the other side what it must know: the server that its calls in
//! flight are cancelled, the client that its calls may have run.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_transport::{Connector, Transport};
use mcp_transport_stdio::StreamTransport;

use crate::link::Link;
use crate::passthrough::Passthrough;
use crate::restart::{Budget, restart};

/// How long the bridge lets the client read its last answers before it
/// exits, once the server is gone.
pub(crate) const LAST_WORDS: Duration = Duration::from_secs(2);
/// How often the bridge looks whether the server is still there.
const WATCH: Duration = Duration::from_millis(50);
/// How long the calls relayed when serving ends get to say they are
/// cancelled before the server's session closes.
const CANCELS: Duration = Duration::from_millis(100);

/// Why serving ended.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Ended {
    /// The client closed its side (stdin's end): the server's session was
    /// closed with it.
    #[error("the client left")]
    ClientLeft,
    /// The server went away (and could not be restarted within the
    /// budget); the client's pending calls were answered with an error
    /// saying so.
    #[error("the server is gone: {0}")]
    ServerGone(String),
    /// Serving was stopped (its stop future resolved): the server was told
    /// each call in flight is cancelled, and every session was ended and
    /// its server closed.
    #[error("serving was stopped")]
    Stopped,
}

pub(crate) struct Watched {
    pub(crate) link: Arc<Link>,
    pub(crate) downstream: Arc<StreamTransport>,
    pub(crate) passthrough: Option<Arc<Passthrough>>,
    pub(crate) connector: Arc<dyn Connector>,
    pub(crate) budget: Budget,
}

/// What ended a wait on the server.
enum Interrupted {
    ClientLeft,
    Stopped,
}

impl Watched {
    pub(crate) async fn run(mut self, stop: impl Future<Output = ()> + Send) -> Ended {
        let mut stop = std::pin::pin!(stop);
        let mut restarts = 0;
        // Why the last restart failed: the next one is tried while the
        // budget lasts.
        let mut failed: Option<String> = None;
        loop {
            let upstream = self.link.upstream().expect("connected before serving");
            if let Err(how) = self.unless_interrupted(gone(&upstream), &mut stop).await {
                return self.leave(&upstream, how).await;
            }
            if let Some(passthrough) = &self.passthrough {
                passthrough.server_gone(&upstream);
            }
            // The client's calls in flight fail with an error that says
            // the server is gone and they may have run.
            let link = self.link.clone();
            let answered = drained(&link, LAST_WORDS);
            if let Err(how) = self.unless_interrupted(answered, &mut stop).await {
                return self.leave(&upstream, how).await;
            }
            let why = if self.budget.take() {
                restarts += 1;
                tracing::warn!(attempt = restarts, "the server is gone; restarting it");
                let restarting = restart(&self.link, &self.connector, restarts);
                match self.unless_interrupted(restarting, &mut stop).await {
                    Ok(Ok(())) => {
                        failed = None;
                        continue;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(attempt = restarts, error = %e, "the server could not be restarted");
                        failed = Some(format!("the server could not be restarted: {e}"));
                        continue;
                    }
                    Err(how) => {
                        // The new server, if it came up, is closed too.
                        let upstream = self.link.upstream().expect("connected before serving");
                        return self.leave(&upstream, how).await;
                    }
                }
            } else if let Some(why) = failed {
                why
            } else if restarts > 0 {
                format!("the server's connection ended, after {restarts} restarts")
            } else {
                "the server's connection ended".to_owned()
            };
            // The client reads what is pending before the bridge goes.
            self.downstream.close_after_writing(LAST_WORDS).await;
            tracing::warn!("{why}");
            return Ended::ServerGone(why);
        }
    }

    /// Waits for `wait`, unless the client leaves or `stop` resolves
    /// first (`Err`: which).
    async fn unless_interrupted<T>(
        &self,
        wait: impl Future<Output = T>,
        stop: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Result<T, Interrupted> {
        tokio::select! {
            done = wait => Ok(done),
            () = self.downstream.ended() => Err(Interrupted::ClientLeft),
            () = stop.as_mut() => Err(Interrupted::Stopped),
        }
    }

    /// Ends serving: the server is told each call in flight is cancelled,
    /// then its session closes.
    async fn leave(&self, upstream: &Arc<dyn Transport>, how: Interrupted) -> Ended {
        match how {
            Interrupted::ClientLeft => {
                tracing::info!("the client left; closing the server's session");
            }
            Interrupted::Stopped => {
                tracing::info!("stopped; closing the client's and the server's sessions");
                // Its relayed calls are dropped, each cancelled upstream.
                drop(self.downstream.close());
            }
        }
        if let Some(passthrough) = &self.passthrough {
            passthrough.client_gone(upstream);
        }
        drained(&self.link, CANCELS).await;
        upstream.close().await;
        match how {
            Interrupted::ClientLeft => Ended::ClientLeft,
            Interrupted::Stopped => Ended::Stopped,
        }
    }
}

/// Resolves once no call of the client's is being relayed, or after
/// `limit`.
async fn drained(link: &Link, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while link.in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Resolves once `transport` is no longer alive.
async fn gone(transport: &Arc<dyn Transport>) {
    while transport.is_alive() {
        tokio::time::sleep(WATCH).await;
    }
}
