//! Where authorizations are kept between runs: one record per MCP server,
//! holding everything a refresh needs (issuer, client, secret, method,
//! token endpoint, `resource`), behind a trait.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One MCP server's authorization as it is stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredAuthorization {
    /// The authorization server's issuer.
    pub issuer: String,
    /// The client id at that issuer.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint authentication method (RFC 7591 name).
    pub auth_method: String,
    /// The token endpoint of the issuer.
    pub token_endpoint: String,
    /// The RFC 8707 `resource`, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When to refresh, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_at: Option<u64>,
    /// The granted scopes.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Whether the access token is DPoP-bound (RFC 9449).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dpop_bound: bool,
    /// The DPoP private key (PKCS#8, base64url) the tokens are bound to,
    /// as secret as they are: a later provider for the same server takes
    /// it, or keeps only the registration if it does not use DPoP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl std::fmt::Debug for StoredAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredAuthorization")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .field("resource", &self.resource)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Keeps authorizations by MCP server URL. Calls are short and
/// synchronous (a map, a small file).
pub trait TokenStore: Send + Sync + 'static {
    /// The authorization kept for `server`, if any.
    fn load(&self, server: &str) -> Option<StoredAuthorization>;
    /// Keeps `record` for `server`, replacing what was there.
    fn save(&self, server: &str, record: &StoredAuthorization);
    /// Forgets `server`'s authorization.
    fn remove(&self, server: &str);
}

/// The default store: in memory, gone when the process ends.
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<HashMap<String, StoredAuthorization>>);

impl TokenStore for MemoryStore {
    fn load(&self, server: &str) -> Option<StoredAuthorization> {
        self.0.lock().ok()?.get(server).cloned()
    }
    fn save(&self, server: &str, record: &StoredAuthorization) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(server.to_owned(), record.clone());
        }
    }
    fn remove(&self, server: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(server);
        }
    }
}

/// A JSON file of authorizations by server URL, readable by its owner
/// only (mode 0600 on Unix), rewritten whole through a temporary file.
/// A file that cannot be read counts as empty; a failed write is logged.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileStore {
    /// A store in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    fn read(&self) -> HashMap<String, StoredAuthorization> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn write(&self, map: &HashMap<String, StoredAuthorization>) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let bytes = serde_json::to_vec_pretty(map).map_err(std::io::Error::other)?;
        {
            use std::io::Write;
            let mut file = options.open(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)
    }

    fn update(&self, change: impl FnOnce(&mut HashMap<String, StoredAuthorization>)) {
        let Ok(_guard) = self.lock.lock() else { return };
        let mut map = self.read();
        change(&mut map);
        if let Err(e) = self.write(&map) {
            tracing::warn!(path = %self.path.display(), error = %e, "could not write the token store");
        }
    }
}

impl TokenStore for FileStore {
    fn load(&self, server: &str) -> Option<StoredAuthorization> {
        let _guard = self.lock.lock().ok()?;
        self.read().remove(server)
    }
    fn save(&self, server: &str, record: &StoredAuthorization) {
        self.update(|map| {
            map.insert(server.to_owned(), record.clone());
        });
    }
    fn remove(&self, server: &str) {
        self.update(|map| {
            map.remove(server);
        });
    }
}
