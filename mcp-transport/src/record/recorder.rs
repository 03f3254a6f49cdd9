//! The recorder: where the lines of a recording go, in order.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::Redaction;

/// The format a recording's header line names (`"cassette"`).
pub const FORMAT: &str = "mcp-steady-cassette/1";

/// Writes a recording: one header line, then one JSON line per message or
/// event, each with `t` (seconds since the recording started) and `conn`
/// (which connection, from 1).
///
/// Cloning gives another handle on the same recording. Lines are written
/// to the file as they happen (so a crash keeps what came before); the
/// header, which learns the era and verdict only after the handshake, is
/// rewritten by [`finish`](Self::finish), and on drop of the last handle
/// when `finish` was not called. A recording is also kept in memory
/// ([`lines`](Self::lines)), so it is meant for sessions, not for a
/// server that runs for weeks.
///
/// ```
/// use mcp_transport::record::Recorder;
/// let recorder = Recorder::in_memory();
/// recorder.set_header("era", "legacy");
/// let lines = recorder.lines();
/// assert!(lines[0].contains("\"era\":\"legacy\""));
/// ```
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    start: Instant,
    header: Map<String, Value>,
    lines: Vec<String>,
    path: Option<PathBuf>,
    file: Option<File>,
    redaction: Redaction,
    connections: u64,
    header_dirty: bool,
    error: Option<String>,
}

