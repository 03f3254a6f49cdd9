//! Which of the caller's environment variables the server inherits.

/// The variables [`EnvPolicy::Minimal`] passes on from the caller's
/// environment, as the TypeScript SDK does by default.
///
/// ```
/// # #[cfg(unix)]
/// assert!(mcp_transport_stdio::MINIMAL_ENV_VARS.contains(&"PATH"));
/// ```
#[cfg(not(windows))]
pub const MINIMAL_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// The variables [`EnvPolicy::Minimal`] passes on from the caller's
/// environment, as the TypeScript SDK does by default.
#[cfg(windows)]
pub const MINIMAL_ENV_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// Which of the caller's environment variables the server inherits. The
/// variables given with [`StdioCommand::env`](crate::StdioCommand::env)
/// are always set on top.
///
/// The default is [`EnvPolicy::Inherit`], what a shell does and what most
/// servers expect (`npx` needs `PATH`, `HOME` and often `npm_config_*`).
/// Choose [`EnvPolicy::Minimal`] to keep secrets in your environment
/// (API keys, tokens) away from third-party servers, as the TypeScript SDK
/// does by default.
///
/// ```
/// use mcp_transport_stdio::{EnvPolicy, StdioCommand};
///
/// let cmd = StdioCommand::new("my-server")
///     .env_policy(EnvPolicy::Minimal)
///     .env("MY_SERVER_TOKEN", "…");
/// # let _ = cmd;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvPolicy {
    /// Everything the caller has.
    #[default]
    Inherit,
    /// Only [`MINIMAL_ENV_VARS`] (on Unix `HOME`, `LOGNAME`, `PATH`,
    /// `SHELL`, `TERM`, `USER`), skipping values that start with `()`
    /// (exported shell functions).
    Minimal,
    /// Only the named variables, when the caller has them.
    AllowList(Vec<String>),
    /// Nothing: only the variables given with
    /// [`StdioCommand::env`](crate::StdioCommand::env).
    Empty,
}
