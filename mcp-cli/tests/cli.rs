//! The `mcp` binary driven as a script would: output, JSON and exit codes,
//! against the embedded server and the reference server binary over stdio.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::HttpServer;
use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn server() -> String {
    mcp_reference_server::binaries::server_path()
        .to_string_lossy()
        .into_owned()
}

fn mcp(args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("mcp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

/// Asserts the exit code, showing the output when it is not.
#[track_caller]
fn assert_code(o: &Output, expected: i32) {
    assert_eq!(
        code(o),
        expected,
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\nstderr:\n{}", stdout(o), stderr(o)))
}

#[test]
fn inspect_with_no_server_shows_the_embedded_server() {
    let o = mcp(&["inspect"]);
    assert_code(&o, 0);
    let text = stdout(&o);
    for expected in [
        "mcp-testkit-fake",
        "modern",
        "Tools (11)",
        "echo",
        "slow",
        "fake://text/hello",
        "fake://items/{id}",
        "greeting",
        "Instructions",
    ] {
        assert!(text.contains(expected), "{expected:?} missing in:\n{text}");
    }
    // No command at all means inspect.
    assert_eq!(stdout(&mcp(&[])), text);
}

#[test]
fn inspect_json_has_the_verdict_and_every_list() {
    let o = mcp(&["--json", "inspect"]);
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["verdict"]["era"], "modern");
    assert_eq!(v["tools"].as_array().unwrap().len(), 11);
    assert_eq!(v["resources"].as_array().unwrap().len(), 4);
    assert_eq!(
        v["resourceTemplates"][0]["uriTemplate"],
        "fake://items/{id}"
    );
    assert_eq!(v["prompts"].as_array().unwrap().len(), 2);
}

#[test]
fn json_tool_call_on_the_embedded_server_parses() {
    let o = mcp(&["--json", "tools", "call", "echo", "text=hello"]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["content"][0]["text"], "hello");
}

#[test]
fn arguments_are_typed_by_the_input_schema() {
    let o = mcp(&["tools", "call", "structured", "a=2", "b=3", "--json"]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["structuredContent"]["sum"], 5.0);
    // --args gives a base object; k=v pairs go on top.
    let o = mcp(&[
        "--json",
        "tools",
        "call",
        "structured",
        "--args",
        r#"{"a": 10, "b": 1}"#,
        "b=4",
    ]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["structuredContent"]["product"], 40.0);
}

#[test]
fn an_argument_of_the_wrong_type_is_a_usage_error() {
    let o = mcp(&["tools", "call", "structured", "a=two", "b=3"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("argument a: expected number"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_tool_error_is_a_result_not_a_failure() {
    let o = mcp(&["tools", "call", "fail"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("isError"), "{}", stdout(&o));
    let o = mcp(&["--json", "tools", "call", "fail"]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["isError"], true);
}

#[test]
fn a_command_that_does_not_exist_is_a_usage_error() {
    let o = mcp(&["frobnicate"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("unrecognized subcommand"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_tool_that_does_not_exist_is_a_server_error() {
    let o = mcp(&["tools", "call", "no_such_tool"]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.starts_with("mcp: error: "), "{err}");
    assert!(err.contains("no_such_tool"), "{err}");
}

#[test]
fn a_server_that_exits_at_once_is_a_connection_error() {
    let o = mcp(&["ping", "--", "false"]);
    assert_code(&o, 3);
    assert!(stderr(&o).contains("could not connect"), "{}", stderr(&o));
    let o = mcp(&["--stdio", "/no/such/program", "ping"]);
    assert_code(&o, 3);
    assert!(stderr(&o).contains("/no/such/program"), "{}", stderr(&o));
}

#[test]
fn a_slow_tool_past_the_timeout_is_a_timeout() {
    // After the server binary is found (the first test to ask may build it).
    let server = server();
    let started = Instant::now();
    let o = mcp(&[
        "--timeout",
        "1",
        "tools",
        "call",
        "slow",
        "steps=1",
        "delayMs=30000",
        "--",
        &server,
    ]);
    assert_code(&o, 4);
    assert!(
        stderr(&o).contains("no answer to tools/call"),
        "{}",
        stderr(&o)
    );
    // The timeout is 1 s and the answer would come after 30 s: 15 s leaves
    // 14 s for starting two processes on a busy machine and still tells a
    // timeout from a wait for the answer.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn stdio_servers_of_every_era_list_and_call() {
    let server = server();
    for era in ["legacy", "modern", "dual"] {
        let line = format!("'{server}' --era {era}");
        let o = mcp(&["--stdio", &line, "--json", "tools", "list"]);
        assert_code(&o, 0);
        let names: Vec<String> = json(&o)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert!(names.iter().any(|n| n == "echo"), "{era}: {names:?}");

        let o = mcp(&[
            "--json", "tools", "call", "echo", "text=hi", "--", &server, "--era", era,
        ]);
        assert_code(&o, 0);
        assert_eq!(json(&o)["content"][0]["text"], "hi", "{era}");
    }
}

#[test]
fn era_and_version_can_be_pinned() {
    let server = server();
    let o = mcp(&["--era", "legacy", "--json", "inspect", "--", &server]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["verdict"]["era"], "legacy");
    let o = mcp(&[
        "--protocol-version",
        "2025-06-18",
        "--json",
        "inspect",
        "--",
        &server,
    ]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["verdict"]["version"], "2025-06-18");
    let o = mcp(&["--protocol-version", "1999-01-01", "ping"]);
    assert_code(&o, 2);
}

#[test]
fn resources_list_templates_and_read() {
    let o = mcp(&["resources", "list"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("fake://json/config"));
    let o = mcp(&["resources", "templates", "--json"]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["resourceTemplates"][0]["name"], "item");
    let o = mcp(&["resources", "read", "fake://text/hello"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "Hello from the fake MCP server.\n");
    // A blob is written decoded into a pipe.
    let o = mcp(&["resources", "read", "fake://blob/bytes"]);
    assert_code(&o, 0);
    assert_eq!(o.stdout, [0x00, 0x01, 0x02, 0xfe, 0xff]);
    let o = mcp(&["--json", "resources", "read", "fake://blob/bytes"]);
    assert_eq!(json(&o)["contents"][0]["blob"], "AAEC/v8=");
}

#[test]
fn skills_list_get_and_read_verified() {
    let server = server();
    for era in ["legacy", "modern"] {
        let skills = ["--", server.as_str(), "--era", era, "--skills"];
        let run = |args: &[&str]| mcp(&[args, &skills[..]].concat());
        let o = run(&["--json", "skills", "list"]);
        assert_code(&o, 0);
        let listed = json(&o)["skills"].clone();
        assert_eq!(listed[0]["uri"], "skill://pdf-processing/SKILL.md", "{era}");
        assert_eq!(listed[1]["frontmatter"]["name"], "refunds", "{era}");
        let o = run(&["skills", "list"]);
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains("skill://acme/billing/refunds/SKILL.md"),
            "{era}"
        );

        let o = run(&["skills", "get", "skill://pdf-processing/SKILL.md"]);
        assert_code(&o, 0);
        assert!(stdout(&o).contains("references/FORMS.md"), "{era}");
        assert!(stdout(&o).contains("sha256:"), "{era}");
        let o = run(&["skills", "get", "skill://nothing/SKILL.md"]);
        assert_code(&o, 1);

        let o = run(&["skills", "read", "skill://pdf-processing/SKILL.md"]);
        assert_code(&o, 0);
        assert!(
            stdout(&o).starts_with("---\nname: pdf-processing\n"),
            "{era}"
        );
        let o = run(&[
            "skills",
            "read",
            "skill://pdf-processing/SKILL.md",
            "references/FORMS.md",
        ]);
        assert_code(&o, 0);
        assert_eq!(stdout(&o), "# Forms\n\nEvery field, in order.\n", "{era}");
        let o = run(&[
            "--json",
            "skills",
            "read",
            "skill://pdf-processing/SKILL.md",
            "references/NOT-LISTED.md",
        ]);
        assert_code(&o, 1);
        assert!(stderr(&o).contains("not listed"), "{era}: {}", stderr(&o));
    }
    // A server without the extension says so.
    let o = mcp(&["skills", "list"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("Skills extension"), "{}", stderr(&o));
}

#[test]
fn prompts_list_and_get() {
    let o = mcp(&["prompts", "list"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("greeting"));
    let o = mcp(&["prompts", "get", "greeting", "name=Ada"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("Ada"), "{}", stdout(&o));
    let o = mcp(&["--json", "prompts", "get", "greeting", "name=Ada"]);
    assert_code(&o, 0);
    assert!(json(&o)["messages"].is_array());
}

#[test]
fn completions() {
    let o = mcp(&["complete", "prompt", "greeting", "name", "A"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("Alice"), "{}", stdout(&o));
    let o = mcp(&[
        "--json",
        "complete",
        "resource",
        "fake://items/{id}",
        "id",
        "4",
    ]);
    assert_code(&o, 0);
    assert_eq!(json(&o)["completion"]["values"][0], "42");
}

#[test]
fn ping_in_both_eras() {
    let o = mcp(&["ping"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("answered server/discover"),
        "{}",
        stdout(&o)
    );
    let server = server();
    let o = mcp(&["ping", "--", &server, "--era", "legacy"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("answered ping"), "{}", stdout(&o));
}

#[test]
fn the_cli_declares_only_what_it_can_do() {
    // Not a terminal on stdin and no --elicit-json: no elicitation.
    let o = mcp(&["tools", "call", "elicit"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("--elicit-json"), "{}", stderr(&o));

    let o = mcp(&[
        "--elicit-json",
        r#"{"name":"Bo"}"#,
        "--json",
        "tools",
        "call",
        "elicit",
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains(r#"\"name\":\"Bo\""#), "{}", stdout(&o));

    let o = mcp(&["tools", "call", "sample"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("--sampling-echo"), "{}", stderr(&o));
    let o = mcp(&["--sampling-echo", "tools", "call", "sample"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("echo: What is the capital"),
        "{}",
        stdout(&o)
    );

    // The `roots` tool answers with the roots it received.
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dirs = [base.join("cli-root-a"), base.join("cli-root-b")];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    let o = mcp(&[
        "--json",
        "--root",
        dirs[0].to_str().unwrap(),
        "--root",
        dirs[1].to_str().unwrap(),
        "tools",
        "call",
        "roots",
    ]);
    assert_code(&o, 0);
    let text = json(&o)["content"][0]["text"].as_str().unwrap().to_owned();
    let received: Value = serde_json::from_str(&text).unwrap();
    let expected: Vec<Value> = dirs
        .iter()
        .map(|d| {
            let d = d.canonicalize().unwrap();
            serde_json::json!({
                "name": d.file_name().unwrap().to_str().unwrap(),
                "uri": format!("file://{}", d.display()),
            })
        })
        .collect();
    assert_eq!(
        received["roots"]["roots"],
        Value::from(expected),
        "the roots the server received"
    );

    // A legacy server is asked the same way, through server requests.
    let server = server();
    let o = mcp(&[
        "--elicit-json",
        r#"{"action":"decline"}"#,
        "tools",
        "call",
        "elicit",
        "--",
        &server,
        "--era",
        "legacy",
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("decline"), "{}", stdout(&o));
}

#[test]
fn server_stderr_is_shown_only_with_verbose() {
    // This server dies on the era probe, saying why on stderr; the client
    // starts it again and speaks legacy.
    let server = server();
    let args = |v: bool| {
        let mut a = vec![];
        if v {
            a.push("-v");
        }
        a.extend([
            "ping",
            "--",
            &server,
            "--era",
            "legacy",
            "--knob",
            "exit-on-unknown-before-init",
        ]);
        a.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let quiet = Command::new(MCP).args(args(false)).output().unwrap();
    assert_code(&quiet, 0);
    assert!(
        !stderr(&quiet).contains("[mcp-reference-server]"),
        "{}",
        stderr(&quiet)
    );
    let loud = Command::new(MCP).args(args(true)).output().unwrap();
    assert_code(&loud, 0);
    assert!(
        stderr(&loud).contains("[mcp-reference-server] "),
        "{}",
        stderr(&loud)
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let o = mcp(&["--help"]);
    assert_code(&o, 0);
    let help = stdout(&o);
    for line in ["Exit codes:", "usage", "connection", "timeout", "130"] {
        assert!(help.contains(line), "{line:?} missing in:\n{help}");
    }
}

#[test]
fn url_and_header_reach_the_http_transport() {
    // The reference server in process, which records every request it
    // gets: the headers are seen where they must arrive.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(mcp_reference_server::http::HttpFake::start(
            mcp_reference_server::FakeConfig::default(),
        ))
        .unwrap();
    let url = server.url();
    let o = mcp(&[
        "--url",
        &url,
        "--header",
        "Authorization: Bearer t",
        "--header",
        "X-Probe: from the command line",
        "tools",
        "list",
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("echo"), "{}", stdout(&o));
    let posts: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(!posts.is_empty(), "no POST reached the server");
    for post in &posts {
        assert_eq!(
            post.header("x-probe"),
            Some("from the command line"),
            "{:?} {}",
            post.rpc_method(),
            post.uri
        );
        assert_eq!(post.header("authorization"), Some("Bearer t"));
    }
    // A header with no name, a header without a URL, and two servers are
    // usage errors.
    assert_code(&mcp(&["--url", &url, "--header", "no colon", "ping"]), 2);
    assert_code(&mcp(&["--header", "A: b", "ping"]), 2);
    assert_code(&mcp(&["--url", &url, "ping", "--", "server"]), 2);
}

#[test]
fn a_url_nobody_listens_on_is_a_connection_error() {
    // A port nobody listens on: the connect fails as a connection error,
    // naming the URL's trouble.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = mcp(&["--url", &url, "tools", "list"]);
    assert_code(&o, 3);
    assert!(stderr(&o).contains("could not connect"), "{}", stderr(&o));
}

#[test]
fn tools_list_and_call_over_http_against_the_reference_server_in_each_era() {
    for era in ["legacy", "modern"] {
        let server = HttpServer::start(era);
        let o = mcp(&["--url", &server.url, "tools", "list"]);
        assert_code(&o, 0);
        assert!(stdout(&o).contains("echo"), "{era}: {}", stdout(&o));
        let o = mcp(&[
            "--url",
            &server.url,
            "--json",
            "tools",
            "call",
            "echo",
            "text=over HTTP",
        ]);
        assert_code(&o, 0);
        assert!(
            json(&o).to_string().contains("over HTTP"),
            "{era}: {}",
            stdout(&o)
        );
    }
}

/// A servers file with the reference server in both eras, and one that
/// cannot start.
fn servers_file() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("mcp-cli-servers-{}.json", std::process::id()));
    let file = serde_json::json!({"mcpServers": {
        "old": {"command": server(), "args": ["--era", "legacy"]},
        "new": {"type": "stdio", "command": server(), "args": ["--era", "${MCP_TEST_ERA:-modern}"]},
        "gone": {"command": "/nonexistent/mcp-server"}
    }});
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

#[test]
fn servers_shows_every_server_of_a_file_with_its_status() {
    let file = servers_file();
    let o = mcp(&["servers", "--config", file.to_str().unwrap()]);
    assert_code(&o, 0);
    let text = stdout(&o);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} line:\n{text}"))
            .to_owned()
    };
    assert!(
        line("old").contains("ready") && line("old").contains("2025-11-25"),
        "{text}"
    );
    assert!(
        line("new").contains("ready") && line("new").contains("2026-07-28"),
        "{text}"
    );
    assert!(line("gone").contains("failed"), "{text}");

    let o = mcp(&["--json", "servers", "--config", file.to_str().unwrap()]);
    assert_code(&o, 0);
    let servers = json(&o);
    let new = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "new")
        .unwrap();
    assert_eq!(new["status"], "ready");
    assert!(new["tools"].as_u64().unwrap() > 5, "{new}");
    let _ = std::fs::remove_file(file);
}

#[test]
fn a_server_of_a_file_is_used_by_name() {
    let file = servers_file();
    let config = file.to_str().unwrap();
    let o = mcp(&[
        "--json",
        "--config",
        config,
        "--server",
        "new",
        "tools",
        "call",
        "echo",
        "text=from a file",
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("from a file"), "{}", stdout(&o));
    let o = mcp(&["--config", config, "--server", "nobody", "tools", "list"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("new"),
        "the known names are listed: {}",
        stderr(&o)
    );
    let _ = std::fs::remove_file(file);
}
