//! `--record FILE`: the whole exchange as a cassette.

use std::path::Path;

use mcp_client::Client;
use mcp_client::transport::record::Recorder;

use crate::args::Cli;
use crate::exit::{Failure, Outcome};

/// The recorder `--record` asks for, with the names `--redact` adds.
pub(crate) fn recorder(cli: &Cli) -> Outcome<Option<Recorder>> {
    let Some(path) = &cli.server.record else {
        if !cli.server.redact.is_empty() {
            return Err(Failure::usage("--redact needs --record"));
        }
        if !cli.server.keep_query.is_empty() {
            return Err(Failure::usage("--keep-query needs --record"));
        }
        return Ok(None);
    };
    let recorder = Recorder::create(path)
        .map_err(|e| Failure::usage(format!("--record {}: {e}", path.display())))?;
    for name in &cli.server.redact {
        recorder.redact_header(name);
        recorder.redact_field(name);
    }
    for name in &cli.server.keep_query {
        recorder.keep_query(name);
    }
    recorder.set_header("client", format!("mcp-cli {}", env!("CARGO_PKG_VERSION")));
    Ok(Some(recorder))
}

/// Puts what the client learnt on connecting in the header line.
pub(crate) fn connected(recorder: &Recorder, client: &Client) {
    let verdict = client.verdict();
    recorder.set_header("era", serde_json::to_value(verdict.era).unwrap_or_default());
    recorder.set_header("protocolVersion", verdict.version.as_str());
    recorder.set_header(
        "verdict",
        serde_json::to_value(&verdict).unwrap_or_default(),
    );
}

/// Writes the final header; a recording that could not be written fails
/// the run (exit 2), after the command's own outcome is known.
pub(crate) fn finish(recorder: &Recorder, path: &Path, outcome: Outcome) -> Outcome {
    let written = recorder.finish();
    match (outcome, written) {
        (Ok(()), Err(e)) => Err(Failure::usage(format!("--record {}: {e}", path.display()))),
        (outcome, _) => outcome,
    }
}
