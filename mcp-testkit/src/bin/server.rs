//! `mcp-testkit-server`: the fake MCP server over stdio, its era, versions
//! and misbehaviours chosen by flags. Run with `--help` for them.

use std::process::ExitCode;
use std::time::Duration;

use mcp_testkit::fake::{
    CacheScope, DiscoverAnswer, EraChoice, FakeConfig, Knob, Methods, serve_stdio,
};

const HELP: &str = "\
mcp-testkit-server: a fake MCP server speaking newline-delimited JSON-RPC on stdio

USAGE: mcp-testkit-server [FLAGS]

  --era legacy|modern|dual      which era it speaks (default: dual)
  --versions V1,V2,...          the revisions it accepts, of either era
                                (default: 2026-07-28 and 2025-11-25 ... 2024-11-05)
  --page-size N                 page list results by N items (default: no paging)
  --ttl-ms N                    ttlMs of modern cacheable results (default: 60000)
  --cache-scope public|private  cacheScope of modern cacheable results (default: public)
  --discover-answer A           how a legacy connection answers server/discover:
                                -32601 (default), -32602, -32000 or silent
  --never-read-stdin            never read stdin at all
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

Default content: tools echo, structured, fail, slow, elicit, sample, roots, mrtr_multi,
add_tool, touch_resource, log; resources fake://text/hello, fake://blob/bytes,
fake://json/config, fake://counter; template fake://items/{id}; prompts greeting, simple.
";

fn main() -> ExitCode {
    let config = match parse(std::env::args().skip(1)) {
        Ok(Some(config)) => config,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("mcp-testkit-server: {e}\n\n{HELP}");
            return ExitCode::from(2);
        }
    };
    match serve_stdio(config) {
        Ok(ending) => {
            if let mcp_testkit::fake::Ending::Exited { stderr, .. } = &ending {
                eprint!("{stderr}");
            }
            ExitCode::from(u8::try_from(ending.code()).unwrap_or(1))
        }
        Err(e) => {
            eprintln!("mcp-testkit-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The configuration the flags ask for; `None` for `--help`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<FakeConfig>, String> {
    let mut era = EraChoice::Dual;
    let mut versions: Option<Vec<String>> = None;
    let mut page_size = None;
    let mut ttl_ms = 60_000;
    let mut scope = CacheScope::Public;
    let mut knobs = Vec::new();
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
            "--knob" => knobs.push(knob(&value("a knob")?)?),
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
    Ok(Some(knobs.into_iter().fold(config, FakeConfig::knob)))
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
