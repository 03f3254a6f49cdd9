//! `mcp --url URL login` and `logout`, and the stored tokens every later
//! `--url` command uses.
//!
//! Tokens are kept in a JSON file readable by its owner only:
//! `$MCP_TOKEN_STORE`, else `$XDG_CONFIG_HOME/mcp-steady/tokens.json`, else
//! `~/.config/mcp-steady/tokens.json`.

use std::path::PathBuf;

use mcp_auth::{FileStore, LoopbackAuthorizer, OAuthProvider};
use mcp_client::HttpTransportBuilder;

use crate::exit::{Failure, Kind, Outcome};

/// Where the tokens are kept.
pub(crate) fn store_path() -> Outcome<PathBuf> {
    if let Some(path) = std::env::var_os("MCP_TOKEN_STORE") {
        return Ok(PathBuf::from(path));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| Failure::usage("no place for the token store: set MCP_TOKEN_STORE"))?;
    Ok(config.join("mcp-steady").join("tokens.json"))
}

fn auth_failure(e: impl std::fmt::Display) -> Failure {
    Failure::new(Kind::Connection, format!("authorization: {e}"))
}

/// What a `--url` command says when the server wants an authorization it
/// does not have.
pub(crate) fn login_hint(url: &str) -> String {
    format!("the server needs authorization: run `mcp --url {url} login` first")
}

/// The provider a `--url` command uses: the stored tokens, refreshed as
/// needed; a server that wants a new authorization gets a hint to log in
/// rather than a browser opened behind a script's back.
///
/// `None` when nothing is stored for `url`: then a 401 is simply the
/// command's failure. A provider would discover the authorization server
/// and register a client before finding it cannot authorize, leaving a
/// registration behind at every command run before `login`.
pub(crate) fn stored(url: &str, http: &HttpTransportBuilder) -> Outcome<Option<OAuthProvider>> {
    let Ok(path) = store_path() else {
        return Ok(None);
    };
    let store = FileStore::new(path);
    // A store that cannot be read is said so, not taken for "no login".
    if store.try_load(url).map_err(auth_failure)?.is_none() {
        return Ok(None);
    }
    let service = http.http_service().map_err(auth_failure)?;
    let login = login_hint(url);
    OAuthProvider::builder(url)
        .client_name("mcp-cli")
        .store(store)
        .authorizer(move |_url: String| {
            let login = login.clone();
            async move { Err::<String, _>(login.into()) }
        })
        .build(service)
        .map(Some)
        .map_err(auth_failure)
}

/// Whether tokens are stored for `url`.
pub(crate) fn logged_in(url: &str) -> Outcome<bool> {
    let Ok(path) = store_path() else {
        return Ok(false);
    };
    let stored = FileStore::new(path).try_load(url).map_err(auth_failure)?;
    Ok(stored.is_some())
}

/// `login`: the authorization URL on stderr, the redirect taken on a
/// loopback port, the tokens stored.
pub(crate) async fn login(url: &str, http: HttpTransportBuilder) -> Outcome {
    let service = http.http_service().map_err(auth_failure)?;
    let store = FileStore::new(store_path()?);
    // Before the browser: a login that could not be stored is no login.
    store.try_load(url).map_err(auth_failure)?;
    let authorizer = LoopbackAuthorizer::bind(0)
        .await
        .map_err(auth_failure)?
        .on_url(|url| say!("Open this URL in a browser to authorize:\n{url}"));
    let oauth = OAuthProvider::builder(url)
        .client_name("mcp-cli")
        .redirect_uri(authorizer.redirect_uri())
        .store(store)
        .authorizer(authorizer)
        .build(service)
        .map_err(auth_failure)?;
    // The flow runs whatever is stored, and its tokens replace the stored
    // ones only once it succeeds: an interrupted login keeps the old one.
    oauth.authorize().await.map_err(auth_failure)?;
    say!("Logged in to {url}.");
    Ok(())
}

/// `logout`: the stored tokens for the server forgotten.
pub(crate) async fn logout(url: &str, http: HttpTransportBuilder) -> Outcome {
    if let Some(oauth) = stored(url, &http)? {
        oauth.logout().await;
    }
    say!("Logged out of {url}.");
    Ok(())
}
