//! The runner's command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::model::{Kind, Mode, Options, Target, Wire};

pub(crate) fn usage() -> &'static str {
    "usage: interop [--node NODE] [--everything NPM_PREFIX] [--python PYTHON --script python_server.py]\n\
     \x20              [--only python|everything]... [--mode legacy|modern|auto]...\n\
     \x20              [--wire stdio|http|http-stateless|sse]... [--url python|everything=URL]...\n\
     \x20              [--wire-log DIR]"
}

pub(crate) fn parse_args() -> Result<Options, String> {
    let mut node = OsString::from("node");
    let mut everything = None;
    let mut python = None;
    let mut script = None;
    let mut only = Vec::new();
    let mut modes = Vec::new();
    let mut wires = Vec::new();
    let mut urls = Vec::new();
    let mut wire_log = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--node" => node = value()?,
            "--everything" => everything = Some(PathBuf::from(value()?)),
            "--python" => python = Some(value()?),
            "--script" => script = Some(PathBuf::from(value()?)),
            "--wire-log" => wire_log = Some(PathBuf::from(value()?)),
            "--only" => only.push(value()?.to_string_lossy().into_owned()),
            "--mode" => {
                let v = value()?;
                let mode = Mode::ALL
                    .into_iter()
                    .find(|m| v.to_str() == Some(m.label()))
                    .ok_or_else(|| format!("unknown mode {v:?}"))?;
                modes.push(mode);
            }
            "--wire" => {
                let v = value()?;
                let wire = Wire::ALL
                    .into_iter()
                    .find(|w| v.to_str() == Some(w.label()))
                    .ok_or_else(|| format!("unknown wire {v:?}"))?;
                wires.push(wire);
            }
            "--url" => urls.push(value()?.to_string_lossy().into_owned()),
            "-h" | "--help" => {
                println!("{}", usage());
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if wires.is_empty() {
        wires = vec![Wire::Stdio];
    }
    let wanted = |k: Kind| only.is_empty() || only.iter().any(|o| o == k.label());
    let mut tap = None;
    let mut python_server = None;
    if let (Some(python), Some(script)) = (&python, &script) {
        let script = absolute(script);
        if let Some(dir) = script.parent() {
            tap = Some((python.clone(), dir.join("wiretap.py")));
        }
        python_server = Some((python.clone(), script.into_os_string()));
    } else if python.is_some() || script.is_some() {
        return Err("--python and --script go together".into());
    }
    let everything_dist = everything.map(|prefix| {
        absolute(&prefix).join("node_modules/@modelcontextprotocol/server-everything/dist")
    });
    let mut targets = Vec::new();
    if !urls.is_empty() {
        // Servers someone else started: only those run.
        for given in urls {
            let (kind, url) = given.split_once('=').ok_or_else(|| {
                format!("--url {given:?}: give it as python=URL or everything=URL")
            })?;
            let kind = [Kind::Python, Kind::Everything]
                .into_iter()
                .find(|k| k.label() == kind)
                .ok_or_else(|| format!("--url {given:?}: unknown server {kind:?}"))?;
            let wire = if url.trim_end_matches('/').ends_with("/sse") {
                Wire::Sse
            } else {
                Wire::Http
            };
            targets.push(Target {
                kind,
                wire,
                program: OsString::new(),
                args: Vec::new(),
                url: Some(url.to_owned()),
                docs: everything_dist.as_ref().map(|d| d.join("docs")),
            });
        }
    }
    let given = !targets.is_empty();
    for &wire in wires.iter().filter(|_| !given) {
        if let Some((python, script)) = &python_server
            && wanted(Kind::Python)
        {
            targets.push(Target {
                kind: Kind::Python,
                wire,
                program: python.clone(),
                args: vec![script.clone()],
                url: None,
                docs: None,
            });
        }
        // server-everything has no stateless mode.
        if let Some(dist) = &everything_dist
            && wanted(Kind::Everything)
            && wire != Wire::HttpStateless
        {
            targets.push(Target {
                kind: Kind::Everything,
                wire,
                program: node.clone(),
                args: vec![dist.join("index.js").into_os_string()],
                url: None,
                docs: Some(dist.join("docs")),
            });
        }
    }
    if modes.is_empty() {
        modes = Mode::ALL.to_vec();
    }
    Ok(Options {
        targets,
        modes,
        wire_log,
        tap,
    })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
