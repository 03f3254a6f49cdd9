//! The legacy handshake's exchange, written once for connecting and for
//! renewing an expired session: `initialize` with the client's
//! capabilities and info, the `InitializeResult` read and its revision
//! checked, then `notifications/initialized`.

use mcp_protocol::types::{InitializeRequestParams, InitializeResult};
use mcp_protocol::{Notification, ProtocolVersion, Request, RequestId, methods};
use mcp_transport::{RequestOptions, Transport, TransportError};

use crate::config::Config;
use crate::error::ClientError;

/// How an `initialize` exchange failed.
pub(crate) enum InitializeFailure {
    /// `initialize` got no result: the server's error, or the transport's.
    /// The caller may negotiate on it (a `-32022`, a 2024-11-05 `-32602`).
    Refused(TransportError),
    /// The server answered with a revision the caller does not accept.
    /// The transport is closed (the spec says to disconnect) and nothing
    /// more was sent.
    Revision(ProtocolVersion),
    /// Anything else: a result that is no `InitializeResult`, or
    /// `notifications/initialized` not sent. Names its method.
    Failed(ClientError),
}

/// Runs the exchange on `transport` offering `offer`, under request `id`.
///
/// A result whose revision is not in `accepted` ends it as
/// [`InitializeFailure::Revision`]. An accepted result goes to `accept`
/// before `notifications/initialized` goes out (the server may send its
/// requests right after, so what they need must be recorded first); what
/// `accept` returns is the exchange's result.
pub(crate) async fn initialize<T>(
    transport: &dyn Transport,
    config: &Config,
    id: RequestId,
    offer: &ProtocolVersion,
    accepted: &[ProtocolVersion],
    accept: impl FnOnce(InitializeResult) -> T,
) -> Result<T, InitializeFailure> {
    let params = InitializeRequestParams::new(
        offer.clone(),
        config.capabilities(offer),
        config.client_info.clone(),
    );
    let request = Request::new(id, methods::INITIALIZE, serde_json::to_value(params).ok());
    // `initialize` is never cancelled on the wire.
    let options = RequestOptions::new()
        .timeout(config.request_timeout.max(config.probe_timeout))
        .no_wire_cancel();
    let value = crate::trace::traced_request(transport, request, options, offer)
        .await
        .map_err(InitializeFailure::Refused)?;
    let result: InitializeResult = serde_json::from_value(value).map_err(|e| {
        InitializeFailure::Failed(
            ClientError::invalid(format!("not an InitializeResult: {e}"))
                .with_method(methods::INITIALIZE),
        )
    })?;
    if !accepted.contains(&result.protocol_version) {
        transport.close().await;
        return Err(InitializeFailure::Revision(result.protocol_version));
    }
    let accepted = accept(result);
    transport
        .notify(Notification::new(methods::NOTIFICATION_INITIALIZED, None))
        .map_err(|e| {
            InitializeFailure::Failed(
                ClientError::from(e).with_method(methods::NOTIFICATION_INITIALIZED),
            )
        })?;
    Ok(accepted)
}
