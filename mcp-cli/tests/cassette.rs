//! `mcp --record FILE` against real servers, replayed through the library
//! with no server: the same results; a changed request fails with a diff;
//! over HTTP with a bearer token, the token never lands in the file.
//!
//! The interop servers (server-everything on Node, the Python SDK server)
//! come from `.cache/interop`, which `cargo xtask interop` installs; a test
//! whose server is missing says so and passes, unless
//! `MCP_CASSETTE_REQUIRE_SERVERS` is set (`cargo xtask interop` sets it,
//! and `MCP_INTEROP_NODE`, the Node it installed or found).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::handlers::elicitation_fn;
use mcp_client::protocol::types::{ElicitRequestParams, ElicitResult};
use mcp_client::{Client, ClientBuilder, EraMode};
use mcp_testkit::cassette::{Cassette, CassetteConnector, MatchRules};
use serde_json::{Map, Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const LIMIT: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cassette-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}

/// Runs the CLI with its output in files (no pipe to fill), killed after
/// [`LIMIT`].
fn mcp(args: &[&str]) -> Output {
    let out = scratch(&format!("out-{}", rand_suffix()));
    let err = out.with_extension("err");
    let mut child = Command::new(MCP)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("mcp runs");
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("mcp can be waited for") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcp {args:?} ran longer than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: std::fs::read(&out).unwrap_or_default(),
        stderr: std::fs::read(&err).unwrap_or_default(),
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

#[track_caller]
fn ok_json(o: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {LIMIT:?}"),
    }
}

/// The client the CLI builds, as a library user would write it: the same
/// name, era, and an elicitation answer when the CLI was given one.
fn like_the_cli(era: EraMode, elicit: Option<Value>) -> ClientBuilder {
    let mut builder = Client::builder()
        .client_info("mcp-cli", env!("CARGO_PKG_VERSION"))
        .era(era)
        .cache_capacity(0);
    if let Some(content) = elicit {
        let content: Map<String, Value> = content.as_object().cloned().unwrap_or_default();
        builder = builder.elicitation_handler(elicitation_fn(move |_: ElicitRequestParams| {
            let content = content.clone();
            async move { Ok(ElicitResult::accept(content)) }
        }));
    }
    builder
}

