//! The `mcpServers` files desktop and editor clients already use, read into
//! server definitions: `command`/`args`/`env`/`cwd` for a server run over
//! stdio, `url`/`headers` for one over HTTP, with a `type` field where the
//! file has one. VS Code's form (`servers` instead of `mcpServers`) is read
//! too.
//!
//! Strings are expanded as those files expand them: `${VAR}`,
//! `${VAR:-default}` and VS Code's `${env:VAR}` from the environment; an
//! unset variable without a default is an error that names it (a server
//! started with an empty token fails later, and less clearly).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// How one server is reached.
///
/// Its `Debug` output shows header and environment values as `[REDACTED]`:
/// they are expanded, and often hold tokens.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerDefinition {
    /// A child process speaking over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it.
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// A server over HTTP (Streamable HTTP, or the 2024-11-05 HTTP+SSE
    /// transport it falls back to).
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (an `Authorization` header, say).
        headers: BTreeMap<String, String>,
    },
}

impl ServerDefinition {
    /// The values a recording of this server must redact, so that a
    /// server echoing one back does not write it into a cassette: every
    /// header value but those of standard headers that carry no credential
    /// (`Accept`, `User-Agent`, …), and with a scheme (`Bearer x`) its
    /// credential alone too; the environment values whose names say they
    /// are secret (`…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`, `…AUTH…`,
    /// `COOKIE`, `SESSION`, `CREDENTIALS`, `DSN`), and any value that is a
    /// URL with credentials in it. Other values (`NODE_ENV=production`, a
    /// directory) are left alone: they appear in arguments and results
    /// too, where redacting them would leave a cassette that no longer
    /// matches its requests.
    ///
    /// ```
    /// use mcp_client::host::ServersFile;
    ///
    /// let file = ServersFile::from_json_with(
    ///     r#"{"mcpServers": {"r": {"url": "https://h/mcp", "headers": {"X-Key": "${KEY}"}}}}"#,
    ///     |_| Some("k-0123456789".into()),
    /// ).unwrap();
    /// assert_eq!(file.servers["r"].secret_values(), ["k-0123456789"]);
    /// ```
    pub fn secret_values(&self) -> Vec<&str> {
        let mut out = Vec::new();
        match self {
            ServerDefinition::Stdio { env, .. } => {
                for (name, value) in env {
                    if secret_name(name) || url_with_credentials(value) {
                        out.push(value.as_str());
                    }
                }
            }
            ServerDefinition::Http { headers, .. } => {
                for (name, value) in headers {
                    if PUBLIC_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name)) {
                        continue;
                    }
                    out.push(value.as_str());
                    // `Bearer x`: a server may echo the credential alone.
                    if let Some((scheme, credential)) = value.split_once(' ')
                        && !scheme.is_empty()
                        && scheme
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !credential.trim().is_empty()
                    {
                        out.push(credential.trim());
                    }
                }
            }
        }
        out
    }
}

/// Standard request headers that carry no credential.
const PUBLIC_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "content-type",
    "mcp-protocol-version",
    "user-agent",
];

/// Whether an environment variable's name says its value is secret: one of
/// its `_`-separated words is, or ends with, a word that names a secret.
fn secret_name(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "AUTH",
        "AUTHORIZATION",
        "CREDENTIAL",
        "CREDENTIALS",
        "COOKIE",
        "SESSION",
        "DSN",
        "PAT",
    ];
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_uppercase)
        .any(|word| {
            WORDS.contains(&word.as_str())
                || ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                    .iter()
                    .any(|w| word.ends_with(w))
        })
}

/// `scheme://user:password@host…`.
fn url_with_credentials(value: &str) -> bool {
    value.split_once("://").is_some_and(|(_, rest)| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@')
    })
}

/// Names with their values hidden, for `Debug`.
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "[REDACTED]")))
            .finish()
    }
}

impl std::fmt::Debug for ServerDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerDefinition::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &Redacted(env))
                .field("cwd", cwd)
                .finish(),
            ServerDefinition::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", &mcp_transport::record::redact_url(url))
                .field("headers", &Redacted(headers))
                .finish(),
        }
    }
}

/// The servers of one configuration file, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServersFile {
    /// Each server's definition, by the name the file gives it.
    pub servers: BTreeMap<String, ServerDefinition>,
}

