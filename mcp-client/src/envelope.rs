//! A request's envelope: its params with the era's `_meta`.

use mcp_protocol::meta::{self, RequestMetaBuilder};
use mcp_protocol::types::LoggingLevel;
use mcp_protocol::{Era, ProtocolVersion, RequestId};
use mcp_transport::SharedMeta;
use serde_json::{Map, Value};

use crate::config::Config;

/// A request's params with the era's `_meta`, and the constant part of
/// it when the transport puts that on the wire itself.
pub(crate) struct Enveloped {
    pub(crate) params: Option<Value>,
    pub(crate) shared: Option<SharedMeta>,
}

/// Puts the era's `_meta` on a request's params.
///
/// Modern: protocol version, client capabilities, client info (the same on
/// every request: left to the transport when `splice`, which says the
/// transport takes them), log level. Legacy: none of those. Both: the
/// progress token and the caller's extras (which never override the
/// protocol's keys).
pub(crate) fn envelope(
    config: &Config,
    version: &ProtocolVersion,
    params: Option<Value>,
    extra: &Map<String, Value>,
    progress_token: Option<RequestId>,
    log_level: Option<&LoggingLevel>,
    splice: bool,
) -> Enveloped {
    let mut builder = RequestMetaBuilder::new();
    let shared = match version.era() {
        Era::Modern => {
            if let Some(level) = log_level {
                builder = builder.log_level(level);
            }
            Some(config.modern_meta.get(version, || {
                RequestMetaBuilder::modern(
                    version,
                    &config.capabilities(version),
                    &config.client_info,
                )
                .build()
            }))
        }
        Era::Legacy => None,
    };
    if let Some(token) = progress_token {
        builder = builder.progress_token(token);
    }
    let meta = builder.merge_missing(extra).build();
    let params = if meta.is_empty() {
        params
    } else {
        meta::with_meta(params, meta)
    };
    // The shared members win over any of the same names, spliced or not.
    match shared {
        Some(shared) if !splice => Enveloped {
            params: shared.merge_into(params),
            shared: None,
        },
        shared => Enveloped { params, shared },
    }
}
