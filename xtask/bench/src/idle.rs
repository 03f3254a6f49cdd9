//! Many idle connections in one process: N clients connected over HTTP (one
//! connection pool shared by our clients, as an application would share
//! one per origin) or over stdio (N server processes), then left idle.
//! Measured in a child process of its own (`--mem-case
//! idle-TRANSPORT-WHO-ERA`): the client-side live heap and the tokio tasks
//! alive per connection, then one `tools/call echo` on each in turn.
//!
//! Tokio counts no armed timers on stable, so whether idle connections keep
//! one is found out from the clock: the case runs on a current-thread
//! runtime, and once the connections are idle its clock is paused for one
//! second of real time. A paused clock jumps straight to the next timer
//! whenever the runtime has nothing else to do, so it stays where it was
//! only if no timer is armed; how far it ran on is reported (`0 s` means none).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::bare::Era;
use crate::cases::{ClientKind, Conn, Target, our_http};
use crate::http::HttpServer;
use crate::memory::Heap;
use crate::report::{Idle, Report, Who};
use crate::{Result, Settings};

/// Runs every idle case, each in a child process.
pub async fn run(settings: &Settings, report: &mut Report) -> Result {
    let exe = std::env::current_exe()?;
    for transport in ["http", "stdio"] {
        for era in Era::BOTH {
            for who in crate::cases::clients() {
                let case = format!("idle-{transport}-{}-{}", who.name(), era.flag());
                let out = tokio::time::timeout(
                    Duration::from_secs(300),
                    tokio::process::Command::new(&exe)
                        .arg("--server")
                        .arg(&settings.server)
                        .args(if settings.quick {
                            &["--quick"][..]
                        } else {
                            &[][..]
                        })
                        .args(["--mem-case", &case])
                        .kill_on_drop(true)
                        .output(),
                )
                .await
                .map_err(|_| format!("idle case {case} took over 300 s"))??;
                if !out.status.success() {
                    report.notes.push(format!(
                        "idle {case}: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                    continue;
                }
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
                let f = |k: &str| v[k].as_f64().unwrap_or_default();
                report.idle.push(Idle {
                    transport: if transport == "http" { "HTTP" } else { "stdio" },
                    era,
                    who,
                    connections: f("connections") as usize,
                    heap_per_connection: f("heap_per_connection"),
                    tasks_per_connection: f("tasks_per_connection"),
                    connect_each: Duration::from_secs_f64(f("connect_each")),
                    call_median: Duration::from_secs_f64(f("call_median")),
                    clock_ran_on: Duration::from_secs_f64(f("clock_ran_on")),
                    big: v["big"].as_str().unwrap_or_default().to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Raises the soft open-file limit to the hard one: N stdio servers take
/// three pipes each, N HTTP clients a socket each.
fn raise_open_files() {
    // SAFETY: getrlimit/setrlimit read and write a plain struct we own.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// One case in this (child) process: `TRANSPORT-WHO-ERA`.
pub async fn child(settings: &Settings, case: &str) -> Result {
    raise_open_files();
    let mut parts = case.splitn(3, '-');
    let (transport, who, era) = (parts.next(), parts.next(), parts.next());
    let who = match who {
        Some("ours") => Who::Ours,
        Some("rmcp") => Who::Rmcp,
        _ => return Err(format!("bad idle case {case:?}").into()),
    };
    let era = match era {
        Some("legacy") => Era::Legacy,
        Some("modern") => Era::Modern,
        _ => return Err(format!("bad idle case {case:?}").into()),
    };
    let http = transport == Some("http");
    let n = if http {
        settings.idle_http
    } else {
        settings.idle_stdio
    };
    let server = if http {
        Some(HttpServer::start(&settings.server, era.flag(), &["--json"]).await?)
    } else {
        None
    };
    let url = server.as_ref().map(|s| s.url.clone()).unwrap_or_default();
    // One pool for all of our HTTP clients.
    let service = our_http(&url, None).http_service()?;
    let metrics = tokio::runtime::Handle::current().metrics();
    Heap::track();
    let heap = Heap::start();
    let tasks_before = metrics.num_alive_tasks();
    let big_before = crate::memory::big_allocations();
    let start = Instant::now();
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = ClientKind::pinned(who, era);
        let target = if http {
            Target::Http(&url, Some(&service))
        } else {
            Target::Stdio(&settings.server, era.flag(), &[])
        };
        conns.push(Conn::open(kind, target).await?);
    }
    let connect_each = start.elapsed() / n as u32;
    // Let whatever a connect leaves running settle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let live = heap.live().max(0) as f64;
    let tasks = metrics.num_alive_tasks().saturating_sub(tasks_before) as f64;
    // Where the heap went: blocks of 4 KiB and more that the connections
    // added, per connection.
    let big: Vec<String> = crate::memory::big_allocations()
        .into_iter()
        .map(|(size, count)| {
            let before = big_before
                .iter()
                .find(|(s, _)| *s == size)
                .map_or(0, |(_, c)| *c);
            (size, count - before)
        })
        // Fewer than one in a hundred connections is noise.
        .filter(|(_, added)| *added as f64 / n as f64 >= 0.01)
        .map(|(size, added)| {
            format!(
                "{:.2} × {}–{} KiB",
                added as f64 / n as f64,
                size / 1024,
                size * 2 / 1024
            )
        })
        .collect();
    let clock_ran_on = clock_while_idle().await;
    // The control: one timer, an hour out, must be seen.
    let control = tokio::spawn(tokio::time::sleep(Duration::from_secs(3600)));
    let control_ran_on = clock_while_idle().await;
    control.abort();
    if control_ran_on < Duration::from_secs(3600) {
        return Err(format!(
            "the paused clock ran on {control_ran_on:?} past a timer an hour out: \
             it cannot tell whether a timer is armed"
        )
        .into());
    }
    let mut times = Vec::with_capacity(n);
    for conn in &conns {
        let t = Instant::now();
        conn.caller().echo("hello").await?;
        times.push(t.elapsed());
    }
    times.sort();
    let call_median = times.get(times.len() / 2).copied().unwrap_or_default();
    for conn in conns {
        conn.close().await?;
    }
    println!(
        "{}",
        json!({
            "connections": n,
            "heap_per_connection": live / n as f64,
            "tasks_per_connection": tasks / n as f64,
            "connect_each": connect_each.as_secs_f64(),
            "call_median": call_median.as_secs_f64(),
            "clock_ran_on": clock_ran_on.as_secs_f64(),
            "big": big.join(", "),
        })
    );
    Ok(())
}

/// How far tokio's clock runs on, paused, over one second of real time in
/// which nothing but the idle connections is in the runtime: zero if none
/// of them has a timer armed, else at least the time to the nearest one
/// (which fires: the clock is resumed before anything else is done).
async fn clock_while_idle() -> Duration {
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::time::pause();
    let paused_at = tokio::time::Instant::now();
    // A thread outside the runtime wakes it: a `sleep` would be a timer.
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        let _ = tx.send(());
    });
    let _ = rx.await;
    let ran_on = paused_at.elapsed();
    tokio::time::resume();
    let _ = waker.join();
    ran_on
}
