//! Where authorizations are kept between runs: one record per MCP server,
//! holding everything a refresh needs (issuer, client, secret, method,
//! token endpoint, `resource`), behind a trait.
//!
//! A file store is shared by every process of the user (two `mcp` runs at
//! once): its writes are whole-file replacements made under a lock file,
//! and a refresh holds that lock from reading the stored tokens again to
//! writing the new ones, so that a rotated refresh token is never spent
//! twice.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

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

    /// Takes the store for this value alone, against other values and
    /// other processes that share what it keeps, until the [`StoreHold`]
    /// is dropped; `Ok(None)` while someone else holds it (try again
    /// later). This value's own [`load`](Self::load),
    /// [`save`](Self::save) and [`remove`](Self::remove) keep working
    /// meanwhile.
    ///
    /// The provider holds the store while it refreshes: it reads the
    /// stored tokens again (another process may have refreshed them),
    /// refreshes only if they are still the ones it has, and saves, all
    /// under one hold. The default holds nothing: right for a store that
    /// one provider alone uses, like [`MemoryStore`].
    fn try_hold(&self) -> io::Result<Option<StoreHold>> {
        Ok(Some(StoreHold::nothing()))
    }
}

/// A hold on a [`TokenStore`], from [`TokenStore::try_hold`]: released
/// when dropped.
#[must_use = "the hold ends when this is dropped"]
pub struct StoreHold {
    _guard: Option<Box<dyn Send>>,
}

impl StoreHold {
    /// A hold that holds nothing, for a store that needs none.
    pub fn nothing() -> StoreHold {
        StoreHold { _guard: None }
    }

    /// A hold that lasts as long as `guard` does (a lock guard, a locked
    /// file): `guard` is dropped when the hold is.
    pub fn new(guard: impl Send + 'static) -> StoreHold {
        StoreHold {
            _guard: Some(Box::new(guard)),
        }
    }
}

impl std::fmt::Debug for StoreHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreHold")
    }
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
/// only (mode 0600 on Unix), shared safely by several processes:
///
/// * each write replaces the file whole: a new file under a name of its
///   own, created exclusively with mode 0600 (never an existing file or a
///   link planted there), then renamed over the store;
/// * on Unix, writes and [holds](TokenStore::try_hold) take a lock on a
///   file beside it (`tokens.json.lock`, opened without following a
///   link), so that two processes never interleave a read-modify-write;
///   elsewhere, only within the process;
/// * a file that is not a token store (corrupt, truncated by hand) is an
///   error, never read as empty: nothing is written over it, so the other
///   servers' tokens in it are never wiped; [`FileStore::try_load`] says
///   what is wrong, [`load`](TokenStore::load) logs it and finds nothing.
///
/// Within a process, every `FileStore` on the same file (two providers,
/// each with a store of its own on the default token file) shares one
/// coordination: the lock file is taken once for the process, and a
/// [`save`](TokenStore::save) or [`remove`](TokenStore::remove) made while
/// another value of the process holds the file (or writes it) never waits
/// for it: the change is handed to that value, which writes it before it
/// lets go, and this process's loads see it meanwhile. So no thread ever
/// waits on a hold of its own process (a single-threaded runtime goes
/// on), and a wait for another process's lock is bounded (15 s, then the
/// change is not written, and a warning is logged: kept for later, it
/// could write over newer tokens the other process stored meanwhile).
///
/// ```
/// use mcp_auth::{FileStore, TokenStore};
///
/// let dir = std::env::temp_dir().join(format!("mcp-auth-doc-{}", std::process::id()));
/// let store = FileStore::new(dir.join("tokens.json"));
/// assert!(store.load("https://mcp.example.com/mcp").is_none());
/// # let _ = std::fs::remove_dir_all(&dir);
/// ```
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    /// Tells this value's hold from another's.
    id: u64,
    /// The process's coordination for this file, found on first use.
    shared: OnceLock<Arc<Shared>>,
}

/// Makes temporary names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Gives each [`FileStore`] its id.
static STORE_IDS: AtomicU64 = AtomicU64::new(0);

/// How long a write waits for another process's lock on the file (its
/// refresh at the default timeout, with room).
const LOCK_WAIT: Duration = Duration::from_secs(15);

