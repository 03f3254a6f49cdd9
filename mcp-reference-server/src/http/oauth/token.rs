//! `POST /token`: the authorization code (PKCE S256 verified, the
//! redirect URI the same as at `/authorize`), refresh tokens (rotated) and
//! client credentials, each with the client authenticated as it
//! registered.

use std::collections::HashMap;

use base64::Engine;
use serde_json::{Value, json};

use super::super::reply::{self, Body};
use super::Authority;
use super::grants::{Grants, s256, verifier_well_formed};
use crate::http::RecordedRequest;

/// An OAuth error answer (RFC 6749 §5.2).
fn error(status: u16, code: &str, description: &str) -> http::Response<Body> {
    reply::json_body(
        status,
        &json!({"error": code, "error_description": description}),
    )
}

/// Percent-decodes one `application/x-www-form-urlencoded` value (the
/// encoding RFC 6749 §2.3.1 asks of Basic credentials).
fn form_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("v={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// A grant's token answer, or the OAuth error (`error` and
/// `error_description`) that refuses it with a 400.
type Granted = Result<Value, (&'static str, &'static str)>;

impl Authority {
    /// `POST /token`.
    pub(super) fn token(&self, seen: &RecordedRequest) -> http::Response<Body> {
        let form: HashMap<String, String> = url::form_urlencoded::parse(&seen.body)
            .into_owned()
            .collect();
        let mut grants = self.lock();
        let client_id = match authenticate(&grants, seen, &form) {
            Ok(id) => id,
            Err(why) => return error(401, "invalid_client", why),
        };
        if form.get("resource").is_some_and(|r| *r != self.resource()) {
            return error(400, "invalid_target", "resource is not this server's");
        }
        let granted = match form.get("grant_type").map(String::as_str) {
            Some("authorization_code") => self.code_grant(&mut grants, &form, &client_id),
            Some("refresh_token") => self.refresh_grant(&mut grants, &form, &client_id),
            Some("client_credentials") => self.credentials_grant(&mut grants, &form, &client_id),
            _ => return error(400, "unsupported_grant_type", "unknown grant_type"),
        };
        let answer = match granted {
            Ok(answer) => answer,
            Err((code, why)) => return error(400, code, why),
        };
        let mut response = reply::json_body(200, &answer);
        response.headers_mut().insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        );
        response
    }

    /// `authorization_code`: the code once, by the client it was issued
    /// to, with `/authorize`'s redirect URI and the PKCE verifier.
    fn code_grant(
        &self,
        grants: &mut Grants,
        form: &HashMap<String, String>,
        client_id: &str,
    ) -> Granted {
        let Some(code) = form.get("code").and_then(|c| grants.codes.remove(c)) else {
            return Err(("invalid_grant", "unknown or used code"));
        };
        if code.client_id != client_id {
            return Err(("invalid_grant", "the code was issued to another client"));
        }
        if form.get("redirect_uri") != Some(&code.redirect_uri) {
            return Err(("invalid_grant", "redirect_uri differs from /authorize's"));
        }
        let verifier = form.get("code_verifier").map(String::as_str);
        if !verifier.is_some_and(|v| verifier_well_formed(v) && s256(v) == code.challenge) {
            return Err(("invalid_grant", "code_verifier does not match"));
        }
        let (lifetime, refresh) = (self.options.token_lifetime, self.options.refresh_tokens);
        Ok(grants.issue(client_id, code.scopes, lifetime, refresh))
    }

    /// `refresh_token`: the token once (it is rotated), by the client it
    /// was issued to.
    fn refresh_grant(
        &self,
        grants: &mut Grants,
        form: &HashMap<String, String>,
        client_id: &str,
    ) -> Granted {
        let Some(old) = form
            .get("refresh_token")
            .and_then(|t| grants.refresh.remove(t))
        else {
            return Err(("invalid_grant", "unknown or used refresh token"));
        };
        if old.client_id != client_id {
            return Err(("invalid_grant", "the token was issued to another client"));
        }
        // A narrower scope may be asked for, never a wider one.
        let scopes = match form.get("scope") {
            Some(s) => s
                .split(' ')
                .filter(|s| old.scopes.iter().any(|o| o == s))
                .map(str::to_owned)
                .collect(),
            None => old.scopes,
        };
        Ok(grants.issue(client_id, scopes, self.options.token_lifetime, true))
    }

    /// `client_credentials`: only a client with a secret has credentials.
    fn credentials_grant(
        &self,
        grants: &mut Grants,
        form: &HashMap<String, String>,
        client_id: &str,
    ) -> Granted {
        if grants
            .clients
            .get(client_id)
            .is_none_or(|c| c.secret.is_none())
        {
            return Err(("unauthorized_client", "a public client has no credentials"));
        }
        let scopes = self.grantable(form.get("scope").map(String::as_str));
        Ok(grants.issue(client_id, scopes, self.options.token_lifetime, false))
    }
}

/// The client making the request, authenticated as it registered:
/// `client_secret_basic` or `client_secret_post` with its secret, or
/// `none` with only its id.
fn authenticate(
    grants: &Grants,
    seen: &RecordedRequest,
    form: &HashMap<String, String>,
) -> Result<String, &'static str> {
    let basic = seen
        .header("authorization")
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|pair| {
            pair.split_once(':')
                .map(|(id, secret)| (form_decode(id), form_decode(secret)))
        });
    let (id, secret, method) = match (&basic, form.get("client_id")) {
        (Some((id, secret)), _) => (id.clone(), Some(secret.clone()), "client_secret_basic"),
        (None, Some(id)) => match form.get("client_secret") {
            Some(secret) => (id.clone(), Some(secret.clone()), "client_secret_post"),
            None => (id.clone(), None, "none"),
        },
        (None, None) => return Err("no client authentication"),
    };
    let Some(client) = grants.clients.get(&id) else {
        return Err("unknown client");
    };
    // A pre-registered client may use either secret method.
    let method_ok =
        client.method == method || (client.method == "client_secret" && method != "none");
    if !method_ok {
        return Err("not the authentication method the client registered");
    }
    if client.secret != secret {
        return Err("wrong client secret");
    }
    Ok(id)
}
