//! An `mcpServers` file (Claude Desktop, Cursor, VS Code's `servers`):
//! any text reads or is refused without panicking; variables expand from
//! the lookup; and a text with each `$` doubled reads back as itself.

use std::collections::BTreeMap;

use mcp_client::host::{ConfigError, ServerDefinition, ServersFile};

/// Set: the variables whose name starts with `A` to `M`, as `<NAME>`.
fn lookup(name: &str) -> Option<String> {
    name.starts_with(|c: char| ('A'..='M').contains(&c))
        .then(|| format!("<{name}>"))
}

/// The input is a servers file, and a text to write into one.
pub fn mcp_servers(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    match ServersFile::from_json_with(&text, lookup) {
        Ok(file) => {
            for definition in file.servers.values() {
                let _ = definition.secret_values();
            }
        }
        Err(ConfigError::Unset { variable, .. }) => {
            assert!(lookup(&variable).is_none(), "{variable:?} is set");
        }
        Err(_) => {}
    }
    escaped(&text);
}

/// Every field that expands, holding the input with `$` written `$$`,
/// reads as the input.
fn escaped(text: &str) {
    let escaped = text.replace('$', "$$");
    let file = serde_json::json!({"mcpServers": {
        "local": {"command": escaped, "args": [escaped], "env": {"V": escaped}, "cwd": escaped},
        "remote": {"url": escaped, "headers": {"H": escaped}},
    }});
    let read = ServersFile::from_json_with(&file.to_string(), |_| None)
        .expect("a file without variables reads");
    let Some(ServerDefinition::Stdio {
        command,
        args,
        env,
        cwd,
    }) = read.servers.get("local")
    else {
        panic!("no stdio server in {file}");
    };
    assert_eq!(command, text);
    assert_eq!(args, &[text.to_owned()]);
    assert_eq!(env, &BTreeMap::from([("V".to_owned(), text.to_owned())]));
    assert_eq!(cwd.as_deref(), Some(std::path::Path::new(text)));
    let Some(ServerDefinition::Http { url, headers }) = read.servers.get("remote") else {
        panic!("no http server in {file}");
    };
    assert_eq!(url, text);
    assert_eq!(headers["H"], text);
}