/// The process's coordination of every [`FileStore`] on one file, by the
/// file's resolved path: a lock of one `FileStore` must be known to the
/// others, since `flock` excludes open files, not processes.
fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<Shared>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Weak<Shared>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<Coordination>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Coordination> {
        // The state stays consistent at every unlock: a panic elsewhere
        // does not make it unusable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Debug, Default)]
struct Coordination {
    /// The `FileStore` (by id) that holds the file.
    holder: Option<u64>,
    /// A read-modify-write of the file is under way.
    writing: bool,
    /// The lock file, locked for the whole process while a hold or a
    /// write is under way.
    file: Option<LockedFile>,
    /// Changes not yet in the file, oldest first, at most one per server:
    /// whoever has the file writes them before letting go. They stay here
    /// until written, so that a load in between sees them.
    pending: Vec<Pending>,
    next_seq: u64,
}

#[derive(Debug, Clone)]
struct Pending {
    seq: u64,
    server: String,
    /// `None`: remove.
    record: Option<StoredAuthorization>,
}

impl Coordination {
    fn push(&mut self, server: &str, record: Option<StoredAuthorization>) {
        self.pending.retain(|p| p.server != server);
        self.next_seq += 1;
        self.pending.push(Pending {
            seq: self.next_seq,
            server: server.to_owned(),
            record,
        });
    }
}

fn apply(map: &mut HashMap<String, StoredAuthorization>, changes: &[Pending]) {
    for change in changes {
        match &change.record {
            Some(record) => map.insert(change.server.clone(), record.clone()),
            None => map.remove(&change.server),
        };
    }
}

impl FileStore {
    /// A store in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            path: path.into(),
            id: STORE_IDS.fetch_add(1, Ordering::Relaxed),
            shared: OnceLock::new(),
        }
    }

    /// The authorization kept for `server`: an error if the file cannot be
    /// read or is not a token store (move it aside, or fix it).
    pub fn try_load(&self, server: &str) -> io::Result<Option<StoredAuthorization>> {
        // No directory: nothing stored, and nothing pending either (a
        // write makes the directory first).
        let Ok(shared) = self.shared() else {
            return Ok(read(&self.path)?.remove(server));
        };
        // No file lock: a write replaces the file whole, so a read sees the
        // old file or the new one, never a mix; and the changes not yet in
        // it are still pending.
        let coordination = shared.lock();
        let mut map = read(&self.path)?;
        apply(&mut map, &coordination.pending);
        Ok(map.remove(server))
    }

    /// The process's coordination for this file (its directory must
    /// exist, so that every spelling of the path finds the same one).
    fn shared(&self) -> io::Result<&Arc<Shared>> {
        if let Some(shared) = self.shared.get() {
            return Ok(shared);
        }
        let name = self
            .path
            .file_name()
            .ok_or_else(|| io::Error::other("the token store's path names no file"))?;
        let key = dir_of(&self.path).canonicalize()?.join(name);
        let shared = {
            let mut registry = registry().lock().unwrap_or_else(|e| e.into_inner());
            registry.retain(|_, shared| shared.strong_count() > 0);
            match registry.get(&key).and_then(Weak::upgrade) {
                Some(shared) => shared,
                None => {
                    let shared = Arc::new(Shared::default());
                    registry.insert(key, Arc::downgrade(&shared));
                    shared
                }
            }
        };
        let _ = self.shared.set(shared);
        Ok(self.shared.get().expect("just set"))
    }

    fn create_dir(&self) -> io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            // Only a directory made here: an existing one keeps its mode.
            builder.mode(0o700);
        }
        builder.create(dir_of(&self.path))
    }

    fn update(&self, server: &str, record: Option<StoredAuthorization>) {
        if let Err(e) = self.try_update(server, record) {
            tracing::warn!(error = %e, "the token store was not written");
        }
    }

    fn try_update(&self, server: &str, record: Option<StoredAuthorization>) -> io::Result<()> {
        self.create_dir()?;
        let shared = self.shared()?;
        let mut coordination = shared.lock();
        coordination.push(server, record);
        if coordination.writing || coordination.holder.is_some_and(|h| h != self.id) {
            // The value that has the file writes this change before it
            // lets go: waiting for it here could wait for a task this very
            // thread runs.
            return Ok(());
        }
        coordination.writing = true;
        if coordination.file.is_none() {
            drop(coordination);
            // Meanwhile `writing` keeps the process's other values out.
            let locked = lock_file_bounded(&lock_path(&self.path));
            coordination = shared.lock();
            match locked {
                Ok(file) => coordination.file = Some(file),
                Err(e) => {
                    coordination.writing = false;
                    // Not kept for a later write: by then another process
                    // may have stored newer tokens (a rotated refresh
                    // token), which an old change would write over. The
                    // tokens stay in use in memory.
                    let dropped = std::mem::take(&mut coordination.pending).len();
                    return Err(io::Error::new(
                        e.kind(),
                        format!("{e}; {dropped} change(s) of this process were not written"),
                    ));
                }
            }
        }
        write_pending(&self.path, shared, coordination)
    }
}

