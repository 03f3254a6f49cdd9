//! The gate in front of the MCP endpoints: a valid bearer token passes,
//! anything else gets the challenge that starts a client's discovery.

use mcp_protocol::methods;
use serde_json::Value;

use super::super::reply::{self, Body};
use super::Authority;
use crate::http::RecordedRequest;

impl Authority {
    /// `None` when the request may reach the MCP server; else the `401`
    /// (no token, an unknown or expired one) or `403` (`tools/call`
    /// without the call scope).
    pub(super) fn gate(&self, seen: &RecordedRequest) -> Option<http::Response<Body>> {
        let token = seen
            .header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "));
        let grants = self.lock();
        let Some(scopes) = token.and_then(|t| grants.scopes_of(t)) else {
            // RFC 6750 §3: no error code when the request had no token.
            let error = if token.is_some() {
                "error=\"invalid_token\", "
            } else {
                ""
            };
            let challenge = format!(
                "Bearer {error}resource_metadata=\"{}\"",
                self.resource_metadata_url()
            );
            return Some(with_challenge(401, &challenge));
        };
        if let Some(needed) = &self.options.call_scope
            && !scopes.contains(needed)
            && serde_json::from_slice::<Value>(&seen.body)
                .is_ok_and(|m| m["method"] == methods::TOOLS_CALL)
        {
            let challenge = format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{}\"",
                self.resource_metadata_url()
            );
            return Some(with_challenge(403, &challenge));
        }
        None
    }
}

fn with_challenge(status: u16, challenge: &str) -> http::Response<Body> {
    let mut response = reply::status(status);
    if let Ok(v) = http::HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(http::header::WWW_AUTHENTICATE, v);
    }
    response
}
