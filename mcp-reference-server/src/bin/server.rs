//! `mcp-reference-server`: the fake MCP server over stdio (or, with
//! `--http PORT`, over HTTP on loopback), its era, versions and
//! misbehaviours chosen by flags. Run with `--help` for them.

use std::process::ExitCode;
use std::time::Duration;

#[cfg(feature = "http")]
use mcp_reference_server::http::{HttpFake, HttpKnob, HttpOptions};
use mcp_reference_server::{
    CacheScope, Content, DiscoverAnswer, EraChoice, FakeConfig, FakeResource, FakeTool, Knob,
    Methods, ResourceBody, ToolBehavior, demo_skills, serve_stdio,
};
#[cfg(not(feature = "http"))]
use no_http::{HttpKnob, HttpOptions};

const HELP: &str = "\
mcp-reference-server: a fake MCP server speaking newline-delimited JSON-RPC on stdio,
or HTTP with --http

USAGE: mcp-reference-server [FLAGS]

  --era legacy|modern|dual      which era it speaks (default: dual)
  --versions V1,V2,...          the revisions it accepts, of either era
                                (default: 2026-07-28 and 2025-11-25 ... 2024-11-05)
  --page-size N                 page list results by N items (default: no paging)
  --ttl-ms N                    ttlMs of modern cacheable results (default: 60000)
  --cache-scope public|private  cacheScope of modern cacheable results (default: public)
  --discover-answer A           how a legacy connection answers server/discover:
                                -32601 (default), -32602, -32000 or silent
  --never-read-stdin            never read stdin at all
  --tools N                     N more tools (bulk_0 ... bulk_N-1, each echoing, with a
                                description and an input schema), for large tools/list
  --blob-bytes N                one more resource, fake://blob/large: N bytes (base64 on the wire)
  --text-bytes N                one more tool, big_text: a text result of N bytes
  --skills                      serve two skills (the Skills extension, SEP-2640, with
                                directoryRead): skill://pdf-processing/SKILL.md and
                                skill://acme/billing/refunds/SKILL.md, with their files
  --conformance                 serve the fixtures of the official MCP conformance suite's
                                server scenarios (test_* tools and prompts, test:// resources)
                                in place of the default content; with --http, also refuse
                                (403) a Host or Origin other than loopback (DNS rebinding)
  --knob K                      a misbehaviour, repeatable:
      exit-on-unknown-before-init   exit 1 on any request before initialize (rmcp < 3.0)
      fix-era-at-first-message      (dual) after a modern first request, initialize gets -32022
      unsolicited-after-initialized send roots/list and tools/list_changed after initialized
      progress-after-cancel         keep sending progress after a cancel
      never-read-stdin              as --never-read-stdin
      never-answer[=METHOD]         never answer METHOD (default: every request)
      answer-late=MS[:METHOD]       answer METHOD (default: every request) MS ms late
      answer-twice[=METHOD]         answer METHOD twice
      wrong-id[=METHOD]             answer METHOD with a wrong id
  --help                        this text

HTTP (instead of stdio):
  --http PORT                   serve on 127.0.0.1:PORT (0: any free port); the first line
                                on stdout is `listening on http://127.0.0.1:PORT/mcp`.
                                /mcp: Streamable HTTP of the era(s) served (legacy sessions,
                                resumable SSE; modern header checks, -32020 on a mismatch);
                                /sse + /messages: the 2024-11-05 HTTP+SSE transport
  --loopback-only               refuse (403) a Host or Origin other than localhost, 127.0.0.1
                                or [::1] (DNS-rebinding protection)
  --stateless                   legacy without sessions (no Mcp-Session-Id; GET gets 405)
  --json                        answer requests as application/json instead of SSE
  --no-get-stream               GET gets 405
  --retry-ms MS                 start legacy SSE streams with a priming event with retry: MS
  --oauth                       protect /mcp with OAuth: without a valid bearer token it answers
                                401 with WWW-Authenticate: Bearer resource_metadata=...; the
                                authorization server on the same origin (the issuer) serves
                                /.well-known/oauth-protected-resource/mcp,
                                /.well-known/oauth-authorization-server, POST /register
                                (dynamic registration), GET /authorize (approved at once: a 302
                                to the redirect_uri with code, state, iss; PKCE S256 required)
                                and POST /token (authorization_code, refresh_token,
                                client_credentials); tokens last --token-lifetime seconds
  --token-lifetime SECS         (with --oauth) how long access tokens last (default: 3600)
  --http-knob K[@METHOD]        an HTTP misbehaviour, repeatable (METHOD: the JSON-RPC
                                method it applies to; default every one):
      bad-gateway                   502 with an HTML page
      never-respond                 never send the response head
      drip=MS                       SSE bodies one byte every MS ms
      oversized=BYTES               answers padded past BYTES
      endless-body                  a JSON answer whose body never ends
      content-type=TYPE             answers as JSON with this Content-Type (empty: none)
      redirect=URL                  307 to URL
      drop-stream=MS                end a POST stream after an event id and retry: MS, before
                                    the answer (the client resumes by GET)
      resume-empty                  a GET with Last-Event-ID gets a stream that ends at once
      discover-not-initialized      server/discover without a session: 400, -32000
      unknown-session-400           an unknown session gets 400, not 404
      expire-after=N                sessions expire after N requests

Default content: tools echo, structured, fail, slow, elicit, sample, roots, mrtr_multi,
add_tool, touch_resource, log; resources fake://text/hello, fake://blob/bytes,
fake://json/config, fake://counter; template fake://items/{id}; prompts greeting, simple.
";

fn main() -> ExitCode {
    let (config, http) = match parse(std::env::args().skip(1)) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("mcp-reference-server: {e}\n\n{HELP}");
            return ExitCode::from(2);
        }
    };
    if let Some(http) = http {
        return serve_http(config, http);
    }
    match serve_stdio(config) {
        Ok(ending) => {
            if let mcp_reference_server::Ending::Exited { stderr, .. } = &ending {
                eprint!("{stderr}");
            }
            ExitCode::from(u8::try_from(ending.code()).unwrap_or(1))
        }
        Err(e) => {
            eprintln!("mcp-reference-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Serves over HTTP until killed.
#[cfg(feature = "http")]
fn serve_http(config: FakeConfig, http: Http) -> ExitCode {
    use std::io::Write;
    let Http {
        port,
        options,
        oauth,
    } = http;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-reference-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let served = match oauth {
            None => HttpFake::start_on(config, options, addr)
                .await
                .map(|s| (s.url(), Served::Open(s))),
            Some(oauth) => protect(config, options, oauth, addr).await,
        };
        match served {
            Ok((url, server)) => {
                let mut out = std::io::stdout();
                let _ = writeln!(out, "listening on {url}");
                let _ = out.flush();
                // Served until the process is killed.
                std::future::pending::<()>().await;
                drop(server);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("mcp-reference-server: cannot listen on {addr}: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The server `--http` runs, kept alive until the process ends.
#[cfg(feature = "http")]
enum Served {
    Open(#[allow(dead_code)] HttpFake),
    #[cfg(feature = "oauth")]
    Protected(#[allow(dead_code)] mcp_reference_server::http::ProtectedHttpFake),
}

/// `--oauth`: the fake behind its authorization server.
#[cfg(all(feature = "http", feature = "oauth"))]
async fn protect(
    config: FakeConfig,
    options: HttpOptions,
    lifetime: Duration,
    addr: std::net::SocketAddr,
) -> std::io::Result<(String, Served)> {
    use mcp_reference_server::http::{OAuthOptions, ProtectedHttpFake};
    let oauth = OAuthOptions::new().token_lifetime(lifetime);
    let server = ProtectedHttpFake::start_on(config, options, oauth, addr).await?;
    Ok((server.url(), Served::Protected(server)))
}

/// Built without the `oauth` feature: there is no authorization server.
#[cfg(all(feature = "http", not(feature = "oauth")))]
async fn protect(
    _: FakeConfig,
    _: HttpOptions,
    _: Duration,
    _: std::net::SocketAddr,
) -> std::io::Result<(String, Served)> {
    Err(std::io::Error::other(
        "built without the `oauth` feature; --oauth is not available",
    ))
}

/// Built without the `http` feature: there is no HTTP server.
#[cfg(not(feature = "http"))]
fn serve_http(_: FakeConfig, _: Http) -> ExitCode {
    eprintln!("mcp-reference-server: built without the `http` feature; --http is not available");
    ExitCode::from(2)
}

/// Stand-ins for the HTTP options when built without the `http` feature.
#[cfg(not(feature = "http"))]
mod no_http {
    pub(crate) struct HttpOptions;
    pub(crate) struct HttpKnob;

    impl HttpOptions {
        pub(crate) fn new() -> Self {
            HttpOptions
        }
        pub(crate) fn stateless(self) -> Self {
            self
        }
        pub(crate) fn json_answers(self) -> Self {
            self
        }
        pub(crate) fn no_get_stream(self) -> Self {
            self
        }
        pub(crate) fn loopback_only(self) -> Self {
            self
        }
        pub(crate) fn retry(self, _: std::time::Duration) -> Self {
            self
        }
        pub(crate) fn knob(self, _: HttpKnob) -> Self {
            self
        }
    }

    impl HttpKnob {
        pub(crate) fn parse(_: &str) -> Result<HttpKnob, String> {
            Err("built without the `http` feature".into())
        }
    }
}

/// What `--http` and the flags after it ask for.
// Without the `http` feature it is parsed, then refused unread.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
struct Http {
    port: u16,
    options: HttpOptions,
    /// With `--oauth`: the access tokens' lifetime.
    oauth: Option<Duration>,
}

/// What the flags ask for: the configuration, and with `--http` how to
/// serve it; `None` for `--help`.
type Parsed = (FakeConfig, Option<Http>);

/// Reads the flags; `None` for `--help`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Parsed>, String> {
    let mut era = EraChoice::Dual;
    let mut versions: Option<Vec<String>> = None;
    let mut page_size = None;
    let mut ttl_ms = 60_000;
    let mut scope = CacheScope::Public;
    let mut knobs = Vec::new();
    let mut port = None;
    let mut http = HttpOptions::new();
    let mut oauth = false;
    let mut lifetime = Duration::from_secs(3600);
    let mut bulk = Bulk::default();
    let mut skills = false;
    let mut conformance = false;
    while let Some(flag) = args.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) if flag.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (flag.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs {what}"))
        };
        match name.as_str() {
            "--help" | "-h" => return Ok(None),
            "--era" => {
                era = match value("an era")?.as_str() {
                    "legacy" => EraChoice::Legacy,
                    "modern" => EraChoice::Modern,
                    "dual" => EraChoice::Dual,
                    other => return Err(format!("unknown era {other:?}")),
                }
            }
            "--versions" => {
                let list = value("a list of versions")?;
                versions = Some(list.split(',').map(|v| v.trim().to_owned()).collect());
            }
            "--page-size" => page_size = Some(number(&value("a number")?)? as usize),
            "--ttl-ms" => ttl_ms = number(&value("a number")?)?,
            "--cache-scope" => {
                scope = match value("a scope")?.as_str() {
                    "public" => CacheScope::Public,
                    "private" => CacheScope::Private,
                    other => return Err(format!("unknown cache scope {other:?}")),
                }
            }
            "--discover-answer" => {
                let text = value("an answer")?;
                let answer = DiscoverAnswer::parse(&text)
                    .ok_or_else(|| format!("unknown discover answer {text:?}"))?;
                knobs.push(Knob::DiscoverAnswer(answer));
            }
            "--never-read-stdin" => knobs.push(Knob::NeverReadInput),
            "--tools" => bulk.tools = number(&value("a number")?)? as usize,
            "--blob-bytes" => bulk.blob = Some(number(&value("a number")?)? as usize),
            "--text-bytes" => bulk.text = Some(number(&value("a number")?)? as usize),
            "--knob" => knobs.push(knob(&value("a knob")?)?),
            "--skills" => skills = true,
            "--conformance" => {
                conformance = true;
                http = http.loopback_only();
            }
            "--loopback-only" => http = http.loopback_only(),
            "--http" => {
                let text = value("a port")?;
                port = Some(
                    text.parse::<u16>()
                        .map_err(|_| format!("{text:?} is not a port"))?,
                );
            }
            "--stateless" => http = http.stateless(),
            "--json" => http = http.json_answers(),
            "--no-get-stream" => http = http.no_get_stream(),
            "--retry-ms" => http = http.retry(Duration::from_millis(number(&value("a number")?)?)),
            "--oauth" => oauth = true,
            "--token-lifetime" => lifetime = Duration::from_secs(number(&value("seconds")?)?),
            "--http-knob" => http = http.knob(HttpKnob::parse(&value("a knob")?)?),
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let mut config = FakeConfig::of_era(era).cache_hint(ttl_ms, scope);
    if let Some(versions) = versions {
        config = config.versions(versions);
    }
    if let Some(n) = page_size {
        config = config.page_size(n);
    }
    if conformance {
        config = config.conformance();
    }
    if skills {
        config = config.with_skills(demo_skills(), true);
    }
    let content = bulk.add_to(config.content.clone());
    let config = knobs
        .into_iter()
        .fold(config.content(content), FakeConfig::knob);
    if oauth && port.is_none() {
        return Err("--oauth needs --http PORT".into());
    }
    let http = port.map(|port| Http {
        port,
        options: http,
        oauth: oauth.then_some(lifetime),
    });
    Ok(Some((config, http)))
}

/// Large content for benchmarks: many tools, a large blob, a large text.
#[derive(Default)]
struct Bulk {
    tools: usize,
    blob: Option<usize>,
    text: Option<usize>,
}

impl Bulk {
    fn add_to(&self, mut content: Content) -> Content {
        for i in 0..self.tools {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The text to return."},
                    "count": {"type": "integer", "minimum": 0}
                },
                "required": ["text"]
            });
            content = content.with_tool(
                FakeTool::new(
                    &format!("bulk_{i}"),
                    "Returns its text; one of many tools of a large listing.",
                    ToolBehavior::Echo,
                )
                .input_schema(schema),
            );
        }
        if let Some(n) = self.blob {
            // Bytes of every value, so that base64 has no shortcut.
            let bytes: Vec<u8> = (0..n).map(|i| (i * 131 % 251) as u8).collect();
            content = content.with_resource(FakeResource::new(
                "fake://blob/large",
                "large",
                "application/octet-stream",
                ResourceBody::Blob(bytes),
            ));
        }
        if let Some(n) = self.text {
            let result = serde_json::json!({"content": [{"type": "text", "text": "x".repeat(n)}]});
            content = content.with_tool(FakeTool::new(
                "big_text",
                "Returns a large text.",
                ToolBehavior::Fixed(result),
            ));
        }
        content
    }
}

fn number(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a number"))
}

fn knob(text: &str) -> Result<Knob, String> {
    let (name, arg) = match text.split_once('=') {
        Some((n, a)) => (n, Some(a)),
        None => (text, None),
    };
    let methods = || arg.map_or(Methods::All, Methods::parse);
    Ok(match name {
        "exit-on-unknown-before-init" => Knob::ExitOnRequestBeforeInitialize,
        "fix-era-at-first-message" => Knob::FixEraAtFirstMessage,
        "unsolicited-after-initialized" => Knob::UnsolicitedAfterInitialized,
        "progress-after-cancel" => Knob::ProgressAfterCancel,
        "never-read-stdin" => Knob::NeverReadInput,
        "never-answer" => Knob::NeverAnswer(methods()),
        "answer-twice" => Knob::AnswerTwice(methods()),
        "wrong-id" => Knob::AnswerWithWrongId(methods()),
        "answer-late" => {
            let arg = arg.ok_or("answer-late needs =MS[:METHOD]")?;
            let (ms, method) = match arg.split_once(':') {
                Some((ms, m)) => (ms, Methods::parse(m)),
                None => (arg, Methods::All),
            };
            Knob::AnswerLate(method, Duration::from_millis(number(ms)?))
        }
        other => return Err(format!("unknown knob {other:?}")),
    })
}
