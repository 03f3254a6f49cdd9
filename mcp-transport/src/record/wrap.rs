//! The recording wrappers: a transport, a connection's handlers, a
//! connector.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::error_codes::METHOD_NOT_FOUND;
use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response,
};
use serde_json::{Value, json};

use super::{Recorder, failure_value};
use crate::{
    ConnectionHandlers, Connector, RequestOptions, ResponseFuture, ServerRequestHandler, Transport,
    TransportError, TransportProfile,
};

/// A [`Transport`] that records every message it sends and receives.
///
/// Made by [`RecordingConnector`] (which also records what the server
/// sends unasked), or by [`Recorder::transport`] for a transport built with
/// [`Recorder::handlers`].
pub struct RecordingTransport {
    inner: Arc<dyn Transport>,
    recorder: Recorder,
    conn: u64,
}

impl Recorder {
    /// Wraps a connector so that every connection it makes is recorded.
    ///
    /// ```
    /// # async fn run(connector: impl mcp_transport::Connector + 'static) -> std::io::Result<()> {
    /// use mcp_transport::record::Recorder;
    /// let recorder = Recorder::create("session.jsonl")?;
    /// let recording = recorder.connector(connector);
    /// // … connect a client with `recording`, use it, then:
    /// recorder.finish()?;
    /// # let _ = recording; Ok(()) }
    /// ```
    pub fn connector<C: Connector + 'static>(&self, connector: C) -> RecordingConnector {
        RecordingConnector {
            inner: Arc::new(connector),
            recorder: self.clone(),
        }
    }

    /// Handlers that record what the server sends unasked (notifications,
    /// its requests and the client's answers to them) before handing it
    /// to `handlers`; for a transport built by hand, with
    /// [`transport`](Self::transport) around it. Starts a new connection
    /// in the recording.
    pub fn handlers(&self, handlers: ConnectionHandlers) -> ConnectionHandlers {
        let conn = self.next_connection();
        self.record(json!({ "conn": conn, "event": "connect" }));
        self.wrap_handlers(handlers, conn)
    }

    /// Wraps a transport built with [`handlers`](Self::handlers).
    pub fn transport(&self, transport: Arc<dyn Transport>) -> RecordingTransport {
        let conn = self.current_connection();
        self.connected(&transport, conn);
        RecordingTransport {
            inner: transport,
            recorder: self.clone(),
            conn,
        }
    }

    fn connected(&self, transport: &Arc<dyn Transport>, conn: u64) {
        let profile = transport.profile();
        self.record(json!({
            "conn": conn,
            "event": "connected",
            "sendsHeaders": profile.sends_headers,
            "answersEveryRequest": profile.answers_every_request,
        }));
    }

    fn current_connection(&self) -> u64 {
        // The connection `handlers` started (or the first one).
        let n = self.connections();
        if n == 0 { self.next_connection() } else { n }
    }

    fn wrap_handlers(&self, mut handlers: ConnectionHandlers, conn: u64) -> ConnectionHandlers {
        let recorder = self.clone();
        handlers.listener = handlers
            .listener
            .observed(Arc::new(move |n: &Notification| {
                recorder.inbound_notification(conn, n);
            }));
        handlers.server_requests = Some(Arc::new(RecordingHandler {
            inner: handlers.server_requests.take(),
            recorder: self.clone(),
            conn,
        }));
        handlers
    }

    fn inbound_notification(&self, conn: u64, n: &Notification) {
        let message = Message::Notification(n.clone()).to_value();
        self.record(json!({ "conn": conn, "dir": "recv", "message": message }));
    }
}

