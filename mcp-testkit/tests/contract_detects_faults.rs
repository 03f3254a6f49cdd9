//! The suite is not vacuous: transports that break a rule fail that rule.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{Message, Notification, Request, RequestId};
use mcp_testkit::contract::{
    Harness, MemoryPeer, Outcome, Peer, memory_harness, run_contract_suite,
};
use mcp_transport::{
    ConnectionHandlers, Engine, RequestOptions, ResponseFuture, Transport, TransportError,
};

/// What a faulty transport gets wrong.
#[derive(Clone, Copy, Debug)]
enum Fault {
    Renumbers,
    DoesNotNormalize,
    DropsErrorData,
    NotifyOutOfOrder,
    IgnoresTimeout,
}

struct Faulty {
    engine: Engine,
    fault: Fault,
}

impl Transport for Faulty {
    fn request(&self, mut request: Request, mut options: RequestOptions) -> ResponseFuture {
        match self.fault {
            Fault::Renumbers => {
                if let RequestId::Number(n) = request.id {
                    request.id = RequestId::Number(n.wrapping_add(1000));
                }
                self.engine.request(request, options)
            }
            Fault::DoesNotNormalize => {
                let f = self.engine.request(request, options);
                Box::pin(async move {
                    let mut v = f.await?;
                    if v["resultType"] == "complete" {
                        v.as_object_mut().unwrap().remove("resultType");
                    }
                    Ok(v)
                })
            }
            Fault::DropsErrorData => {
                let f = self.engine.request(request, options);
                Box::pin(async move {
                    f.await.map_err(|e| match e {
                        TransportError::Rpc { code, message, .. } => TransportError::Rpc {
                            code,
                            message,
                            data: None,
                        },
                        other => other,
                    })
                })
            }
            Fault::IgnoresTimeout => {
                options.timeout = None;
                options.max_total = None;
                self.engine.request(request, options)
            }
            Fault::NotifyOutOfOrder => self.engine.request(request, options),
        }
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
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
        self.engine.close()
    }

    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }
}

/// A peer whose wire loses every cancel.
struct CancelEater(MemoryPeer);

impl Peer for CancelEater {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        Box::pin(async move {
            loop {
                let m = self.0.recv().await?;
                if m.method() != Some("notifications/cancelled") {
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

async fn failed_rules(fault: Fault) -> Vec<&'static str> {
    let report = run_contract_suite(move |handlers: ConnectionHandlers| async move {
        let (engine, peer) = memory_harness(handlers);
        Harness::new(Arc::new(Faulty { engine, fault }), peer)
    })
    .await;
    println!("{fault:?}:\n{report}");
    report.failures().iter().map(|r| r.name).collect()
}

#[tokio::test(start_paused = true)]
async fn each_fault_fails_its_rule() {
    assert!(
        failed_rules(Fault::Renumbers)
            .await
            .contains(&"ids_not_renumbered")
    );
    assert!(
        failed_rules(Fault::DoesNotNormalize)
            .await
            .contains(&"result_normalized")
    );
    assert_eq!(
        failed_rules(Fault::DropsErrorData).await,
        ["rpc_error_verbatim"]
    );
    assert!(
        failed_rules(Fault::NotifyOutOfOrder)
            .await
            .contains(&"ordering")
    );
    let timeouts = failed_rules(Fault::IgnoresTimeout).await;
    for rule in ["timeout", "timeout_resets_on_progress", "hard_maximum"] {
        assert!(timeouts.contains(&rule), "{rule} passed without timeouts");
    }
}

#[tokio::test(start_paused = true)]
async fn a_wire_without_cancels_fails_the_cancel_rules() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        let (engine, peer) = memory_harness(handlers);
        Harness::new(Arc::new(engine), CancelEater(peer))
    })
    .await;
    println!("{report}");
    let failed: Vec<_> = report.failures().iter().map(|r| r.name).collect();
    for rule in [
        "timeout",
        "cancel_by_token",
        "drop_sends_cancel",
        "hard_maximum",
    ] {
        assert!(failed.contains(&rule), "{rule} passed without wire cancels");
    }
    assert!(
        report
            .outcome("no_wire_cancel")
            .is_some_and(Outcome::is_passed)
    );
}
