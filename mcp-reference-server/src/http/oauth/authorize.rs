//! `GET /authorize`: approved at once, with no person involved, by a
//! `302` to the client's redirect URI carrying `code`, `state` and `iss`
//! (RFC 9207); PKCE S256 is required.

use std::collections::HashMap;

use super::super::reply::{self, Body};
use super::Authority;
use super::grants::Code;
use crate::http::RecordedRequest;

impl Authority {
    /// `GET /authorize?…`.
    pub(super) fn authorize(&self, seen: &RecordedRequest) -> http::Response<Body> {
        let query = seen.uri.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let q: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let (Some(client_id), Some(redirect_uri)) = (q.get("client_id"), q.get("redirect_uri"))
        else {
            return page(400, "client_id and redirect_uri are required");
        };
        let mut grants = self.lock();
        let Some(client) = grants.clients.get(client_id) else {
            return page(400, "unknown client_id");
        };
        if !redirect_allowed(&client.redirect_uris, redirect_uri) {
            // Never redirect to a URI the client did not register.
            return page(400, "redirect_uri is not registered for this client");
        }
        let Ok(mut location) = url::Url::parse(redirect_uri) else {
            return page(400, "redirect_uri is not a URL");
        };
        let refuse = |mut location: url::Url, error: &str| {
            let mut pairs = location.query_pairs_mut();
            pairs.append_pair("error", error);
            if let Some(state) = q.get("state") {
                pairs.append_pair("state", state);
            }
            pairs.append_pair("iss", &self.base);
            drop(pairs);
            found(location.as_str())
        };
        if q.get("response_type").map(String::as_str) != Some("code") {
            return refuse(location, "unsupported_response_type");
        }
        let Some(challenge) = q
            .get("code_challenge")
            .filter(|_| q.get("code_challenge_method").map(String::as_str) == Some("S256"))
        else {
            return refuse(location, "invalid_request");
        };
        if q.get("resource").is_some_and(|r| *r != self.resource()) {
            return refuse(location, "invalid_target");
        }
        let scopes = self.grantable(q.get("scope").map(String::as_str));
        let code = grants.fresh("code");
        grants.codes.insert(
            code.clone(),
            Code {
                client_id: client_id.clone(),
                redirect_uri: redirect_uri.clone(),
                challenge: challenge.clone(),
                scopes,
            },
        );
        {
            let mut pairs = location.query_pairs_mut();
            pairs.append_pair("code", &code);
            if let Some(state) = q.get("state") {
                pairs.append_pair("state", state);
            }
            pairs.append_pair("iss", &self.base);
        }
        found(location.as_str())
    }
}

/// Exactly a registered URI; for loopback ones (and pre-registered
/// clients, which registered none) any port, as RFC 8252 §7.3 allows
/// native apps.
fn redirect_allowed(registered: &[String], asked: &str) -> bool {
    let Ok(asked_url) = url::Url::parse(asked) else {
        return false;
    };
    let loopback = |u: &url::Url| {
        u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"))
    };
    if registered.is_empty() {
        return loopback(&asked_url);
    }
    registered.iter().any(|r| {
        r == asked
            || url::Url::parse(r).is_ok_and(|r| {
                loopback(&r)
                    && loopback(&asked_url)
                    && r.host_str() == asked_url.host_str()
                    && r.path() == asked_url.path()
            })
    })
}

fn found(location: &str) -> http::Response<Body> {
    let mut response = reply::status(302);
    if let Ok(v) = http::HeaderValue::from_str(location) {
        response.headers_mut().insert(http::header::LOCATION, v);
    }
    response
}

fn page(status: u16, text: &str) -> http::Response<Body> {
    reply::with_body(
        status,
        Some("text/plain; charset=utf-8"),
        bytes::Bytes::from(format!("{text}\n")),
    )
}

#[cfg(test)]
mod tests {
    use super::redirect_allowed;

    #[test]
    fn loopback_redirects_may_change_port_others_may_not() {
        let registered = vec!["http://127.0.0.1:4000/callback".to_owned()];
        assert!(redirect_allowed(
            &registered,
            "http://127.0.0.1:4000/callback"
        ));
        assert!(redirect_allowed(
            &registered,
            "http://127.0.0.1:5000/callback"
        ));
        assert!(!redirect_allowed(
            &registered,
            "http://127.0.0.1:5000/other"
        ));
        assert!(!redirect_allowed(
            &registered,
            "http://evil.example/callback"
        ));
        let web = vec!["https://app.example/cb".to_owned()];
        assert!(redirect_allowed(&web, "https://app.example/cb"));
        assert!(!redirect_allowed(&web, "https://app.example/cb2"));
        assert!(redirect_allowed(&[], "http://127.0.0.1:9/cb"));
        assert!(!redirect_allowed(&[], "https://app.example/cb"));
    }
}
