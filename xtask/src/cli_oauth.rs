//! The OAuth rows: `mcp --url URL login` at a real authorization server,
//! oidc-provider (`xtask/interop/oauth/authorization_server.mjs`), in front
//! of the Python SDK's server checking every token by introspection
//! (`xtask/interop/oauth/resource_server.py`); the login and consent pages
//! are filled in by `browser.mjs` from the URL the CLI prints.
//!
//! Twice: against a resource that knows only `Bearer` (as the SDK's bearer
//! middleware does), and against one that advertises DPoP in its metadata
//! (`dpop_signing_alg_values_supported: ["ES256"]`) and checks proofs. The
//! authorization server leaves DPoP at its default (advertised) both times;
//! `XTASK_INTEROP_AS_DPOP=off` turns it off there, to compare.
//!
//! Rows, each through the CLI as a user runs it, one process per command:
//! `login`; a `call`; a call once the access token `expired` (a refresh,
//! the refresh token rotated); an `outage` of the token endpoint when the
//! token is due (that call fails, the login stays, the next call
//! refreshes); `two-processes` refreshing the same login at once (both
//! work, and so does the login after); `logout`.
//!
//! Like the CLI checks over HTTP, the rows run in a network namespace whose
//! only network is loopback (see [`crate::interop::offline_command`]).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::Result;
use crate::interop::serve::{Served, free_port, serve_command};
use crate::interop::{Installed, Paths, ms, output_within, read};

/// How long an access token lives at the authorization server, in seconds
/// (`XTASK_INTEROP_AT_TTL` overrides): short, for the rows to see it expire.
const ACCESS_TOKEN_TTL: u64 = 6;
/// The limit on each CLI command.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);
/// The resource server's introspection secret (loopback only, per run).
const RESOURCE_SECRET: &str = "interop-resource-secret";

/// The parent's side: runs `interop-oauth` without network.
pub(crate) fn run(installed: &Installed) -> Result {
    let mcp = crate::interop::target_dir()?.join("debug").join("mcp");
    eprintln!(
        "\n==> interop: `mcp login` at oidc-provider {} in front of the Python SDK's server (no network but loopback)",
        crate::interop::OIDC_PROVIDER_VERSION
    );
    let me = crate::interop::copy_of_self("oauth")?;
    let _cleanup = crate::interop::RemoveOnDrop(me.clone());
    let status = crate::interop::offline_command(&me)
        .arg("interop-oauth")
        .arg("--mcp")
        .arg(&mcp)
        .arg("--node")
        .arg(&installed.node)
        .arg("--python")
        .arg(&installed.python)
        .status()
        .map_err(|e| format!("could not start the OAuth rows: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("interop OAuth row(s) failed ({status})"))
    }
}

/// `cargo xtask interop-oauth --mcp MCP --node NODE --python PYTHON`: the
/// servers, and the rows against them, in this process's network.
pub(crate) fn serve_and_check(args: &[String]) -> Result {
    let value = |name: &str| -> Result<PathBuf> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
            .ok_or_else(|| format!("interop-oauth needs {name}"))
    };
    let tools = Tools {
        mcp: value("--mcp")?,
        node: value("--node")?,
        python: value("--python")?,
        paths: Paths::new(),
    };
    let ttl = std::env::var("XTASK_INTEROP_AT_TTL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ACCESS_TOKEN_TTL);
    let as_dpop = std::env::var("XTASK_INTEROP_AS_DPOP").map_or(true, |v| v != "off");
    let started = Instant::now();
    let mut rows = Vec::new();
    for resource in [Resource::Bearer, Resource::Dpop] {
        rows.extend(run_rows(&tools, resource, ttl, as_dpop));
    }
    let failures = rows.iter().filter(|r| r.outcome.is_err()).count();
    println!(
        "\nOAuth through `mcp login`: oidc-provider {} (DPoP {}), the Python SDK's server checking each token by introspection; access tokens live {ttl} s:\n",
        crate::interop::OIDC_PROVIDER_VERSION,
        if as_dpop {
            "at its default: advertised"
        } else {
            "off"
        }
    );
    println!("| resource | row           | result      | detail |");
    println!("|----------|---------------|-------------|--------|");
    for row in &rows {
        let (result, detail) = match &row.outcome {
            Ok(detail) => (format!("ok {}", ms(row.took)), detail.clone()),
            Err(why) => (format!("FAIL {}", ms(row.took)), short(why)),
        };
        println!(
            "| {:<8} | {:<13} | {:<11} | {} |",
            row.resource.name(),
            row.name,
            result,
            detail.replace('\n', " ").replace('|', "/")
        );
    }
    println!(
        "\n{} OAuth rows in {}, {failures} failed",
        rows.len(),
        ms(started.elapsed())
    );
    if failures > 0 {
        Err(format!("{failures} OAuth row(s) failed"))
    } else {
        Ok(())
    }
}

struct Tools {
    mcp: PathBuf,
    node: PathBuf,
    python: PathBuf,
    paths: Paths,
}

/// The two resource servers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resource {
    /// Knows only `Bearer`, as the SDK's middleware does.
    Bearer,
    /// Says in its metadata that it accepts DPoP-bound tokens, and checks
    /// their proofs.
    Dpop,
}

