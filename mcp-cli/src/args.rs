//! The command line, as clap derive structs.
//!
//! Everything after the first `--` is the server's command line (program
//! and arguments); it is split off before clap sees the rest, so that a
//! subcommand and its arguments can come first:
//! `mcp tools list -- npx -y @modelcontextprotocol/server-everything`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit::EXIT_CODES_HELP;

/// Inspect and drive any MCP server from a terminal.
#[derive(Debug, Parser)]
#[command(
    name = "mcp",
    version,
    override_usage = "mcp [OPTIONS] [COMMAND] [ARGS]... [-- PROGRAM [ARGS]...]",
    after_help = EXIT_CODES_HELP,
)]
pub(crate) struct Cli {
    /// Which server, and how to talk to it.
    #[command(flatten)]
    pub(crate) server: ServerArgs,

    /// What the CLI offers the server.
    #[command(flatten)]
    pub(crate) offer: OfferArgs,

    /// Print exactly the typed result as JSON (for scripts).
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Show the server's stderr, prefixed, and the library's warnings (-v);
    /// debug logs too (-vv).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,

    /// What to do (default: inspect).
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// The server's command line given after `--` (split off before
    /// parsing).
    #[arg(skip)]
    pub(crate) program: Vec<String>,
}

/// How to reach the server.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// Run this command line as a stdio server (split like a shell would).
    /// Without --stdio or `-- PROGRAM`, the embedded reference server is
    /// served in process.
    #[arg(long, value_name = "COMMAND LINE", global = true)]
    pub(crate) stdio: Option<String>,

    /// Talk to the server at this URL over Streamable HTTP (either era,
    /// with the 2024-11-05 HTTP+SSE fallback).
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) url: Option<String>,

    /// Send this header on every HTTP request (repeatable), such as
    /// `--header 'Authorization: Bearer …'`.
    #[arg(long, value_name = "NAME: VALUE", value_parser = parse_header, global = true)]
    pub(crate) header: Vec<(String, String)>,

    /// A servers file in the `mcpServers` form desktop and editor clients
    /// use (VS Code's `servers` form too); pick one with --server (`mcp
    /// bridge` without --server serves them all as one). Without it, `mcp
    /// servers` and --server read `.mcp.json` (else `.vscode/mcp.json`) in
    /// the current directory.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,

    /// Use this server of the servers file.
    #[arg(long, value_name = "NAME", global = true)]
    pub(crate) server: Option<String>,

    /// Set an environment variable for the server (repeatable).
    #[arg(long, value_name = "K=V", value_parser = parse_env, global = true)]
    pub(crate) env: Vec<(String, String)>,

    /// The server's working directory.
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) cwd: Option<PathBuf>,

    /// Which protocol era to speak (`mcp bridge`: to the server, a client
    /// of the other era translated; `auto`: the client's own).
    #[arg(long, value_enum, default_value_t = EraArg::Auto, global = true)]
    pub(crate) era: EraArg,

    /// Offer only this protocol revision (such as 2025-06-18 or 2026-07-28).
    #[arg(long, value_name = "V", global = true)]
    pub(crate) protocol_version: Option<String>,

    /// Record the whole exchange to FILE as JSON Lines (a cassette the
    /// testkit replays): every message both ways, with a relative
    /// timestamp, the era and verdict in the first line, HTTP request
    /// headers; `Authorization` and other credentials redacted.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) record: Option<PathBuf>,

    /// Also redact this header or message field in the --record file
    /// (repeatable).
    #[arg(long, value_name = "NAME", global = true)]
    pub(crate) redact: Vec<String>,

    /// Keep the value of this query parameter of the URL in the --record
    /// file (repeatable); every other query value, and any user:password
    /// in the URL, is redacted.
    #[arg(long, value_name = "NAME", global = true)]
    pub(crate) keep_query: Vec<String>,

    /// Give up on a call after this many seconds without an answer (default
    /// 60; each progress notification from the server restarts the wait).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, global = true)]
    pub(crate) timeout: Option<Duration>,
}

/// What the CLI declares to the server, and how it answers.
#[derive(Debug, Args)]
pub(crate) struct OfferArgs {
    /// Answer elicitation requests with this JSON: the form's content, or a
    /// whole result such as {"action":"decline"}. Without it, the CLI asks
    /// on the terminal when stdin is one, and offers no elicitation
    /// otherwise.
    #[arg(long, value_name = "JSON", global = true)]
    pub(crate) elicit_json: Option<String>,

    /// Answer sampling requests by echoing the last message (for testing;
    /// without it the CLI offers no sampling).
    #[arg(long, global = true)]
    pub(crate) sampling_echo: bool,

    /// Offer this directory as a root (repeatable; without it, no roots).
    #[arg(long, value_name = "PATH", global = true)]
    pub(crate) root: Vec<PathBuf>,
}

