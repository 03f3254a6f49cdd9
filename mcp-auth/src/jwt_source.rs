//! Where a grant's JWT comes from (an ID token, a workload token): asked
//! again at every grant, so that a rotated or refreshed token is used.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_transport_http::BoxError;

use crate::Secret;

type Fetch = dyn Fn() -> BoxFuture<'static, Result<Secret, BoxError>> + Send + Sync;

/// A source of a JWT that a grant presents: the enterprise IdP's ID token
/// of [`EnterpriseIdp`](crate::EnterpriseIdp), or the workload's own token
/// of [`workload_identity`](crate::OAuthProviderBuilder::workload_identity).
///
/// It is asked at every grant (never cached by the provider), so a source
/// that reads a rotated file or calls a token service always hands over a
/// current token. `Debug` never shows a token.
///
/// ```
/// use mcp_auth::JwtSource;
/// use mcp_transport_http::BoxError;
///
/// // A token the application already has.
/// let fixed = JwtSource::fixed("eyJhbGciOiJFUzI1NiJ9.e30.sig");
/// // A token the platform writes and rotates (Kubernetes, SPIFFE, ...).
/// let file = JwtSource::file("/var/run/secrets/tokens/mcp-token");
/// // A token from the application's own code (an SSO library, an API).
/// let callback = JwtSource::from_fn(|| async {
///     Ok::<_, BoxError>("eyJhbGciOiJFUzI1NiJ9.e30.sig".to_owned())
/// });
/// assert_eq!(format!("{fixed:?}"), "JwtSource::Fixed(..)");
/// # let _ = (file, callback);
/// ```
#[derive(Clone)]
pub struct JwtSource {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Fixed(Secret),
    File(PathBuf),
    Callback(Arc<Fetch>),
}

impl JwtSource {
    /// Always the same token (one the application got elsewhere).
    pub fn fixed(token: impl Into<String>) -> Self {
        JwtSource {
            kind: Kind::Fixed(Secret::new(token)),
        }
    }

    /// The content of the file at `path`, read again at every grant and
    /// trimmed of surrounding whitespace: for tokens a platform writes and
    /// rotates, such as a Kubernetes projected service account token.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        JwtSource {
            kind: Kind::File(path.into()),
        }
    }

    /// What `fetch` returns, called at every grant.
    pub fn from_fn<F, Fut>(fetch: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, BoxError>> + Send + 'static,
    {
        let fetch = Arc::new(move || -> BoxFuture<'static, Result<Secret, BoxError>> {
            let token = fetch();
            Box::pin(async move { token.await.map(Secret::new) })
        });
        JwtSource {
            kind: Kind::Callback(fetch),
        }
    }

    /// The current token.
    pub(crate) async fn token(&self, what: &str) -> Result<Secret, crate::AuthError> {
        let failed = |e: String| crate::AuthError::Config(format!("{what}: {e}"));
        let token = match &self.kind {
            Kind::Fixed(token) => token.clone(),
            // A token file is small; the read does not hold up the runtime.
            Kind::File(path) => std::fs::read_to_string(path)
                .map(|t| Secret::new(t.trim()))
                .map_err(|e| failed(format!("reading {}: {e}", path.display())))?,
            Kind::Callback(fetch) => fetch().await.map_err(|e| failed(e.to_string()))?,
        };
        if token.expose().is_empty() {
            return Err(failed("the token is empty".into()));
        }
        Ok(token)
    }
}

impl fmt::Debug for JwtSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Fixed(_) => f.write_str("JwtSource::Fixed(..)"),
            Kind::File(path) => f.debug_tuple("JwtSource::File").field(path).finish(),
            Kind::Callback(_) => f.write_str("JwtSource::Callback(..)"),
        }
    }
}