impl Resource {
    fn name(self) -> &'static str {
        match self {
            Resource::Bearer => "bearer",
            Resource::Dpop => "dpop",
        }
    }
}

struct Row {
    resource: Resource,
    name: &'static str,
    took: Duration,
    outcome: Result<String>,
}

/// One run: an authorization server and a resource server of their own, a
/// token store of its own, the rows in order (after a failed login, none).
fn run_rows(tools: &Tools, resource: Resource, ttl: u64, as_dpop: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row = |name: &'static str, run: &mut dyn FnMut() -> Result<String>| {
        let start = Instant::now();
        let outcome = run();
        if let Err(e) = &outcome {
            eprintln!("    FAIL {} × {name}: {e}", resource.name());
        }
        rows.push(Row {
            resource,
            name,
            took: start.elapsed(),
            outcome,
        });
    };
    let world = match World::start(tools, resource, ttl, as_dpop) {
        Ok(world) => world,
        Err(e) => {
            row("servers", &mut || Err(e.clone()));
            return rows;
        }
    };
    row("login", &mut || world.login());
    // A login that stored tokens is tried further even if its row failed
    // (tokens of the wrong kind): the rows show what a user then meets.
    if !matches!(world.stored(), Ok(Some(_))) {
        return rows;
    }
    row("call", &mut || world.call_ok("a call"));
    row("expired", &mut || world.expired());
    row("outage", &mut || world.outage());
    row("two-processes", &mut || world.two_processes());
    row("logout", &mut || world.logout());
    rows
}

/// The servers and files of one run.
struct World<'t> {
    tools: &'t Tools,
    resource: Resource,
    /// Whether the tokens must be DPoP-bound: the resource advertises DPoP
    /// and the authorization server has it on.
    bound: bool,
    ttl: u64,
    url: String,
    dir: PathBuf,
    store: PathBuf,
    outage_file: PathBuf,
    /// While it exists, the token endpoint answers 1.5 s late.
    slow_file: PathBuf,
    as_log: PathBuf,
    rs_log: PathBuf,
    // Dropped (killed) with the world.
    _authorization_server: Served,
    _resource_server: Served,
}