impl Recorder {
    /// A recording written to `path` (replaced if it exists). On Unix the
    /// file is readable and writable by its owner only (mode 0600) from
    /// the moment it is created: even redacted, a recording says what was
    /// done, and with whom.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Recorder> {
        let path = path.as_ref().to_path_buf();
        // Written beside and renamed into place by `rewrite`: the file
        // never exists with wider permissions, even for a moment.
        let recorder = Recorder::with(Some(path), None);
        recorder.rewrite()?;
        Ok(recorder)
    }

    /// A recording kept in memory only ([`lines`](Self::lines)).
    pub fn in_memory() -> Recorder {
        Recorder::with(None, None)
    }

    fn with(path: Option<PathBuf>, file: Option<File>) -> Recorder {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut header = Map::new();
        header.insert("cassette".into(), Value::from(FORMAT));
        header.insert("recordedAtUnix".into(), Value::from(unix));
        header.insert("era".into(), Value::Null);
        header.insert("verdict".into(), Value::Null);
        Recorder {
            inner: Arc::new(Mutex::new(Inner {
                start: Instant::now(),
                header,
                lines: Vec::new(),
                path,
                file,
                redaction: Redaction::default(),
                connections: 0,
                header_dirty: false,
                error: None,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update is a push or an insert: a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces what is redacted (the default: `Authorization` and the
    /// other credential headers). Set it before the first message.
    pub fn set_redaction(&self, redaction: Redaction) {
        self.lock().redaction = redaction;
    }

    /// Redacts one more header.
    pub fn redact_header(&self, name: impl AsRef<str>) {
        let mut inner = self.lock();
        let redaction = std::mem::take(&mut inner.redaction);
        inner.redaction = redaction.header(name);
    }

    /// Keeps the value of one more query parameter of recorded URLs; see
    /// [`Redaction::keep_query`].
    pub fn keep_query(&self, name: impl AsRef<str>) {
        let mut inner = self.lock();
        let redaction = std::mem::take(&mut inner.redaction);
        inner.redaction = redaction.keep_query(name);
    }

    /// Redacts one more value wherever it appears (a token the client was
    /// configured with, which a server may echo back).
    pub fn redact_secret(&self, value: impl Into<String>) {
        let mut inner = self.lock();
        let redaction = std::mem::take(&mut inner.redaction);
        inner.redaction = redaction.secret(value);
    }

    /// Redacts one more field (an object key, anywhere in a message).
    pub fn redact_field(&self, name: impl AsRef<str>) {
        let mut inner = self.lock();
        let redaction = std::mem::take(&mut inner.redaction);
        inner.redaction = redaction.field(name);
    }

    /// Sets a member of the header line: `"era"` and `"verdict"` once the
    /// client knows them, or anything a reader of the file should see.
    /// Redacted fields are redacted here too.
    pub fn set_header(&self, key: impl Into<String>, value: impl Into<Value>) {
        let mut inner = self.lock();
        let mut value = value.into();
        inner.redaction.fields_in(&mut value);
        inner.header.insert(key.into(), value);
        inner.header_dirty = true;
    }

    /// Records the headers every request of the connection carries (the
    /// configured ones of an HTTP transport), redacted, in the header line.
    pub fn connection_headers<'a>(&self, headers: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut inner = self.lock();
        let value = inner.redaction.headers_value(headers);
        inner.header.insert("headers".into(), value);
        inner.header_dirty = true;
    }

    /// Records an HTTP request the transport sent: method, URI and
    /// headers, redacted (the URI's userinfo and query values too, but
    /// those [`Redaction::keep_query`] names). An HTTP transport's hook calls it (the HTTP
    /// transport's `RecordingHeaders` provider does); it belongs to the
    /// latest connection.
    pub fn http_request<'a>(
        &self,
        method: &str,
        uri: &str,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        let mut inner = self.lock();
        let headers = inner.redaction.headers_value(headers);
        let uri = inner.redaction.url(uri);
        let conn = inner.connections;
        inner.write(json!({
            "conn": conn,
            "dir": "send",
            "http": { "method": method, "uri": uri, "headers": headers },
        }));
    }

    /// The recording so far, line by line, header first.
    pub fn lines(&self) -> Vec<String> {
        let inner = self.lock();
        let mut lines = vec![inner.header_line()];
        lines.extend(inner.lines.iter().cloned());
        lines
    }

    /// The recording as one JSON Lines text.
    pub fn text(&self) -> String {
        let mut text = self.lines().join("\n");
        text.push('\n');
        text
    }

    /// Rewrites the file with the final header; reports the first write
    /// error of the whole recording, if any.
    pub fn finish(&self) -> io::Result<()> {
        self.rewrite()?;
        match self.lock().error.take() {
            Some(e) => Err(io::Error::other(e)),
            None => Ok(()),
        }
    }

    fn rewrite(&self) -> io::Result<()> {
        let mut inner = self.lock();
        inner.header_dirty = false;
        inner.rewrite()
    }

    /// Starts a new connection; returns its number.
    pub(crate) fn next_connection(&self) -> u64 {
        let mut inner = self.lock();
        inner.connections += 1;
        inner.connections
    }

    /// How many connections were started.
    pub(crate) fn connections(&self) -> u64 {
        self.lock().connections
    }

    /// Writes one line: `t` is added; redacted fields and known secrets
    /// are taken out.
    pub(crate) fn record(&self, mut line: Value) {
        let mut inner = self.lock();
        if let Some(message) = line.get_mut("message") {
            inner.redaction.fields_in(message);
        }
        inner.write(line);
    }

    /// The redacted form of a request's extra headers.
    pub(crate) fn headers_value<'a>(
        &self,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Value {
        self.lock().redaction.headers_value(headers)
    }
}

impl Inner {
    fn header_line(&self) -> String {
        self.redaction
            .scrub(&Value::Object(self.header.clone()).to_string())
    }

    fn write(&mut self, line: Value) {
        let t = (self.start.elapsed().as_secs_f64() * 1e6).round() / 1e6;
        let mut object = Map::new();
        object.insert("t".into(), Value::from(t));
        if let Value::Object(rest) = line {
            object.extend(rest);
        }
        let text = self.redaction.scrub(&Value::Object(object).to_string());
        if let Some(file) = &mut self.file
            && let Err(e) = writeln!(file, "{text}").and_then(|()| file.flush())
        {
            self.error.get_or_insert(e.to_string());
        }
        self.lines.push(text);
    }

    fn rewrite(&mut self) -> io::Result<()> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let mut text = self.header_line();
        text.push('\n');
        // Secrets learnt late (a header first seen on a later request) are
        // taken out of the earlier lines too.
        for line in &self.lines {
            text.push_str(&self.redaction.scrub(line));
            text.push('\n');
        }
        // Written beside and renamed, so the file is never half old, half new.
        let partial = path.with_extension("partial");
        private_file(&partial)?.write_all(text.as_bytes())?;
        std::fs::rename(&partial, &path)?;
        self.file = Some(std::fs::OpenOptions::new().append(true).open(&path)?);
        Ok(())
    }
}

/// A new file only its owner may read (on Unix: mode 0600 given when it is
/// created, not set afterwards). A file left at that path before (by a
/// crash, or planted) is removed first, never written through: its
/// permissions, or a link's target, are not ours to reuse.
fn private_file(path: &Path) -> io::Result<File> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.header_dirty {
            let _ = self.rewrite();
        }
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("Recorder")
            .field("path", &inner.path)
            .field("lines", &inner.lines.len())
            .field("connections", &inner.connections)
            .finish()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// The file, and the one written beside it, are owner-only from the
    /// start, whatever was at the path before.
    #[test]
    fn a_recording_is_readable_by_its_owner_only() {
        let dir = std::env::temp_dir().join(format!("mcp-recorder-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // A partial file left by a crash, readable by all: not reused.
        let partial = path.with_extension("partial");
        std::fs::write(&partial, "stale").unwrap();
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o666)).unwrap();

        let recorder = Recorder::create(&path).unwrap();
        assert_eq!(format!("{:o}", mode(&path)), "600", "created");
        recorder.http_request("POST", "http://h/mcp", []);
        recorder.set_header("era", "legacy");
        recorder.finish().unwrap();
        assert_eq!(format!("{:o}", mode(&path)), "600", "rewritten");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\"era\":\"legacy\"") && !text.contains("old"),
            "{text}"
        );
        assert!(!partial.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