/// Writes the pending changes (the caller has set `writing` and the file
/// lock is taken), then lets go of the file unless a hold keeps it.
fn write_pending<'a>(
    path: &Path,
    shared: &'a Shared,
    mut coordination: MutexGuard<'a, Coordination>,
) -> io::Result<()> {
    let mut outcome = Ok(());
    while !coordination.pending.is_empty() {
        let batch = coordination.pending.clone();
        drop(coordination);
        // A store that cannot be read is left as it is: writing a map
        // rebuilt from nothing would wipe every other server's tokens.
        let written = read(path).and_then(|mut map| {
            apply(&mut map, &batch);
            write(path, &map)
        });
        coordination = shared.lock();
        // Written, or never to be: either way no longer pending.
        coordination
            .pending
            .retain(|p| !batch.iter().any(|b| b.seq == p.seq));
        if let Err(e) = written {
            outcome = Err(e);
        }
    }
    coordination.writing = false;
    if coordination.holder.is_none() {
        coordination.file = None;
    }
    outcome
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The lock file beside the store.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "tokens".into());
    name.push(".lock");
    path.with_file_name(name)
}

fn read(path: &Path) -> io::Result<HashMap<String, StoredAuthorization>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("the token store {} cannot be read: {e}", path.display()),
            ));
        }
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the token store {} is not what this library writes ({e}): move it aside or fix \
                 it; nothing is written over it meanwhile",
                path.display()
            ),
        )
    })
}

fn write(path: &Path, map: &HashMap<String, StoredAuthorization>) -> io::Result<()> {
    use std::io::Write;
    let bytes = serde_json::to_vec_pretty(map).map_err(io::Error::other)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tokens".into());
    let (tmp, mut file) = loop {
        let unique = format!(
            ".{name}.{}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or_default()
        );
        let tmp = dir_of(path).join(unique);
        let mut options = std::fs::OpenOptions::new();
        // Exclusive creation: never an existing file, never through a
        // link (O_EXCL does not follow one); owner-only from the start.
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = file.write_all(&bytes).and_then(|()| file.sync_all());
    drop(file);
    // `rename` replaces a link at the store's path, never follows it.
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

impl TokenStore for FileStore {
    fn load(&self, server: &str) -> Option<StoredAuthorization> {
        match self.try_load(server) {
            Ok(record) => record,
            Err(e) => {
                tracing::error!(error = %e, "the token store cannot be used");
                None
            }
        }
    }
    fn save(&self, server: &str, record: &StoredAuthorization) {
        self.update(server, Some(record.clone()));
    }
    fn remove(&self, server: &str) {
        self.update(server, None);
    }
    fn try_hold(&self) -> io::Result<Option<StoreHold>> {
        self.create_dir()?;
        let shared = self.shared()?;
        let mut coordination = shared.lock();
        if coordination.holder.is_some() || coordination.writing {
            return Ok(None);
        }
        match lock_file(&lock_path(&self.path)) {
            Ok(file) => coordination.file = Some(file),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        }
        coordination.holder = Some(self.id);
        Ok(Some(StoreHold::new(Held {
            shared: shared.clone(),
            path: self.path.clone(),
        })))
    }
}

/// A hold of a [`FileStore`]: on drop, the changes handed to it are
/// written and the file is let go.
struct Held {
    shared: Arc<Shared>,
    path: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut coordination = self.shared.lock();
        coordination.holder = None;
        if coordination.writing {
            // That write lets go of the file when it is done.
            return;
        }
        coordination.writing = true;
        if let Err(e) = write_pending(&self.path, &self.shared, coordination) {
            tracing::warn!(error = %e, "the token store was not written");
        }
    }
}

/// An open lock file, locked; closing it releases the lock.
#[cfg(unix)]
type LockedFile = std::fs::File;

/// [`lock_file`], waiting at most [`LOCK_WAIT`] for another process.
fn lock_file_bounded(path: &Path) -> io::Result<LockedFile> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match lock_file(path) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if std::time::Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "another process has held the token store's lock file {} for over \
                             {LOCK_WAIT:?}",
                            path.display()
                        ),
                    ));
                }
                // Short: a write or a refresh of another process.
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Opens (creating it owner-only, never through a link) and locks the
/// file at `path`; `WouldBlock` if another holds it (never a wait without
/// a bound on another process).
#[cfg(unix)]
fn lock_file(path: &Path) -> io::Result<LockedFile> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the token store's lock file {}: {e}", path.display()),
            )
        })?;
    let operation = libc::LOCK_EX | libc::LOCK_NB;
    loop {
        // SAFETY: the descriptor is open for as long as `file` lives.
        let done = unsafe { libc::flock(file.as_raw_fd(), operation) };
        if done == 0 {
            return Ok(file);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            _ => return Err(e),
        }
    }
}