/// The protocol era to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EraArg {
    /// Probe with server/discover, fall back to initialize.
    Auto,
    /// initialize only (2024-11-05 to 2025-11-25).
    Legacy,
    /// Stateless requests only (2026-07-28).
    Modern,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show the era, version, server info, instructions, capabilities, and
    /// every tool, resource, template and prompt.
    Inspect,
    /// List or call tools.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// List, read resources and templates.
    #[command(subcommand)]
    Resources(ResourcesCommand),
    /// List or get prompts.
    #[command(subcommand)]
    Prompts(PromptsCommand),
    /// List, describe and read skills (the Skills extension, SEP-2640),
    /// every file read verified against the skill's entry.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Ask for completions of a prompt's or a resource template's argument.
    Complete(CompleteArgs),
    /// Check that the server answers (ping; server/discover in modern).
    Ping,
    /// Print change notifications as they come, until Ctrl-C.
    Watch(WatchArgs),
    /// Show every server of the servers file (--config) with its status,
    /// era and tool count, connecting to all of them at once.
    Servers,
    /// Serve the server to MCP clients: on this process's stdin and stdout
    /// (the default, for clients that can only start a command), or over
    /// Streamable HTTP with --serve http (clients of either era, each with
    /// a session of its own upstream). Every request, notification, server
    /// request, progress and cancel is relayed within the era both speak,
    /// errors verbatim. Only JSON-RPC goes to stdout; logs and the
    /// server's stderr (-v) to stderr. Over stdio it exits 0 when the
    /// client leaves, 3 when the server is gone (after answering what was
    /// pending). A --url server that needs authorization: run `mcp login`
    /// first (the bridge never reads the terminal). With --config FILE and
    /// no --server, every server of the file is served as one (legacy
    /// era): tools and prompts named `server__tool`, each call sent to its
    /// server; a server that does not start is left out (-v names it).
    Bridge(BridgeArgs),
    /// Authorize with the server of --url (OAuth): prints the URL to open,
    /// waits for the browser's redirect on a loopback port, and stores the
    /// tokens, which later --url commands use.
    Login,
    /// Forget the stored tokens of the server of --url.
    Logout,
}

/// `mcp bridge …`.
#[derive(Debug, Args)]
pub(crate) struct BridgeArgs {
    /// Restart a server that died at most this many times a minute (calls
    /// in flight get an error saying they may have run; the client's
    /// handshake is told to the new server); 0: exit when it dies.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) restarts: u32,

    /// With --url: when no tokens are stored for the server, run the login
    /// (as `mcp login` does, on stderr and a browser) before serving.
    #[arg(long)]
    pub(crate) login: bool,

    /// Show the client only the tools whose names match this glob (`*`,
    /// `?`, `[…]`, `{a,b}`; repeatable). A hidden tool is left out of the
    /// list and refused when called.
    #[arg(long, value_name = "GLOB")]
    pub(crate) allow_tools: Vec<String>,

    /// Hide the tools whose names match this glob (repeatable), even when
    /// allowed.
    #[arg(long, value_name = "GLOB")]
    pub(crate) deny_tools: Vec<String>,

    /// Show only the tools the server annotates read-only
    /// (`readOnlyHint`).
    #[arg(long)]
    pub(crate) read_only: bool,

    /// Serve the client two tools in place of the server's:
    /// `search_tools` (the server's tools ranked for a query, each with
    /// its inputSchema) and `call_tool` (calls one by name), so that an
    /// agent in front of many servers (--config without --server) is not
    /// given every tool's definition. The allow, deny and read-only rules
    /// still hold.
    #[arg(long)]
    pub(crate) tool_search: bool,

    /// How clients reach the bridge: `stdio` (this process's stdin and
    /// stdout) or `http` (Streamable HTTP at /mcp on --listen, for clients
    /// of either era; until SIGINT or SIGTERM).
    #[arg(long, value_enum, default_value_t = Serve::Stdio)]
    pub(crate) serve: Serve,

    /// With --serve http: the address to listen on. Beyond loopback it
    /// needs --token-file or --token-env.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8000")]
    pub(crate) listen: std::net::SocketAddr,

    /// With --serve http: require `Authorization: Bearer TOKEN`, the token
    /// read from this file (never from the command line, which other users
    /// can see).
    #[arg(long, value_name = "PATH", conflicts_with = "token_env")]
    pub(crate) token_file: Option<std::path::PathBuf>,

    /// With --serve http: require `Authorization: Bearer TOKEN`, the token
    /// read from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub(crate) token_env: Option<String>,

    /// With --serve http: allow browser pages of this origin
    /// (`https://app.example.com`; repeatable) besides loopback ones.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,

    /// With --serve http: the most sessions served at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub(crate) max_sessions: usize,

    /// With --serve http: end a session idle this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub(crate) idle_timeout: u64,
}

/// How `mcp bridge` serves its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Serve {
    /// This process's stdin and stdout.
    Stdio,
    /// Streamable HTTP on --listen.
    Http,
}

