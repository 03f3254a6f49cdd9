//! What the commands print: JSON for scripts, tables and text for people.

use std::io::{self, Write};

use mcp_client::protocol::types::{ContentBlock, ResourceContents};
use serde::Serialize;

use crate::exit::{Failure, Kind, Outcome};

/// How to print: `--json`, and whether stdout is a terminal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output {
    /// Print the typed result as JSON.
    pub(crate) json: bool,
    /// Stdout is a terminal (colours, blob summaries instead of bytes).
    pub(crate) terminal: bool,
}

impl Output {
    /// Prints `value` as pretty JSON.
    pub(crate) fn json(&self, value: &impl Serialize) -> Outcome {
        let text = serde_json::to_string_pretty(value)
            .map_err(|e| Failure::new(Kind::Server, format!("the result is not JSON: {e}")))?;
        self.text(&text)
    }

    /// Prints text and a newline to stdout (a closed pipe is not an error).
    pub(crate) fn text(&self, text: &str) -> Outcome {
        self.bytes(format!("{text}\n").as_bytes())
    }

    /// Writes bytes to stdout (a closed pipe is not an error).
    pub(crate) fn bytes(&self, bytes: &[u8]) -> Outcome {
        let mut out = io::stdout().lock();
        match out.write_all(bytes).and_then(|()| out.flush()) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure::new(
                Kind::Usage,
                format!("cannot write the output: {e}"),
            )),
            _ => Ok(()),
        }
    }

    /// A heading, bold on a terminal.
    pub(crate) fn heading(&self, text: &str) -> String {
        self.style("1", text)
    }

    /// A marker for a tool error, red on a terminal.
    pub(crate) fn error_mark(&self, text: &str) -> String {
        self.style("1;31", text)
    }

    fn style(&self, sgr: &str, text: &str) -> String {
        if self.terminal {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// A table with a header row; columns padded to their widest cell, the
/// last one left ragged.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate() {
            if i + 1 < columns {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            } else {
                out.push_str(cell);
            }
        }
        out.trim_end().to_owned()
    };
    let mut lines = vec![line(&mut headers.iter().copied())];
    lines.extend(rows.iter().map(|r| line(&mut r.iter().map(String::as_str))));
    lines.join("\n")
}

/// The first line of a description, cut to `max` characters.
pub(crate) fn one_line(text: Option<&str>, max: usize) -> String {
    let first = text.unwrap_or("").lines().next().unwrap_or("").trim();
    if first.chars().count() > max {
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        first.to_owned()
    }
}

/// Content blocks as text: text as is, everything else summarised.
pub(crate) fn content_blocks(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(m) | ContentBlock::Audio(m) => format!(
                "[{} {}, {} bytes of base64]",
                block.type_name(),
                m.mime_type,
                m.data.len()
            ),
            ContentBlock::ResourceLink(l) => format!("[resource link {} ({})]", l.uri, l.name),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::Text(t) => format!("[resource {}]\n{}", t.uri, t.text),
                other => format!("[resource {}]", other.uri().unwrap_or("?")),
            },
            other => format!(
                "[{}] {}",
                other.type_name(),
                serde_json::to_string(other).unwrap_or_default()
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_all_but_the_last_column() {
        let rows = vec![
            vec!["echo".to_owned(), "Returns its text.".to_owned()],
            vec!["structured".to_owned(), String::new()],
        ];
        assert_eq!(
            table(&["NAME", "DESCRIPTION"], &rows),
            "NAME        DESCRIPTION\necho        Returns its text.\nstructured"
        );
    }

    #[test]
    fn descriptions_are_cut_to_one_line() {
        assert_eq!(one_line(Some("abc\ndef"), 10), "abc");
        assert_eq!(one_line(Some("abcdef"), 4), "abc…");
        assert_eq!(one_line(None, 4), "");
    }
}