impl Transport for RecordingTransport {
    fn request(&self, request: Request, mut options: RequestOptions) -> ResponseFuture {
        let conn = self.conn;
        let mut line = json!({
            "conn": conn,
            "dir": "send",
            "message": Message::Request(request.clone()).to_value(),
        });
        if !options.headers.is_empty() {
            line["headers"] = self.recorder.headers_value(
                options
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str())),
            );
        }
        self.recorder.record(line);
        if let Some(listener) = options.listener.take() {
            let recorder = self.recorder.clone();
            options.listener = Some(listener.observed(Arc::new(move |n: &Notification| {
                recorder.inbound_notification(conn, n);
            })));
        }
        let id = request.id.clone();
        let recorder = self.recorder.clone();
        let answer = self.inner.request(request, options);
        Box::pin(answer.map(move |outcome| {
            let line = match &outcome {
                Ok(result) => {
                    let response = Message::Response(Response {
                        id,
                        result: result.clone(),
                    });
                    json!({ "conn": conn, "dir": "recv", "message": response.to_value() })
                }
                Err(TransportError::Rpc {
                    code,
                    message,
                    data,
                }) => {
                    let mut error = ErrorObject::new(*code, message.clone());
                    error.data = data.clone();
                    let response = Message::Error(ErrorResponse {
                        id: Some(id),
                        error,
                    });
                    json!({ "conn": conn, "dir": "recv", "message": response.to_value() })
                }
                Err(failure) => json!({
                    "conn": conn,
                    "dir": "recv",
                    "id": id.to_value(),
                    "failure": failure_value(failure),
                }),
            };
            recorder.record(line);
            outcome
        }))
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        let message = Message::Notification(notification.clone()).to_value();
        self.recorder
            .record(json!({ "conn": self.conn, "dir": "send", "message": message }));
        self.inner.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.recorder
            .record(json!({ "conn": self.conn, "event": "close" }));
        self.inner.close()
    }

    fn is_alive(&self) -> bool {
        self.inner.is_alive()
    }

    /// The inner transport's, except that `takes_shared_meta` is false:
    /// the recording shows each request as it goes on the wire, with the
    /// shared `_meta` members in its params, which the client merges in
    /// itself when the transport does not take them.
    fn profile(&self) -> TransportProfile {
        self.inner.profile().takes_shared_meta(false)
    }
}

impl std::fmt::Debug for RecordingTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingTransport")
            .field("conn", &self.conn)
            .finish_non_exhaustive()
    }
}

/// Records a server request and the client's answer around the real
/// handler (or the refusal a connection without one gives).
struct RecordingHandler {
    inner: Option<Arc<dyn ServerRequestHandler>>,
    recorder: Recorder,
    conn: u64,
}

impl ServerRequestHandler for RecordingHandler {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.recorded(request, None)
    }

    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.recorded(request, Some(during))
    }
}

impl RecordingHandler {
    /// The inner handler's answer (told which request it belongs to, when
    /// known), recorded with the request.
    fn recorded(
        &self,
        request: Request,
        during: Option<&RequestId>,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let conn = self.conn;
        let id = request.id.clone();
        let message = Message::Request(request.clone()).to_value();
        self.recorder
            .record(json!({ "conn": conn, "dir": "recv", "message": message }));
        let answer = match &self.inner {
            Some(handler) => match during {
                Some(owner) => handler.handle_during(request, owner),
                None => handler.handle(request),
            },
            // The same refusal the engine gives when there is no handler.
            None => {
                let error = ErrorObject::new(
                    METHOD_NOT_FOUND,
                    format!("the client does not handle {:?}", request.method),
                );
                Box::pin(std::future::ready(Err(error)))
            }
        };
        let recorder = self.recorder.clone();
        Box::pin(answer.map(move |outcome| {
            let message = match &outcome {
                Ok(result) => Message::Response(Response {
                    id,
                    result: result.clone(),
                }),
                Err(error) => Message::Error(ErrorResponse {
                    id: Some(id),
                    error: error.clone(),
                }),
            };
            recorder.record(json!({ "conn": conn, "dir": "send", "message": message.to_value() }));
            outcome
        }))
    }
}

/// A [`Connector`] whose connections are recorded; see
/// [`Recorder::connector`].
#[derive(Clone)]
pub struct RecordingConnector {
    inner: Arc<dyn Connector>,
    recorder: Recorder,
}

impl RecordingConnector {
    /// The recorder this connector writes to.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }
}

impl Connector for RecordingConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let recorder = self.recorder.clone();
        let conn = recorder.next_connection();
        recorder.record(json!({ "conn": conn, "event": "connect" }));
        let handlers = recorder.wrap_handlers(handlers, conn);
        let connecting = self.inner.connect(handlers);
        Box::pin(async move {
            match connecting.await {
                Ok(transport) => {
                    recorder.connected(&transport, conn);
                    Ok(Arc::new(RecordingTransport {
                        inner: transport,
                        recorder,
                        conn,
                    }) as Arc<dyn Transport>)
                }
                Err(failure) => {
                    recorder.record(json!({
                        "conn": conn,
                        "event": "connectFailed",
                        "failure": failure_value(&failure),
                    }));
                    Err(failure)
                }
            }
        })
    }
}

impl std::fmt::Debug for RecordingConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingConnector")
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}
