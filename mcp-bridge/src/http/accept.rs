//! Accepting connections: at most [`MAX_CONNECTIONS`] at once, each
//! served by hyper with a bound on how long a request's head may take,
//! the idle sessions reaped, and everything ended when serving stops.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use super::front::Front;

/// The most connections served at once; past it, new ones wait in the
/// listener's backlog until one ends.
const MAX_CONNECTIONS: usize = 1024;

/// Serves `front` on `listener` until `stop` resolves, then ends every
/// session (their servers closed) within a few seconds.
pub(crate) async fn serve(
    listener: TcpListener,
    front: Front,
    stop: impl Future<Output = ()> + Send,
) {
    let front = Arc::new(front);
    let (stopping, stopped) = watch::channel(false);
    let reaper = {
        let front = front.clone();
        let every = (front.options.idle_timeout / 4)
            .clamp(Duration::from_millis(50), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                for session in front.reap() {
                    tracing::info!("a session was idle past the timeout; it ends");
                    session.end().await;
                }
            }
        })
    };
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let accepting = async {
        loop {
            let Ok(permit) = connections.clone().acquire_owned().await else {
                return;
            };
            let (socket, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            connection(front.clone(), socket, peer, stopped.clone(), permit);
        }
    };
    tokio::select! {
        () = accepting => {}
        () = stop => {}
    }
    reaper.abort();
    let _ = stopping.send(true);
    front.close_all().await;
}

fn connection(
    front: Arc<Front>,
    socket: tokio::net::TcpStream,
    peer: SocketAddr,
    mut stopped: watch::Receiver<bool>,
    permit: OwnedSemaphorePermit,
) {
    // Small SSE events must not wait for the client's delayed ACK.
    let _ = socket.set_nodelay(true);
    tokio::spawn(async move {
        let request_timeout = front.options.request_timeout;
        let service = hyper::service::service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, std::convert::Infallible>(front.serve(request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(request_timeout)
            .serve_connection(TokioIo::new(socket), service);
        tokio::select! {
            result = connection => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "an HTTP connection ended");
                }
            }
            _ = stopped.changed() => {}
        }
        drop(permit);
    });
}
