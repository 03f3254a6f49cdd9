//! Reading a cassette file into connections and their entries.

use std::path::Path;

use mcp_protocol::{Message, RequestId};
use mcp_transport::TransportProfile;
use serde_json::Value;

/// A recording read back: its header and, per connection, what passed.
///
/// ```
/// use mcp_testkit::cassette::Cassette;
/// let text = concat!(
///     r#"{"cassette":"mcp-steady-cassette/1","era":"legacy","verdict":null}"#, "\n",
///     r#"{"t":0.0,"conn":1,"event":"connect"}"#, "\n",
///     r#"{"t":0.1,"conn":1,"dir":"send","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#, "\n",
///     r#"{"t":0.2,"conn":1,"dir":"recv","message":{"jsonrpc":"2.0","id":1,"result":{}}}"#, "\n",
/// );
/// let cassette = Cassette::parse(text).unwrap();
/// assert_eq!(cassette.era(), Some("legacy"));
/// assert_eq!(cassette.connections(), 1);
/// assert_eq!(cassette.requests(), ["ping"]);
/// ```
#[derive(Clone, Debug)]
pub struct Cassette {
    pub(crate) header: Value,
    pub(crate) connections: Vec<Connection>,
}

/// One connection of a cassette.
#[derive(Clone, Debug, Default)]
pub(crate) struct Connection {
    /// What the recorded transport did beyond moving messages.
    pub(crate) profile: TransportProfile,
    pub(crate) connect_failure: Option<Value>,
    pub(crate) entries: Vec<Entry>,
}

/// One message of a connection, with the line it came from.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) line: usize,
    pub(crate) kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// The client sent this.
    Send(Message),
    /// The server sent this.
    Recv(Message),
    /// The request with this id failed without an answer.
    Failure { id: RequestId, failure: Value },
}

impl Entry {
    pub(crate) fn is_send(&self) -> bool {
        matches!(self.kind, Kind::Send(_))
    }
}

/// A cassette that cannot be read, or a replay that went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CassetteError {
    /// Each request (or answer, or notification) the cassette did not
    /// have, with its diff against the closest recorded one.
    pub mismatches: Vec<String>,
    /// What the client was expected to send and never did.
    pub unused: Vec<String>,
}

impl CassetteError {
    pub(crate) fn unreadable(what: String) -> Self {
        CassetteError {
            mismatches: vec![what],
            unused: Vec::new(),
        }
    }
}

impl std::fmt::Display for CassetteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "the replay did not follow the cassette:")?;
        for m in &self.mismatches {
            writeln!(f, "{m}")?;
        }
        if !self.unused.is_empty() {
            writeln!(f, "{} recorded message(s) never sent:", self.unused.len())?;
            for u in &self.unused {
                writeln!(f, "  {u}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for CassetteError {}

impl Cassette {
    /// Reads the cassette file at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            CassetteError::unreadable(format!("cannot read {}: {e}", path.display()))
        })?;
        Cassette::parse(&text).map_err(|e| {
            CassetteError::unreadable(format!("{}: {}", path.display(), e.mismatches.join("; ")))
        })
    }

    /// Reads a cassette from its text.
    pub fn parse(text: &str) -> Result<Cassette, CassetteError> {
        let mut lines = split_lines(text)
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let bad =
            |n: usize, why: String| CassetteError::unreadable(format!("line {}: {why}", n + 1));
        let (n, first) = lines
            .next()
            .ok_or_else(|| CassetteError::unreadable("an empty cassette".into()))?;
        let header: Value = serde_json::from_str(first).map_err(|e| bad(n, e.to_string()))?;
        if header.get("cassette").and_then(Value::as_str).is_none() {
            return Err(bad(n, "the first line is no cassette header".into()));
        }
        // Each connection opens with a line of its own: no file has more
        // connections than lines, which bounds what a wild `conn` allocates.
        let most = split_lines(text).filter(|l| !l.trim().is_empty()).count();
        let mut connections: Vec<Connection> = Vec::new();
        for (n, text) in lines {
            let line: Value = serde_json::from_str(text).map_err(|e| bad(n, e.to_string()))?;
            let conn = line["conn"].as_u64().unwrap_or(1).max(1);
            let conn = match usize::try_from(conn) {
                Ok(conn) if conn <= most => conn,
                _ => {
                    return Err(bad(
                        n,
                        format!(
                            "\"conn\": {conn} is past the {most} lines of the file (a recording \
                             numbers its connections 1, 2, ... as it opens them); fix or drop the line"
                        ),
                    ));
                }
            };
            while connections.len() < conn {
                connections.push(Connection::default());
            }
            let connection = &mut connections[conn - 1];
            let kind = match (line["event"].as_str(), line["dir"].as_str()) {
                (Some("connected"), _) => {
                    let recorded = |name: &str| line[name].as_bool().unwrap_or(false);
                    connection.profile = TransportProfile::new()
                        .sends_headers(recorded("sendsHeaders"))
                        .answers_every_request(recorded("answersEveryRequest"));
                    continue;
                }
                (Some("connectFailed"), _) => {
                    connection.connect_failure = Some(line["failure"].clone());
                    continue;
                }
                (Some(_), _) => continue,
                // HTTP requests' headers are for people reading the file.
                (None, Some(_)) if line.get("http").is_some() => continue,
                (None, Some("recv")) if line.get("failure").is_some() => {
                    let id = RequestId::from_value(&line["id"])
                        .ok_or_else(|| bad(n, "a failure without an id".into()))?;
                    Kind::Failure {
                        id,
                        failure: line["failure"].clone(),
                    }
                }
                (None, Some(dir @ ("send" | "recv"))) => {
                    let message = Message::from_value(line["message"].clone())
                        .map_err(|e| bad(n, format!("not a JSON-RPC message: {e}")))?;
                    if dir == "send" {
                        Kind::Send(message)
                    } else {
                        Kind::Recv(message)
                    }
                }
                _ => return Err(bad(n, format!("a line this version cannot read: {text}"))),
            };
            connection.entries.push(Entry { line: n + 1, kind });
        }
        Ok(Cassette {
            header,
            connections,
        })
    }

    /// The header line, as recorded.
    pub fn header(&self) -> &Value {
        &self.header
    }

    /// The era the header names (`"legacy"` or `"modern"`), when known.
    pub fn era(&self) -> Option<&str> {
        self.header.get("era").and_then(Value::as_str)
    }

    /// The client's verdict the header holds, when known.
    pub fn verdict(&self) -> Option<&Value> {
        self.header.get("verdict").filter(|v| !v.is_null())
    }

    /// How many connections were recorded.
    pub fn connections(&self) -> usize {
        self.connections.len()
    }

    /// The methods of the client's requests, in recorded order, over every
    /// connection.
    pub fn requests(&self) -> Vec<String> {
        self.connections
            .iter()
            .flat_map(|c| &c.entries)
            .filter_map(|e| match &e.kind {
                Kind::Send(Message::Request(r)) => Some(r.method.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The lines of a cassette file, without their line ends (`\n` or `\r\n`).
#[cfg(not(fuzz_planted))]
fn split_lines(text: &str) -> std::str::Lines<'_> {
    text.lines()
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `cassette`
/// target to find: lines split at `\n` alone keep a Windows line end's
/// `\r`, which a line that cannot be read then reports.
#[cfg(fuzz_planted)]
fn split_lines(text: &str) -> std::str::Split<'_, char> {
    text.split('\n')
}
