//! The authorization server of a [`ProtectedHttpFake`], on the fake's own
//! socket, and the gate in front of its MCP endpoints.
//!
//! Its issuer is the server's origin (`http://127.0.0.1:PORT`); it serves:
//!
//! - `/.well-known/oauth-protected-resource/mcp` (and without `/mcp`):
//!   the protected resource metadata (RFC 9728) of `/mcp`;
//! - `/.well-known/oauth-authorization-server` and
//!   `/.well-known/openid-configuration`: its metadata (RFC 8414);
//! - `POST /register`: dynamic client registration (RFC 7591);
//! - `GET /authorize`: an immediate `302` to the redirect URI with
//!   `code`, `state` and `iss`, PKCE S256 required;
//! - `POST /token`: `authorization_code` (the verifier checked),
//!   `refresh_token` (rotated), `client_credentials`.
//!
//! `/mcp`, `/sse` and `/messages` need `Authorization: Bearer` with a
//! token it issued that has not expired; without one they answer `401`
//! with `WWW-Authenticate: Bearer resource_metadata="…"`.
//!
//! [`ProtectedHttpFake`]: crate::http::ProtectedHttpFake

mod authorize;
mod gate;
mod grants;
mod metadata;
mod options;
mod register;
mod token;

use std::sync::{Mutex, MutexGuard};

pub use options::OAuthOptions;

use super::reply::{self, Body};
use crate::http::RecordedRequest;
use grants::{Client, Grants};

/// The authorization server's state and settings.
pub(super) struct Authority {
    /// `http://127.0.0.1:PORT`: the issuer, and the origin of everything.
    base: String,
    options: OAuthOptions,
    grants: Mutex<Grants>,
}

impl Authority {
    pub(super) fn new(base: String, options: OAuthOptions) -> Authority {
        let mut grants = Grants::default();
        for (id, secret) in &options.clients {
            grants.clients.insert(
                id.clone(),
                Client {
                    secret: Some(secret.clone()),
                    method: "client_secret".to_owned(),
                    redirect_uris: Vec::new(),
                },
            );
        }
        Authority {
            base,
            options,
            grants: Mutex::new(grants),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Grants> {
        self.grants.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The protected resource: the MCP endpoint's URL.
    pub(super) fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The issuer.
    pub(super) fn issuer(&self) -> &str {
        &self.base
    }

    /// Where the protected resource metadata is.
    pub(super) fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    /// The scopes granted for a request of `asked` (space-separated):
    /// those of them the server knows (its scopes and the call scope),
    /// or all of its scopes when none are asked for.
    fn grantable(&self, asked: Option<&str>) -> Vec<String> {
        let known = |s: &&str| {
            self.options.scopes.iter().any(|k| k == s)
                || self.options.call_scope.as_deref() == Some(*s)
        };
        match asked.filter(|a| !a.trim().is_empty()) {
            Some(asked) => asked.split(' ').filter(known).map(str::to_owned).collect(),
            None => self.options.scopes.clone(),
        }
    }

    /// Answers a request for the authorization server or one the gate
    /// stops; `None` lets it through to the MCP server.
    pub(super) fn serve(&self, seen: &RecordedRequest) -> Option<http::Response<Body>> {
        let path = seen.path();
        let method = seen.method.as_str();
        Some(match (method, path) {
            (
                "GET",
                "/.well-known/oauth-protected-resource/mcp"
                | "/.well-known/oauth-protected-resource",
            ) => reply::json_body(200, &metadata::resource(&self.base, &self.options)),
            (
                "GET",
                "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration",
            ) => reply::json_body(200, &metadata::server(&self.base, &self.options)),
            ("POST", "/register") => self.register(seen),
            ("GET", "/authorize") => self.authorize(seen),
            ("POST", "/token") => self.token(seen),
            (_, "/mcp" | "/sse" | "/messages") => return self.gate(seen),
            _ => return None,
        })
    }

    /// Every access token expires now; refresh tokens stay good.
    pub(super) fn expire_tokens(&self) {
        self.lock().expire_access();
    }

    /// Every access and refresh token is forgotten.
    pub(super) fn revoke_tokens(&self) {
        self.lock().revoke_all();
    }

    /// How many clients are registered (pre-registered ones included).
    pub(super) fn clients(&self) -> usize {
        self.lock().clients.len()
    }
}
