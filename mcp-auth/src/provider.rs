//! The provider's state and what it does with it: an authorization
//! (discovery, client identity, a grant), refresh, the answer to a
//! challenge. How it meets the wire is `layer`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use crate::builder::OAuthProviderBuilder;
use crate::challenge::BearerChallenge;
use crate::client::{ClientProfile, Registration};
use crate::discovery::discover;
use crate::dpop::{Dpop, DpopMode, ResourceDpop};
use crate::fetch::Fetcher;
use crate::flow::refresh;
use crate::grant::{Grantor, obtain_tokens};
use crate::grants::AssertionGrant;
use crate::identity::{client_identity, forgets_the_client};
use crate::session::Session;
use crate::store::TokenStore;
use crate::{AuthError, Authorizer};

/// OAuth for one MCP server: hand it to
/// [`HttpTransportBuilder::header_provider`](mcp_transport_http::HttpTransportBuilder::header_provider).
/// See the crate docs for what it does.
#[derive(Clone)]
pub struct OAuthProvider {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) mcp_url: String,
    pub(crate) origin: String,
    pub(crate) fetcher: Fetcher,
    pub(crate) profile: ClientProfile,
    /// `None`: a grant without a person (client credentials, or `assertion`).
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    /// With no authorizer: a JWT-bearer grant instead of client credentials.
    pub(crate) assertion: Option<AssertionGrant>,
    pub(crate) store: Arc<dyn TokenStore>,
    /// `None`: DPoP is off.
    pub(crate) dpop: Option<Arc<Dpop>>,
    pub(crate) state: Mutex<State>,
    pub(crate) last_error: std::sync::Mutex<Option<String>>,
}

#[derive(Default)]
pub(crate) struct State {
    /// Whether the store was read (on first use).
    loaded: bool,
    pub(crate) session: Option<Session>,
    /// Registrations by issuer: never presented to another.
    registrations: HashMap<String, Registration>,
    /// The scopes of the last authorization request.
    requested: Vec<String>,
    /// When a refresh last failed without the grant being refused, and
    /// why: requests that waited for that try fail with it rather than
    /// each trying again.
    pub(crate) refresh_unavailable: Option<(Instant, String)>,
}

impl std::fmt::Debug for dyn Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorizer")
    }
}

impl OAuthProvider {
    /// Starts a provider for the MCP server at `mcp_url` (the URL the
    /// transport is given).
    pub fn builder(mcp_url: impl Into<String>) -> OAuthProviderBuilder {
        OAuthProviderBuilder::new(mcp_url.into())
    }

    /// Whether it holds an access token.
    pub async fn is_authorized(&self) -> bool {
        self.inner.lock_state().await.session.is_some()
    }

    /// Forgets the tokens (not the registrations): the next challenge
    /// runs the flow again.
    pub async fn logout(&self) {
        self.inner.lock_state().await.session = None;
        self.inner.store.remove(&self.inner.mcp_url);
    }

    /// Why the last authorization failed, if it did (the transport only
    /// reports the server's 401 or 403).
    pub fn last_error(&self) -> Option<String> {
        self.inner.last_error.lock().ok().and_then(|e| e.clone())
    }

    /// Runs the flow now, as a 401 without a challenge would.
    pub async fn authorize(&self) -> Result<(), AuthError> {
        let mut state = self.inner.lock_state().await;
        self.inner
            .authorize(&mut state, &BearerChallenge::default(), None, false)
            .await
    }
}