impl Drop for World<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl<'t> World<'t> {
    fn start(tools: &'t Tools, resource: Resource, ttl: u64, as_dpop: bool) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!(
            "xtask-oauth-{}-{}",
            std::process::id(),
            resource.name()
        ));
        crate::interop::fresh_dir(&dir)?;
        let (as_port, rs_port) = (free_port()?, free_port()?);
        let issuer = format!("http://127.0.0.1:{as_port}");
        let url = format!("http://127.0.0.1:{rs_port}/mcp");
        let as_log = dir.join("authorization-server.log");
        let rs_log = dir.join("resource-server.log");
        let outage_file = dir.join("outage");
        let slow_file = dir.join("slow");

        let mut node = Command::new(&tools.node);
        node.arg(tools.paths.oauth_sources().join("authorization_server.mjs"))
            .env("OIDC_MODULES", tools.paths.oauth_modules())
            .env("PORT", as_port.to_string())
            .env("MCP_RESOURCE", &url)
            .env("RESOURCE_SECRET", RESOURCE_SECRET)
            .env("AT_TTL", ttl.to_string())
            .env("AS_DPOP", if as_dpop { "default" } else { "off" })
            .env("OUTAGE_FILE", &outage_file)
            .env("SLOW_FILE", &slow_file)
            .env("AS_LOG", &as_log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file(&dir.join("authorization-server.stderr"))?);
        let authorization_server = serve_command(node, as_port, "")?;

        let mut python = Command::new(&tools.python);
        python
            .arg(tools.paths.oauth_sources().join("resource_server.py"))
            .arg(rs_port.to_string())
            .args(["--issuer", &issuer, "--secret", RESOURCE_SECRET])
            .args(if resource == Resource::Dpop {
                &["--dpop"][..]
            } else {
                &[]
            })
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file(&rs_log)?);
        let resource_server = serve_command(python, rs_port, "/mcp")?;
        eprintln!(
            "    {} resource at {url} after {}, authorization server at {issuer} after {}",
            resource.name(),
            ms(resource_server.started_in),
            ms(authorization_server.started_in)
        );
        Ok(World {
            tools,
            resource,
            bound: resource == Resource::Dpop && as_dpop,
            ttl,
            url,
            store: dir.join("tokens.json"),
            dir,
            outage_file,
            slow_file,
            as_log,
            rs_log,
            _authorization_server: authorization_server,
            _resource_server: resource_server,
        })
    }

    /// `mcp --url URL ARGS…` with this run's token store.
    fn mcp(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.tools.mcp);
        command
            .arg("--url")
            .arg(&self.url)
            .args(args)
            .env("MCP_TOKEN_STORE", &self.store)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// `mcp login`, the pages filled in by `browser.mjs` from the URL the
    /// CLI prints on stderr.
    fn login(&self) -> Result<String> {
        let mut child = self
            .mcp(&["login"])
            .spawn()
            .map_err(|e| format!("could not start mcp login: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let (lines, seen) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut said = Vec::new();
        let deadline = Instant::now() + COMMAND_LIMIT;
        let authorization_url = loop {
            match seen.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.starts_with("http") => break line,
                Ok(line) => said.push(line),
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "mcp login printed no authorization URL: {}",
                        said.join(" / ")
                    ));
                }
            }
        };
        let mut browser = Command::new(&self.tools.node);
        browser
            .arg(self.tools.paths.oauth_sources().join("browser.mjs"))
            .arg(&authorization_url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let browsed = output_within(browser, COMMAND_LIMIT);
        let status = wait_within(&mut child, COMMAND_LIMIT);
        said.extend(seen.try_iter());
        let browsed = browsed?;
        if !browsed.status.success() {
            return Err(format!(
                "the browser script failed: {}",
                tail(&String::from_utf8_lossy(&browsed.stderr))
            ));
        }
        let status = status?;
        let said = said.join(" / ");
        if !status.success() || !said.contains("Logged in") {
            return Err(format!("mcp login: {status}: {}", tail(&said)));
        }
        let stored = self.stored()?.ok_or("mcp login stored no tokens")?;
        if stored.refresh.is_none() {
            return Err("no refresh token was issued".into());
        }
        if stored.bound != self.bound {
            return Err(format!(
                "the tokens are {} for a resource that {}",
                if stored.bound {
                    "DPoP-bound"
                } else {
                    "not bound"
                },
                match (self.resource, self.bound) {
                    (Resource::Bearer, _) => "knows only Bearer",
                    (Resource::Dpop, true) => "advertises DPoP",
                    (Resource::Dpop, false) =>
                        "advertises DPoP, with DPoP off at the authorization server",
                }
            ));
        }
        Ok(format!(
            "registered, pages filled in, tokens stored ({})",
            if stored.bound { "DPoP-bound" } else { "Bearer" }
        ))
    }

    /// What the resource's log says when it accepts the client's tokens.
    fn accepted(&self) -> &'static str {
        if self.bound {
            "accepted dpop"
        } else {
            "accepted bearer"
        }
    }

    /// A call that must work and reach the resource as the resource wants.
    fn call_ok(&self, what: &str) -> Result<String> {
        let before = self.count(&self.rs_log, self.accepted());
        let text = format!("{what} through OAuth");
        let output = output_within(
            self.mcp(&["tools", "call", "echo", &format!("text={text}")]),
            COMMAND_LIMIT,
        )?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || !stdout.contains(&text) {
            return Err(format!(
                "{what}: {}; stderr …{}",
                output.status,
                tail(&String::from_utf8_lossy(&output.stderr))
            ));
        }
        let accepted = self.count(&self.rs_log, self.accepted()) - before;
        if accepted == 0 {
            return Err(format!(
                "{what}: the resource logged no `{}`",
                self.accepted()
            ));
        }
        if self.bound && self.count(&self.rs_log, "accepted bearer") > 0 {
            return Err(format!(
                "{what}: a token went as Bearer to the DPoP resource"
            ));
        }
        Ok(format!(
            "echoed; {accepted} request(s) with `{}`",
            self.accepted()
        ))
    }

    /// Waits until the stored access token has expired at the authorization
    /// server (its refresh is due a tenth of its life earlier).
    fn wait_for_expiry(&self) -> Result<Stored> {
        let stored = self
            .stored()?
            .ok_or("no login to use (lost in an earlier row)")?;
        let refresh_at = stored.refresh_at.ok_or("no refresh time stored")?;
        let expired_at = refresh_at + self.ttl / 10 + 1;
        let now = unix_now();
        if expired_at > now {
            std::thread::sleep(Duration::from_secs(expired_at - now) + Duration::from_millis(500));
        }
        Ok(stored)
    }

    fn expired(&self) -> Result<String> {
        let before = self.wait_for_expiry()?;
        let refreshes = self.count(&self.as_log, "\"refresh_token\"");
        self.call_ok("a call once the token expired")?;
        let after = self.stored()?.ok_or("the login is gone")?;
        let refreshed = self.count(&self.as_log, "\"refresh_token\"") - refreshes;
        if after.access == before.access || refreshed == 0 {
            return Err("the call worked but no refresh happened".into());
        }
        if after.refresh == before.refresh {
            return Err("the refresh token was not rotated".into());
        }
        Ok(format!(
            "refreshed ({refreshed} refresh grant), refresh token rotated"
        ))
    }

    fn outage(&self) -> Result<String> {
        let before = self.wait_for_expiry()?;
        crate::interop::write(&self.outage_file, b"")?;
        let output = output_within(
            self.mcp(&["tools", "call", "echo", "text=during the outage"]),
            COMMAND_LIMIT,
        );
        let _ = std::fs::remove_file(&self.outage_file);
        let output = output?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let error = stderr
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_owned();
        if output.status.success() {
            return Err("the call worked while the token endpoint was down".into());
        }
        if self.count(&self.as_log, "\"outage\"") == 0 {
            return Err(format!(
                "the call failed without trying the token endpoint: {}",
                tail(&stderr)
            ));
        }
        // A clear error names what failed; the login is still there, so
        // it must not send the user to log in again.
        if !stderr.contains("503") || stderr.contains("login` first") {
            return Err(format!(
                "the error does not say the token endpoint failed (503), or asks for a new login: {}",
                tail(&stderr)
            ));
        }
        let kept = self.stored()?;
        if kept.as_ref().and_then(|s| s.refresh.as_ref()) != before.refresh.as_ref() {
            return Err(format!(
                "the failed refresh did not keep the login ({}); the CLI said: {}",
                if kept.is_some() {
                    "other tokens stored"
                } else {
                    "nothing stored"
                },
                tail(&stderr)
            ));
        }
        self.call_ok("the call after the outage")?;
        Ok(format!(
            "failed with `{}`; login kept; the next call refreshed",
            error.trim()
        ))
    }

    fn two_processes(&self) -> Result<String> {
        // This row tests its own thing even when an earlier row lost the
        // login (that row failed already).
        let fresh = if self.stored()?.is_none() {
            self.login()?;
            "after a fresh login: "
        } else {
            ""
        };
        self.wait_for_expiry()?;
        let refreshes = self.count(&self.as_log, "\"refresh_token\"");
        let spawn = |n: usize| {
            let mut command = self.mcp(&[
                "tools",
                "call",
                "echo",
                &format!("text=process {n} at once"),
            ]);
            command.spawn()
        };
        // A slow token endpoint makes the two refreshes overlap: without a
        // lock shared by the processes, both would spend the one rotating
        // refresh token, and the reuse would revoke the grant.
        crate::interop::write(&self.slow_file, b"")?;
        let children = [spawn(1), spawn(2)];
        let mut failures = Vec::new();
        for (n, child) in children.into_iter().enumerate() {
            let mut child = child.map_err(|e| format!("could not start mcp: {e}"))?;
            let stderr = child.stderr.take();
            let status = wait_within(&mut child, COMMAND_LIMIT);
            let status = match status {
                Ok(status) => status,
                Err(e) => {
                    let _ = std::fs::remove_file(&self.slow_file);
                    return Err(e);
                }
            };
            if !status.success() {
                let mut said = String::new();
                if let Some(mut s) = stderr {
                    use std::io::Read;
                    let _ = s.read_to_string(&mut said);
                }
                failures.push(format!("process {}: {status}: {}", n + 1, tail(&said)));
            }
        }
        let _ = std::fs::remove_file(&self.slow_file);
        let refreshed = self.count(&self.as_log, "\"refresh_token\"") - refreshes;
        let refused = self.count(&self.as_log, "grant.error");
        if !failures.is_empty() {
            return Err(format!(
                "{fresh}{} ({refreshed} refresh grant(s), {refused} refused so far)",
                failures.join("; ")
            ));
        }
        // One refreshed; the other took what it stored.
        if refreshed != 1 {
            return Err(format!(
                "{fresh}{refreshed} refresh grants for one expired login (one expected: the other process takes the stored tokens)"
            ));
        }
        self.call_ok("a call after both")?;
        Ok(format!(
            "{fresh}both worked, and the login after ({refreshed} refresh grant(s))"
        ))
    }

    fn logout(&self) -> Result<String> {
        let output = output_within(self.mcp(&["logout"]), COMMAND_LIMIT)?;
        if !output.status.success() {
            return Err(format!("mcp logout: {}", output.status));
        }
        if self.stored()?.is_some() {
            return Err("tokens still stored after logout".into());
        }
        let output = output_within(
            self.mcp(&["tools", "call", "echo", "text=after logout"]),
            COMMAND_LIMIT,
        )?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() || !stderr.contains("login") {
            return Err(format!(
                "a call after logout: {}; stderr …{}",
                output.status,
                tail(&stderr)
            ));
        }
        Ok("tokens forgotten; the next call asks for `mcp login`".into())
    }

    /// What the token store holds for the resource.
    fn stored(&self) -> Result<Option<Stored>> {
        if !self.store.exists() {
            return Ok(None);
        }
        let bytes = read(&self.store)?;
        let all: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the token store is not JSON: {e}"))?;
        let Some(entry) = all.get(&self.url) else {
            return Ok(None);
        };
        let text = |k: &str| entry.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        Ok(Some(Stored {
            access: text("access_token").ok_or("a stored login without an access token")?,
            refresh: text("refresh_token"),
            refresh_at: entry.get("refresh_at").and_then(serde_json::Value::as_u64),
            bound: entry
                .get("dpop_bound")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }))
    }

    /// Lines of a log containing `needle`.
    fn count(&self, log: &Path, needle: &str) -> usize {
        std::fs::read_to_string(log)
            .map(|s| s.lines().filter(|l| l.contains(needle)).count())
            .unwrap_or(0)
    }
}

/// One stored login, as far as the rows look.
struct Stored {
    access: String,
    refresh: Option<String>,
    refresh_at: Option<u64>,
    bound: bool,
}

fn log_file(path: &Path) -> Result<std::fs::File> {
    std::fs::File::create(path).map_err(|e| format!("creating {}: {e}", path.display()))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Waits for `child`, killing it after `limit`.
fn wait_within(
    child: &mut std::process::Child,
    limit: Duration,
) -> Result<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no exit within {limit:?}; killed"));
            }
            Err(e) => return Err(format!("waiting: {e}")),
        }
    }
}

/// A failure's first 240 characters, for the table (the whole of it went
/// to stderr).
fn short(why: &str) -> String {
    if why.chars().count() > 240 {
        format!("{}…", why.chars().take(240).collect::<String>())
    } else {
        why.to_owned()
    }
}

/// The end of some output, on one line.
fn tail(text: &str) -> String {
    let flat: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let joined = flat.join(" / ");
    let chars: Vec<char> = joined.chars().collect();
    let from = chars.len().saturating_sub(400);
    chars[from..].iter().collect()
}