/// `mcp tools …`.
#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List every tool.
    List,
    /// Call a tool: `mcp tools call NAME k=v …`; values are typed by the
    /// tool's input schema (`n=3` is a number where the schema says so).
    Call {
        /// The tool's name.
        name: String,
        /// Arguments as KEY=VALUE.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// Arguments as a JSON object (KEY=VALUE pairs are added on top).
        #[arg(long = "args", value_name = "JSON")]
        args_json: Option<String>,
    },
}

/// `mcp resources …`.
#[derive(Debug, Subcommand)]
pub(crate) enum ResourcesCommand {
    /// List every resource.
    List,
    /// List every resource template.
    Templates,
    /// Read a resource (blobs are written decoded when stdout is not a
    /// terminal).
    Read {
        /// The resource's URI.
        uri: String,
    },
}

/// `mcp skills …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// List every skill the server lists (no skill file is fetched).
    List,
    /// Show a skill's entry (skills/get): its frontmatter and its files
    /// with their sizes and digests.
    Get {
        /// The URI of the skill's SKILL.md.
        uri: String,
    },
    /// Load a skill and print its SKILL.md, or one of its files, each
    /// verified against the skill's entry (digest, size, frontmatter).
    Read {
        /// The URI of the skill's SKILL.md.
        uri: String,
        /// A file of the skill, relative to its root
        /// (`references/GUIDE.md`) or as a full URI.
        file: Option<String>,
    },
}

/// `mcp prompts …`.
#[derive(Debug, Subcommand)]
pub(crate) enum PromptsCommand {
    /// List every prompt.
    List,
    /// Get a prompt with its arguments.
    Get {
        /// The prompt's name.
        name: String,
        /// Arguments as KEY=VALUE.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
    },
}

/// What a completion is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RefKind {
    /// A prompt, by name.
    Prompt,
    /// A resource template, by URI template.
    Resource,
}

/// `mcp complete prompt|resource REF ARGUMENT [VALUE]`.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
    /// Whether REF names a prompt or a resource template.
    #[arg(value_enum)]
    pub(crate) kind: RefKind,
    /// The prompt's name or the template's URI template.
    #[arg(value_name = "REF")]
    pub(crate) reference: String,
    /// The argument to complete.
    pub(crate) argument: String,
    /// What has been typed so far.
    #[arg(default_value = "")]
    pub(crate) value: String,
    /// Values of other arguments already given, as KEY=VALUE (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) context: Vec<String>,
}

/// `mcp watch`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// Also watch this resource's changes (repeatable).
    #[arg(long, value_name = "URI")]
    pub(crate) resource: Vec<String>,
    /// Stop after this many notifications.
    #[arg(long, value_name = "N")]
    pub(crate) count: Option<u64>,
}

impl Cli {
    /// Parses the process's arguments; exits on `--help`, `--version` and
    /// usage errors (with code 2), as clap does.
    pub(crate) fn parse_args(args: impl IntoIterator<Item = OsString>) -> Cli {
        let mut args: Vec<OsString> = args.into_iter().collect();
        let program = match args.iter().position(|a| a == "--") {
            Some(at) => {
                let rest = args.split_off(at + 1);
                args.pop();
                rest.into_iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            }
            None => Vec::new(),
        };
        let mut cli = Cli::parse_from(args);
        cli.program = program;
        cli
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected NAME: VALUE, got {s:?}")),
    }
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected K=V, got {text:?}")),
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("expected a number of seconds, got {text:?}"))?;
    if secs.is_finite() && secs > 0.0 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(format!("the timeout must be positive, got {text:?}"))
    }
}

/// Splits `KEY=VALUE`.
pub(crate) fn split_pair(pair: &str) -> Result<(&str, &str), String> {
    match pair.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k, v)),
        _ => Err(format!("expected KEY=VALUE, got {pair:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::parse_args(args.iter().map(OsString::from))
    }

    #[test]
    fn the_program_after_dashes_is_split_off() {
        let cli = parse(&[
            "mcp", "--json", "tools", "list", "--", "server", "--flag", "--",
        ]);
        assert!(cli.json);
        assert!(matches!(
            cli.command,
            Some(Command::Tools(ToolsCommand::List))
        ));
        assert_eq!(cli.program, ["server", "--flag", "--"]);
    }

    #[test]
    fn global_options_go_anywhere() {
        let cli = parse(&["mcp", "ping", "--timeout", "1.5", "--env", "A=b=c"]);
        assert_eq!(cli.server.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(cli.server.env, [("A".to_owned(), "b=c".to_owned())]);
    }

    #[test]
    fn pairs_split_at_the_first_equals() {
        assert_eq!(split_pair("a=b=c"), Ok(("a", "b=c")));
        assert!(split_pair("=x").is_err());
        assert!(split_pair("x").is_err());
    }
}