async fn replay(file: &Path, builder: ClientBuilder) -> (Client, Arc<CassetteConnector>) {
    let cassette = Cassette::load(file).unwrap_or_else(|e| panic!("{e}"));
    let connector = Arc::new(cassette.connector(MatchRules::default()));
    let client = bounded(
        "connect to the cassette",
        builder.connect(connector.clone()),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    (client, connector)
}

/// An interop server's command line, or why it is not there.
fn interop_server(name: &str) -> Result<Vec<String>, String> {
    let cache = root().join(".cache/interop");
    match name {
        "everything" => {
            let entry = cache
                .join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
            if !entry.exists() {
                return Err(format!(
                    "{} is missing (run `cargo xtask interop`)",
                    entry.display()
                ));
            }
            // The Node `cargo xtask interop` chose, else the one it installs,
            // else the machine's.
            let installed = cache.join("node/node_modules/node/bin/node");
            let node = match std::env::var_os("MCP_INTEROP_NODE") {
                Some(node) => PathBuf::from(node),
                None if installed.exists() => installed,
                None => PathBuf::from("node"),
            };
            match Command::new(&node).arg("--version").output() {
                Ok(o) if o.status.success() => {}
                _ => return Err(format!("Node ({}) does not run", node.display())),
            }
            Ok(vec![
                node.display().to_string(),
                entry.display().to_string(),
                "stdio".into(),
            ])
        }
        _ => {
            let python = cache.join("venv/bin/python");
            let script = root().join("xtask/interop/python_server.py");
            if !python.exists() {
                return Err(format!(
                    "{} is missing (run `cargo xtask interop`)",
                    python.display()
                ));
            }
            Ok(vec![
                python.display().to_string(),
                script.display().to_string(),
            ])
        }
    }
}

/// Records one CLI call of a tool, then replays the same call through the
/// library: the same result, and nothing of the cassette left unused.
/// (Arguments go as `--args JSON`, so the CLI lists no tools to type them.)
async fn record_and_replay(
    server: &str,
    era: (&str, EraMode),
    tool: &str,
    arguments: Value,
    elicit: Option<Value>,
) -> Option<PathBuf> {
    let program = match interop_server(server) {
        Ok(p) => p,
        Err(why) if std::env::var_os("MCP_CASSETTE_REQUIRE_SERVERS").is_some() => {
            panic!("{why}, and MCP_CASSETTE_REQUIRE_SERVERS is set")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    let file = scratch(&format!("{server}-{}-{tool}.jsonl", era.0));
    let file_arg = file.display().to_string();
    let args_arg = arguments.to_string();
    let elicit_arg = elicit.as_ref().map(Value::to_string);
    let mut args = vec![
        "--record",
        &file_arg,
        "--era",
        era.0,
        "--json",
        "--timeout",
        "30",
    ];
    if let Some(e) = &elicit_arg {
        args.extend(["--elicit-json", e.as_str()]);
    }
    args.extend(["tools", "call", tool, "--args", &args_arg, "--"]);
    args.extend(program.iter().map(String::as_str));
    let took = Instant::now();
    let recorded = ok_json(&mcp(&args));
    let recording_took = took.elapsed();

    let took = Instant::now();
    let (client, connector) = replay(&file, like_the_cli(era.1, elicit)).await;
    let result = bounded(tool, client.call_tool(tool, arguments))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    bounded("close", client.close()).await;
    let replay_took = took.elapsed();
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        recorded,
        "the same result"
    );
    if let Err(e) = bounded("finish", connector.finish()).await {
        panic!("{e}");
    }
    eprintln!(
        "{server} {} {tool}: recorded in {recording_took:?}, replayed in {replay_took:?}, {} bytes",
        era.0,
        std::fs::metadata(&file)
            .map(|m| m.len())
            .unwrap_or_default()
    );
    Some(file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_recorded_through_the_cli_replays_and_a_changed_call_fails_with_a_diff() {
    let Some(file) = record_and_replay(
        "everything",
        ("auto", EraMode::Auto),
        "echo",
        json!({"message": "hi"}),
        None,
    )
    .await
    else {
        return;
    };
    let cassette = Cassette::load(&file).unwrap();
    assert_eq!(
        cassette.era(),
        Some("legacy"),
        "server-everything is legacy"
    );
    assert!(cassette.verdict().is_some(), "the verdict is in the header");

    // The same session with a changed call: a readable diff.
    let (client, connector) = replay(&file, like_the_cli(EraMode::Auto, None)).await;
    let error = bounded("echo", client.call_tool("echo", json!({"message": "bye"})))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(r#"/arguments/message: recorded "hi", sent "bye""#),
        "{error}"
    );
    let report = bounded("finish", connector.finish())
        .await
        .unwrap_err()
        .to_string();
    assert!(report.contains("tools/call"), "{report}");
    eprintln!("the diff a changed call gets:\n{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_server_replays_progress_in_modern_and_elicitation_in_legacy() {
    // Modern (2026-07-28): progress notifications for the client's token.
    if record_and_replay(
        "python",
        ("modern", EraMode::Modern),
        "count",
        json!({"steps": 3}),
        None,
    )
    .await
    .is_none()
    {
        return;
    }
    // Legacy: the server's elicitation/create and the client's answer.
    let file = record_and_replay(
        "python",
        ("legacy", EraMode::Legacy),
        "greet",
        json!({}),
        Some(json!({"name": "Ada"})),
    )
    .await
    .expect("the server was there a moment ago");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("elicitation/create"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_over_http_never_lands_in_the_file() {
    use mcp_reference_server::FakeConfig;
    use mcp_reference_server::http::HttpFake;

    const TOKEN: &str = "tok-3f9a1c77e2b54d08";
    let fake = HttpFake::start(FakeConfig::dual()).await.unwrap();
    let file = scratch("http-bearer.jsonl");
    let file_arg = file.display().to_string();
    let url = fake.url();
    let header = format!("Authorization: Bearer {TOKEN}");
    let args: Vec<String> = [
        "--url",
        &url,
        "--header",
        &header,
        "--header",
        "X-Tenant: acme-tenant-7",
        "--redact",
        "X-Tenant",
        "--record",
        &file_arg,
        "--json",
        "tools",
        "call",
        "echo",
        "text=over HTTP",
    ]
    .map(str::to_owned)
    .to_vec();
    let o = tokio::task::spawn_blocking(move || {
        mcp(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    let recorded = ok_json(&o);

    // The server did get the token…
    let requests = fake.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.header("authorization") == Some(&format!("Bearer {TOKEN}"))),
        "the token reached the server"
    );
    // …and the file does not have it, nor the other named secret.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(TOKEN), "the token is in the file:\n{text}");
    assert!(
        !text.contains("acme-tenant-7"),
        "a redacted header is in the file"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["headers"]["Authorization"], "[REDACTED]",
        "{}",
        lines[0]
    );
    let http: Vec<&Value> = lines.iter().filter_map(|l| l.get("http")).collect();
    assert!(!http.is_empty(), "the HTTP requests are recorded");
    for request in &http {
        assert_eq!(
            request["headers"]["authorization"], "[REDACTED]",
            "{request}"
        );
    }
    assert!(
        http.iter()
            .any(|r| r["headers"].get("mcp-protocol-version").is_some()),
        "the transport's own headers are recorded too"
    );

    // The recording replays without the server.
    let era = match Cassette::load(&file).unwrap().era() {
        Some("legacy") => EraMode::Legacy,
        _ => EraMode::Auto,
    };
    let (client, connector) = replay(&file, like_the_cli(era, None)).await;
    let result = bounded(
        "echo",
        client.call_tool("echo", json!({"text": "over HTTP"})),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(serde_json::to_value(&result).unwrap(), recorded);
    bounded("close", client.close()).await;
    let _ = connector;
}

/// Runs the CLI off the test's runtime.
async fn mcp_blocking(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || mcp(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_url_never_lands_in_the_file_which_is_private() {
    use mcp_reference_server::FakeConfig;
    use mcp_reference_server::http::HttpFake;

    const KEY: &str = "key-7d1e0b35c29a";
    let fake = HttpFake::start(FakeConfig::dual()).await.unwrap();
    let file = scratch("url-key.jsonl");
    let _ = std::fs::remove_file(&file);
    let url = format!("{}?api_key={KEY}&region=eu-west-9", fake.url());
    let args = [
        "--url",
        &url,
        "--keep-query",
        "region",
        "--record",
        &file.display().to_string(),
        "--json",
        "tools",
        "call",
        "echo",
        &format!("text=the key is {KEY}"),
    ]
    .map(str::to_owned)
    .to_vec();
    ok_json(&mcp_blocking(args).await);
    assert!(
        fake.requests().iter().any(|r| r.uri.contains(KEY)),
        "the key reached the server"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(KEY), "the key is in the file:\n{text}");
    assert!(
        text.contains("api_key=[REDACTED]&region=eu-west-9"),
        "the kept parameter stays:\n{text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the recording is readable by others: {mode:o}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_from_the_servers_file_never_land_in_the_file() {
    const SECRET: &str = "env-secret-51f0c2aa";
    let config = scratch("secret-servers.json");
    let server = mcp_reference_server::binaries::server_path()
        .display()
        .to_string();
    let servers = json!({"mcpServers": {"s": {"command": server, "env": {"API_TOKEN": SECRET}}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let file = scratch("configured-secret.jsonl");
    let args = [
        "--config",
        &config.display().to_string(),
        "--server",
        "s",
        "--record",
        &file.display().to_string(),
        "--json",
        "tools",
        "call",
        "echo",
        // The server echoes it, as one might echo a header it was sent.
        &format!("text=got {SECRET}"),
    ]
    .map(str::to_owned)
    .to_vec();
    let result = ok_json(&mcp_blocking(args).await);
    assert!(result.to_string().contains(SECRET), "{result}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains(SECRET),
        "a configured secret is in the file:\n{text}"
    );
}
