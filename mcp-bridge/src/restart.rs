//! Restarting a server that died: within a budget, the client's handshake
//! told to the new server, and the client told its lists may have changed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::methods::{INITIALIZE, NOTIFICATION_INITIALIZED};
use mcp_protocol::{Notification, Request, RequestId};
use mcp_transport::{Connector, RequestOptions, TransportError};
use tokio::time::Instant;

use crate::link::Link;
use crate::relay::upstream_handlers;

/// How often the bridge restarts a server that died: at most `max` times
/// in any `within`. The default never restarts.
///
/// ```
/// use std::time::Duration;
/// use mcp_bridge::Restarts;
///
/// let restarts = Restarts::new(3, Duration::from_secs(60));
/// assert_eq!(restarts.max, 3);
/// assert_eq!(Restarts::default(), Restarts::never());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restarts {
    /// Restarts allowed in any window of `within`.
    pub max: u32,
    /// The window.
    pub within: Duration,
}

impl Restarts {
    /// At most `max` restarts in any `within`.
    pub fn new(max: u32, within: Duration) -> Restarts {
        Restarts { max, within }
    }

    /// No restart: serving ends when the server dies.
    pub fn never() -> Restarts {
        Restarts::new(0, Duration::ZERO)
    }
}

impl Default for Restarts {
    fn default() -> Self {
        Restarts::never()
    }
}

/// The restarts spent, against the budget.
pub(crate) struct Budget {
    restarts: Restarts,
    spent: VecDeque<Instant>,
}

impl Budget {
    pub(crate) fn new(restarts: Restarts) -> Budget {
        Budget {
            restarts,
            spent: VecDeque::new(),
        }
    }

    /// Takes one restart when the budget has one left now.
    pub(crate) fn take(&mut self) -> bool {
        let now = Instant::now();
        while self
            .spent
            .front()
            .is_some_and(|at| now.duration_since(*at) >= self.restarts.within)
        {
            self.spent.pop_front();
        }
        if self.spent.len() >= self.restarts.max as usize {
            return false;
        }
        self.spent.push_back(now);
        true
    }
}

/// How long a restarted server has to answer the client's `initialize`.
const HANDSHAKE: Duration = Duration::from_secs(30);

/// Connects to the server again and opens the client's session there as
/// the client opened it; the client is then told that the server's lists
/// may have changed (legacy sessions: a modern client's subscriptions end
/// with the old server and are opened again by the client).
pub(crate) async fn restart(
    link: &Arc<Link>,
    connector: &Arc<dyn Connector>,
    attempt: u32,
) -> Result<(), TransportError> {
    let upstream = connector.connect(upstream_handlers(link)).await?;
    let handshake = link.handshake();
    if let Some(params) = handshake.initialize {
        let id = RequestId::String(format!("mcp-bridge-restart-{attempt}"));
        let options = RequestOptions::new().no_wire_cancel().timeout(HANDSHAKE);
        upstream
            .request(Request::new(id, INITIALIZE, Some(params)), options)
            .await?;
        if handshake.initialized {
            upstream.notify(Notification::new(NOTIFICATION_INITIALIZED, None))?;
        }
    }
    link.set_upstream(upstream);
    if link.legacy() {
        for method in [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed",
        ] {
            link.notify_client(Notification::new(method, None));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_budget_allows_max_restarts_in_any_window() {
        let mut budget = Budget::new(Restarts::new(2, Duration::from_secs(60)));
        assert!(budget.take());
        assert!(budget.take());
        assert!(!budget.take(), "a third within the window");
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(budget.take(), "the window moved on");
    }

    #[test]
    fn the_default_never_restarts() {
        assert!(!Budget::new(Restarts::default()).take());
    }
}
