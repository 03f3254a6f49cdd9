//! Dynamic client registration (RFC 7591): any client with redirect URIs
//! gets an id, and a secret unless it asked for `none`.

use serde_json::{Value, json};

use super::super::reply::{self, Body};
use super::Authority;
use super::grants::Client;
use crate::http::RecordedRequest;

impl Authority {
    /// `POST /register`.
    pub(super) fn register(&self, seen: &RecordedRequest) -> http::Response<Body> {
        let Ok(request) = serde_json::from_slice::<Value>(&seen.body) else {
            return error(
                "invalid_client_metadata",
                "the registration is not a JSON object",
            );
        };
        let redirect_uris: Vec<String> = request["redirect_uris"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if redirect_uris.is_empty() || redirect_uris.iter().any(|u| url::Url::parse(u).is_err()) {
            return error(
                "invalid_redirect_uri",
                "redirect_uris must be absolute URLs",
            );
        }
        // RFC 7591 §2: the default is client_secret_basic.
        let method = request["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or("client_secret_basic")
            .to_owned();
        if !["client_secret_basic", "client_secret_post", "none"].contains(&method.as_str()) {
            return error(
                "invalid_client_metadata",
                "token_endpoint_auth_method must be client_secret_basic, client_secret_post or none",
            );
        }
        let mut grants = self.lock();
        let id = grants.fresh("client");
        let secret = (method != "none").then(|| grants.fresh("secret"));
        let mut answer = json!({
            "client_id": id,
            "client_id_issued_at": 0,
            "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": method,
            "grant_types": request.get("grant_types").cloned()
                .unwrap_or_else(|| json!(["authorization_code"])),
            "response_types": ["code"],
        });
        if let Some(name) = request.get("client_name") {
            answer["client_name"] = name.clone();
        }
        if let Some(secret) = &secret {
            answer["client_secret"] = json!(secret);
            answer["client_secret_expires_at"] = json!(0);
        }
        grants.clients.insert(
            id,
            Client {
                secret,
                method,
                redirect_uris,
            },
        );
        reply::json_body(201, &answer)
    }
}

fn error(code: &str, description: &str) -> http::Response<Body> {
    reply::json_body(
        400,
        &json!({"error": code, "error_description": description}),
    )
}