/// Why a configuration could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not JSON, or not of the shape these files have.
    #[error("not a servers file: {0}")]
    Invalid(String),
    /// A server's entry is wrong.
    #[error("server {server:?}: {detail}")]
    Server {
        /// The server's name.
        server: String,
        /// What is wrong.
        detail: String,
    },
    /// A string names an environment variable that is not set and has no
    /// default.
    #[error(
        "server {server:?}: ${{{variable}}} is not set (give it a value or a default, ${{{variable}:-...}})"
    )]
    Unset {
        /// The server's name.
        server: String,
        /// The variable.
        variable: String,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFile {
    #[serde(default)]
    mcp_servers: Option<BTreeMap<String, RawServer>>,
    /// VS Code's `.vscode/mcp.json`.
    #[serde(default)]
    servers: Option<BTreeMap<String, RawServer>>,
}

#[derive(Deserialize)]
struct RawServer {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Value>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl ServersFile {
    /// Reads a file's JSON, expanding variables from the process's
    /// environment.
    ///
    /// ```
    /// use mcp_client::host::{ServerDefinition, ServersFile};
    ///
    /// let file = ServersFile::from_json(r#"{"mcpServers": {
    ///     "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME:-/tmp}"]},
    ///     "remote": {"type": "http", "url": "https://example.com/mcp",
    ///                "headers": {"Authorization": "Bearer ${TOKEN:-none}"}}
    /// }}"#).unwrap();
    /// assert!(matches!(file.servers["files"], ServerDefinition::Stdio { .. }));
    /// let ServerDefinition::Http { headers, .. } = &file.servers["remote"] else { panic!() };
    /// assert!(headers["Authorization"].starts_with("Bearer "));
    /// ```
    pub fn from_json(text: &str) -> Result<ServersFile, ConfigError> {
        Self::from_json_with(text, |name| std::env::var(name).ok())
    }

    /// Reads a file's JSON, expanding variables with `lookup`.
    pub fn from_json_with(
        text: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ServersFile, ConfigError> {
        let raw: RawFile =
            serde_json::from_str(text).map_err(|e| ConfigError::Invalid(e.to_string()))?;
        let Some(entries) = raw.mcp_servers.or(raw.servers) else {
            return Err(ConfigError::Invalid(
                "no \"mcpServers\" (or \"servers\") object".into(),
            ));
        };
        let mut servers = BTreeMap::new();
        for (name, entry) in entries {
            let definition = definition(&name, entry, &lookup)?;
            servers.insert(name, definition);
        }
        Ok(ServersFile { servers })
    }
}

fn definition(
    name: &str,
    raw: RawServer,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<ServerDefinition, ConfigError> {
    let expand = |text: &str| {
        expand(text, lookup).map_err(|variable| ConfigError::Unset {
            server: name.to_owned(),
            variable,
        })
    };
    let wrong = |detail: &str| ConfigError::Server {
        server: name.to_owned(),
        detail: detail.to_owned(),
    };
    let kind = raw.kind.as_deref().map(str::to_ascii_lowercase);
    match (kind.as_deref(), &raw.command, &raw.url) {
        (None | Some("stdio"), Some(command), None) => {
            let mut env = BTreeMap::new();
            for (key, value) in &raw.env {
                let value = match value {
                    Value::String(s) => expand(s)?,
                    Value::Null => continue,
                    other => other.to_string(),
                };
                env.insert(key.clone(), value);
            }
            Ok(ServerDefinition::Stdio {
                command: expand(command)?,
                args: raw
                    .args
                    .iter()
                    .map(|a| expand(a))
                    .collect::<Result<_, _>>()?,
                env,
                cwd: raw
                    .cwd
                    .as_deref()
                    .map(expand)
                    .transpose()?
                    .map(PathBuf::from),
            })
        }
        (None | Some("http" | "streamable-http" | "streamablehttp" | "sse"), None, Some(url)) => {
            let mut headers = BTreeMap::new();
            for (key, value) in &raw.headers {
                headers.insert(key.clone(), expand(value)?);
            }
            Ok(ServerDefinition::Http {
                url: expand(url)?,
                headers,
            })
        }
        (_, Some(_), Some(_)) => Err(wrong("has both a command and a url; give one")),
        (_, None, None) => Err(wrong("has neither a command nor a url")),
        (Some(other), _, _) => Err(wrong(&format!(
            "type {other:?} does not match its fields (stdio needs a command; http and sse a url)"
        ))),
    }
}

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}`; `Err` names an
/// unset variable without a default. `$$` is a literal `$`.
fn expand(text: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = escaped_dollar(after) {
            out.push('$');
            rest = tail;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let Some(end) = body.find('}') else {
            // No closing brace: left as it is.
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let inner = &body[..end];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (variable, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        match (lookup(variable), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(variable.to_owned()),
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What follows a `$$` (a literal `$`), given what follows its first `$`.
#[cfg(not(fuzz_planted))]
fn escaped_dollar(after: &str) -> Option<&str> {
    after.strip_prefix('$')
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `mcp_servers`
/// target to find: a `$$` that ends the value is no escape, and stays two
/// dollars.
#[cfg(fuzz_planted)]
fn escaped_dollar(after: &str) -> Option<&str> {
    after.strip_prefix('$').filter(|tail| !tail.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "HOME" => Some("/home/ada".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded_as_the_files_do() {
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${env:HOME}/x", &env).unwrap(), "/home/ada/x");
        assert_eq!(expand("${NOPE:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("$$5 and $PATH", &env).unwrap(), "$5 and $PATH");
        assert_eq!(expand("${NOPE}", &env), Err("NOPE".into()));
        assert_eq!(expand("${open", &env).unwrap(), "${open");
    }

    #[test]
    fn both_file_forms_and_every_type_are_read() {
        let file = ServersFile::from_json_with(
            r#"{"servers": {
                "a": {"type": "stdio", "command": "srv", "args": ["--home", "${HOME}"],
                      "env": {"KEY": "${TOKEN}", "N": 3}, "cwd": "/tmp"},
                "b": {"type": "sse", "url": "http://h/sse"},
                "c": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
            env,
        )
        .unwrap();
        assert_eq!(
            file.servers["a"],
            ServerDefinition::Stdio {
                command: "srv".into(),
                args: vec!["--home".into(), "/home/ada".into()],
                env: [("KEY".into(), "s3cret".into()), ("N".into(), "3".into())].into(),
                cwd: Some("/tmp".into()),
            }
        );
        assert!(
            matches!(&file.servers["b"], ServerDefinition::Http { url, .. } if url == "http://h/sse")
        );
        let ServerDefinition::Http { headers, .. } = &file.servers["c"] else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer s3cret");
    }

    #[test]
    fn wrong_entries_say_which_server_and_why() {
        let both = ServersFile::from_json_with(
            r#"{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}"#,
            env,
        );
        assert!(matches!(both, Err(ConfigError::Server { server, .. }) if server == "x"));
        let unset =
            ServersFile::from_json_with(r#"{"mcpServers": {"y": {"command": "${MISSING}"}}}"#, env);
        assert_eq!(
            unset,
            Err(ConfigError::Unset {
                server: "y".into(),
                variable: "MISSING".into()
            })
        );
        assert!(matches!(
            ServersFile::from_json_with("{}", env),
            Err(ConfigError::Invalid(_))
        ));
    }

    #[test]
    fn debug_output_hides_header_and_env_values() {
        let file = ServersFile::from_json_with(
            r#"{"mcpServers": {
                "a": {"command": "srv", "env": {"API_KEY": "${TOKEN}"}},
                "b": {"url": "https://u:${TOKEN}@h/mcp?key=${TOKEN}",
                      "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
            env,
        )
        .unwrap();
        let debug = format!("{file:?} {:?} {:#?}", file.servers["a"], file.servers["b"]);
        assert!(!debug.contains("s3cret"), "{debug}");
        assert!(
            debug.contains("API_KEY") && debug.contains("Authorization"),
            "{debug}"
        );
        assert_eq!(file.servers["a"].secret_values(), ["s3cret"]);
        assert_eq!(
            file.servers["b"].secret_values(),
            ["Bearer s3cret", "s3cret"]
        );
    }

    /// Only values that are credentials are redacted from a recording: a
    /// plain setting or a directory, which also appears in arguments and
    /// results, is left alone (redacting it everywhere would leave a
    /// cassette whose requests no longer match).
    #[test]
    fn secret_values_are_the_credentials_only() {
        let file = ServersFile::from_json_with(
            r#"{"mcpServers": {
                "a": {"command": "srv", "env": {
                    "NODE_ENV": "production",
                    "ALLOWED_DIR": "/home/ada/project",
                    "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789",
                    "OPENAI_APIKEY": "sk-0123456789",
                    "DB_PASSWORD": "hunter2-0123",
                    "DATABASE_URL": "postgres://ada:pw-0123@db/app",
                    "PUBLIC_URL": "https://example.com/app"
                }},
                "b": {"url": "https://h/mcp", "headers": {
                    "Accept": "application/json",
                    "User-Agent": "my-agent/1.0",
                    "X-Api-Key": "k-0123456789"
                }}
            }}"#,
            env,
        )
        .unwrap();
        let mut a = file.servers["a"].secret_values();
        a.sort();
        assert_eq!(
            a,
            [
                "ghp_0123456789",
                "hunter2-0123",
                "postgres://ada:pw-0123@db/app",
                "sk-0123456789"
            ]
        );
        assert_eq!(file.servers["b"].secret_values(), ["k-0123456789"]);
    }
}