impl Inner {
    /// Keeps `e` for [`OAuthProvider::last_error`].
    pub(crate) fn remember(&self, e: &AuthError) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(e.to_string());
        }
    }

    /// The state, read from the store on first use.
    pub(crate) async fn lock_state(&self) -> tokio::sync::MutexGuard<'_, State> {
        let mut state = self.state.lock().await;
        if !state.loaded {
            state.loaded = true;
            if let Some(record) = self.store.load(&self.mcp_url) {
                // A DPoP-bound token is of use only with the key it is
                // bound to, which the record carries.
                let adopted = self
                    .dpop
                    .as_ref()
                    .zip(record.dpop_key.as_deref())
                    .is_some_and(|(dpop, key)| dpop.adopt(key));
                let usable = adopted || !record.dpop_bound;
                let session = Session::from_stored(record, &self.profile);
                state.registrations.insert(
                    session.registration.issuer.clone(),
                    session.registration.clone(),
                );
                if usable {
                    state.session = Some(session);
                    tracing::debug!("authorization read from the store");
                }
            }
        }
        state
    }

    /// Keeps the session in the store, or forgets it there.
    fn persist(&self, state: &State) {
        match &state.session {
            Some(session) => {
                let mut record = session.to_stored();
                if session.dpop {
                    record.dpop_key = self
                        .dpop
                        .as_ref()
                        .and_then(|d| d.export())
                        .map(|k| k.expose().to_owned());
                }
                self.store.save(&self.mcp_url, &record);
            }
            None => self.store.remove(&self.mcp_url),
        }
    }

    /// Discovery, identity and a grant; the new session replaces the old.
    /// `refused_bound`: the resource refused a DPoP-bound token with
    /// challenges of which none is `DPoP`.
    async fn authorize(
        &self,
        state: &mut State,
        challenge: &BearerChallenge,
        scopes: Option<Vec<String>>,
        refused_bound: bool,
    ) -> Result<(), AuthError> {
        let issuer = self.profile.issuer.as_deref();
        let found = discover(&self.fetcher, &self.mcp_url, issuer, challenge).await?;
        let scopes = found.scopes(challenge, scopes, self.authorizer.is_some());
        let registration = client_identity(
            &mut state.registrations,
            &self.fetcher,
            &self.profile,
            self.assertion.as_ref(),
            &found.server,
        )
        .await?;
        state.requested = scopes.clone();
        // The resource has to take the token: what it says decides, not
        // what the authorization server offers.
        let resource_dpop =
            ResourceDpop::new(found.resource_metadata.as_ref(), challenge, refused_bound);
        let dpop = self.dpop.clone().filter(|d| d.mode.wanted(resource_dpop));
        let used_dpop = dpop.is_some();
        let grantor = Grantor {
            authorizer: self.authorizer.as_deref(),
            assertion: self.assertion.as_ref(),
            redirect_uri: &self.profile.redirect_uri,
            mcp_url: &self.mcp_url,
        };
        let fetcher = self.fetcher.with_dpop(dpop);
        let tokens = obtain_tokens(&grantor, &fetcher, &registration, &found, &scopes)
            .await
            .inspect_err(|e| {
                // A client the server no longer knows registers again next time.
                if forgets_the_client(e) {
                    state.registrations.remove(&found.server.issuer);
                }
            })?;
        tracing::debug!(issuer = %found.server.issuer, "authorized");
        state.session = Some(Session {
            tokens,
            registration,
            token_endpoint: found.server.token_endpoint.clone(),
            resource: found.resource,
            dpop: used_dpop,
            obtained: Instant::now(),
            refreshed_on_challenge: false,
        });
        self.persist(state);
        Ok(())
    }

    /// Refreshes as [`refresh`](Self::refresh) does, with the store held
    /// against other processes from reading it again to saving: another
    /// process may have refreshed this login meanwhile, spending (with
    /// rotating refresh tokens) the one this process has. Its tokens are
    /// then taken instead of refreshing.
    pub(crate) async fn refresh_shared(&self, state: &mut State) -> Result<(), AuthError> {
        let _hold = self.hold_store().await;
        if self.adopt_stored(state) {
            tracing::debug!("another process refreshed this login; its tokens are used");
            return Ok(());
        }
        self.refresh(state).await
    }

    /// Waits for the store's hold (the time of another process's refresh,
    /// or a few tries more); without it, the refresh goes on unheld.
    async fn hold_store(&self) -> Option<crate::store::StoreHold> {
        let deadline = Instant::now() + self.fetcher.timeout * 3;
        loop {
            match self.store.try_hold() {
                Ok(Some(hold)) => return Some(hold),
                Ok(None) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok(None) => {
                    tracing::warn!(
                        "the token store stayed held by another process; refreshing anyway"
                    );
                    return None;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the token store cannot be held; refreshing anyway");
                    return None;
                }
            }
        }
    }

    /// Takes the stored authorization if it is not the one held (another
    /// process refreshed or logged in again): `true` if it did.
    fn adopt_stored(&self, state: &mut State) -> bool {
        let Some(current) = &state.session else {
            return false;
        };
        let Some(record) = self.store.load(&self.mcp_url) else {
            return false;
        };
        if record.access_token == current.tokens.access.expose() {
            return false;
        }
        let adopted = self
            .dpop
            .as_ref()
            .zip(record.dpop_key.as_deref())
            .is_some_and(|(dpop, key)| dpop.adopt(key));
        if record.dpop_bound && !adopted {
            return false;
        }
        state.session = Some(Session::from_stored(record, &self.profile));
        true
    }

    /// Refreshes the session's token. Only a refusal of the grant ends the
    /// session; a token endpoint that cannot be reached, or answers a
    /// server error or something unreadable, leaves the session and the
    /// stored tokens as they are and gives [`AuthError::RefreshUnavailable`].
    async fn refresh(&self, state: &mut State) -> Result<(), AuthError> {
        let Some(session) = &state.session else {
            return Err(AuthError::Config("nothing to refresh".into()));
        };
        let Some(refresh_token) = session.tokens.refresh.clone() else {
            return Err(AuthError::Config("no refresh token".into()));
        };
        let fetcher = self
            .fetcher
            .with_dpop(self.dpop.clone().filter(|_| session.dpop));
        let outcome = refresh(
            &fetcher,
            &session.registration,
            &session.token_endpoint,
            session.resource.as_deref(),
            &refresh_token,
            &session.tokens.scopes,
        )
        .await;
        match outcome {
            Ok(tokens) => {
                tracing::debug!("refreshed the access token");
                state.refresh_unavailable = None;
                if let Some(s) = state.session.as_mut() {
                    s.tokens = tokens;
                    s.obtained = Instant::now();
                    s.refreshed_on_challenge = false;
                }
                self.persist(state);
                Ok(())
            }
            Err(e) if says_nothing_of_the_grant(&e) => {
                let cause = match e {
                    AuthError::Http(m) | AuthError::Protocol(m) => m,
                    other => other.to_string(),
                };
                tracing::debug!(%cause, "the refresh did not go through; the tokens are kept");
                // Due now: the next request tries again before it is sent.
                if let Some(s) = state.session.as_mut() {
                    s.tokens.refresh_at = Some(Instant::now());
                }
                state.refresh_unavailable = Some((Instant::now(), cause.clone()));
                Err(AuthError::RefreshUnavailable { cause })
            }
            Err(e) => {
                tracing::debug!(error = %e, "the refresh was refused; the tokens are dropped");
                if forgets_the_client(&e)
                    && let Some(s) = &state.session
                {
                    state.registrations.remove(&s.registration.issuer);
                }
                // Without the store's hold (another process kept it past
                // the wait), another process may have refreshed or logged
                // in again meanwhile, spending the refresh token refused
                // here: its tokens are taken, never removed.
                let _hold = self.store.try_hold().ok().flatten();
                if self.adopt_stored(state) {
                    tracing::debug!("another process renewed this login; its tokens are used");
                    return Ok(());
                }
                let stored_is_ours = self.store.load(&self.mcp_url).is_none_or(|record| {
                    state
                        .session
                        .as_ref()
                        .is_some_and(|s| s.tokens.access.expose() == record.access_token)
                });
                state.session = None;
                if stored_is_ours {
                    self.persist(state);
                }
                Err(e)
            }
        }
    }

    /// What to do about one challenge; `true`: send again.
    pub(crate) async fn answer(
        &self,
        status: u16,
        challenge: BearerChallenge,
        refused_at: Instant,
    ) -> Result<bool, AuthError> {
        let mut state = self.lock_state().await;
        // Someone else got a new token while this request waited: use it.
        if state
            .session
            .as_ref()
            .is_some_and(|s| s.obtained > refused_at)
        {
            return Ok(true);
        }
        match status {
            401 => self.answer_unauthorized(&mut state, &challenge).await,
            403 if challenge.is_insufficient_scope() => {
                let granted = state.session.as_ref().map(|s| &s.tokens.scopes);
                if !challenge.scope.is_empty()
                    && granted.is_some_and(|g| challenge.scope.iter().all(|s| g.contains(s)))
                {
                    // Asking again for what the token has cannot help.
                    return Ok(false);
                }
                let mut union = state.requested.clone();
                for s in &challenge.scope {
                    if !union.contains(s) {
                        union.push(s.clone());
                    }
                }
                tracing::debug!(scopes = ?union, "step-up authorization");
                self.authorize(&mut state, &challenge, Some(union), false)
                    .await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A 401: refresh the token if that can help, else authorize afresh.
    async fn answer_unauthorized(
        &self,
        state: &mut State,
        challenge: &BearerChallenge,
    ) -> Result<bool, AuthError> {
        // A token refreshed for a 401 and refused again (within a minute)
        // means the grant is dead: authorize afresh instead of refreshing
        // at every request.
        let dead = state.session.as_ref().is_some_and(|s| {
            s.refreshed_on_challenge && s.obtained.elapsed() < Duration::from_secs(60)
        });
        let (refused_bound, wants_bound) = self.wrong_kind(state, challenge);
        // A refresh keeps the token's kind: a token of the kind the
        // resource does not take needs a fresh authorization.
        if !dead
            && !refused_bound
            && !wants_bound
            && state
                .session
                .as_ref()
                .is_some_and(|s| s.tokens.refresh.is_some())
        {
            match self.refresh_shared(state).await {
                Ok(()) => {
                    if let Some(s) = state.session.as_mut() {
                        s.refreshed_on_challenge = true;
                    }
                    return Ok(true);
                }
                // The authorization server is out of reach: a fresh
                // authorization would meet it too.
                Err(e @ AuthError::RefreshUnavailable { .. }) => return Err(e),
                Err(_) => {}
            }
        }
        if refused_bound {
            tracing::debug!(
                "the resource refused the DPoP-bound token and offers no DPoP; \
                 authorizing afresh for a Bearer token"
            );
        }
        self.authorize(state, challenge, None, refused_bound)
            .await?;
        Ok(true)
    }

    /// With [`DpopMode::Auto`], whether the session's token is of a kind
    /// the refusing resource does not take: a DPoP-bound one refused with
    /// challenges of which none is `DPoP` (the resource knows only
    /// `Bearer`), or one obtained without proofs refused with `DPoP`
    /// challenges only.
    fn wrong_kind(&self, state: &State, challenge: &BearerChallenge) -> (bool, bool) {
        let auto = self.dpop.as_ref().is_some_and(|d| d.mode == DpopMode::Auto);
        let Some(session) = state.session.as_ref().filter(|_| auto) else {
            return (false, false);
        };
        let said = !challenge.schemes.is_empty();
        let bearer = challenge
            .schemes
            .iter()
            .any(|s| s.eq_ignore_ascii_case("bearer"));
        let refused_bound = session.tokens.bound && said && !challenge.offers_dpop();
        let wants_bound = !session.dpop && challenge.offers_dpop() && !bearer;
        (refused_bound, wants_bound)
    }
}

/// Whether a failed refresh leaves the grant standing: the token endpoint
/// could not be reached or timed out, answered a server error (5xx,
/// `server_error`, `temporarily_unavailable`) or a body that is no OAuth
/// answer. Only a refusal (`invalid_grant`, `invalid_client`, ...) ends
/// the session.
fn says_nothing_of_the_grant(e: &AuthError) -> bool {
    match e {
        AuthError::Grant { error, .. } => {
            error == "server_error" || error == "temporarily_unavailable"
        }
        AuthError::Http(_) | AuthError::Protocol(_) => true,
        _ => false,
    }
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field(
                "mcp_url",
                &mcp_transport::record::redact_url(&self.inner.mcp_url),
            )
            .field("profile", &self.inner.profile)
            .field("client_credentials", &self.inner.authorizer.is_none())
            .field("dpop", &self.inner.dpop.as_ref().map(|d| d.mode))
            .finish_non_exhaustive()
    }
}