#[cfg(not(unix))]
type LockedFile = ();

/// Without `flock`, the lock is the process's own (see [`FileStore`]).
#[cfg(not(unix))]
fn lock_file(_path: &Path) -> io::Result<LockedFile> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(token: &str) -> StoredAuthorization {
        StoredAuthorization {
            issuer: "https://as.example".into(),
            client_id: "c".into(),
            client_secret: None,
            auth_method: "none".into(),
            token_endpoint: "https://as.example/token".into(),
            resource: None,
            access_token: token.into(),
            refresh_token: None,
            refresh_at: None,
            scopes: Vec::new(),
            dpop_bound: false,
            dpop_key: None,
        }
    }

    /// A fresh directory for one test, removed at the end.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir =
                std::env::temp_dir().join(format!("mcp-auth-store-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Dir(dir)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_corrupt_store_is_an_error_and_is_never_written_over() {
        let dir = Dir::new("corrupt");
        let path = dir.0.join("tokens.json");
        let corrupt = b"{\"https://other.example/mcp\": {\"issuer\": \"https://as";
        std::fs::write(&path, corrupt).unwrap();
        let store = FileStore::new(&path);
        let error = store.try_load("https://a.example/mcp").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("move it aside"), "{error}");
        assert!(store.load("https://a.example/mcp").is_none());

        store.save("https://a.example/mcp", &record("t"));
        store.remove("https://other.example/mcp");
        let now = std::fs::read(&path).unwrap();
        assert!(
            now == corrupt,
            "the corrupt store was written over: {}",
            String::from_utf8_lossy(&now)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_write_never_goes_through_a_planted_file_or_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = Dir::new("planted");
        let path = dir.0.join("tokens.json");
        // What a fixed temporary name would have used: a link to a file
        // another user reads, and a world-readable file.
        let victim = dir.0.join("victim");
        std::fs::write(&victim, "").unwrap();
        std::os::unix::fs::symlink(&victim, dir.0.join("tokens.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.0.join(".tokens.json.tmp")).unwrap();
        let open = dir.0.join("tokens.json.tmp");
        std::fs::write(&open, "").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();

        let store = FileStore::new(&path);
        store.save("https://a.example/mcp", &record("secret-token"));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "",
            "the tokens went through a link"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the store's mode is {mode:o}");
        let kept = store.try_load("https://a.example/mcp").unwrap().unwrap();
        assert_eq!(kept.access_token, "secret-token");
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!(".tokens.json.{}.", std::process::id())))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_hold_keeps_other_values_out_and_lets_its_own_writes_through() {
        let dir = Dir::new("hold");
        let path = dir.0.join("tokens.json");
        let mine = FileStore::new(&path);
        let other = FileStore::new(&path);
        let hold = mine.try_hold().unwrap().expect("free");
        assert!(other.try_hold().unwrap().is_none(), "held twice");
        // Its own writes go on under the hold.
        mine.save("https://a.example/mcp", &record("one"));
        assert_eq!(
            other.load("https://a.example/mcp").unwrap().access_token,
            "one"
        );
        drop(hold);
        let again = other.try_hold().unwrap();
        assert!(again.is_some(), "released");
    }
}
