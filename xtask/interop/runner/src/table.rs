//! The report: the table and its details.

use std::fmt::Write as _;
use std::time::Duration;

use crate::model::{CHECKS, Column, Mode, Outcome, Wire};

/// A duration as the table shows it: ms below 1 s, then s.
pub(crate) fn ms(d: Duration) -> String {
    if d >= Duration::from_secs(10) {
        format!("{:.0}s", d.as_secs_f64())
    } else if d >= Duration::from_secs(1) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The report: per wire, a matrix of checks × (server, mode); then the
/// counts and every detail.
pub(crate) fn render(columns: &[Column], total: Duration) -> String {
    let mut out = String::new();
    for wire in Wire::ALL {
        let of_wire: Vec<&Column> = columns.iter().filter(|c| c.wire == wire).collect();
        if !of_wire.is_empty() {
            let _ = writeln!(out, "\nover {}:\n", wire.label());
            out.push_str(&matrix(&of_wire));
        }
    }
    out.push_str(&details(columns, total));
    out
}

/// One wire's matrix.
fn matrix(columns: &[&Column]) -> String {
    let mut header = vec!["check".to_owned()];
    header.extend(
        columns
            .iter()
            .map(|c| format!("{} × {}", c.kind.label(), c.mode.label())),
    );
    let mut rows = vec![header];
    let mut era_row = vec!["era picked".to_owned()];
    for c in columns {
        era_row.push(match &c.verdict {
            Some(v) => {
                let mark = if c.mode == Mode::Auto {
                    if v.era == c.kind.native_era(c.wire) {
                        " ✓"
                    } else {
                        " ✗"
                    }
                } else {
                    ""
                };
                format!("{} {}{mark}", v.era, v.version)
            }
            None if c.mode == Mode::Modern && !c.kind.speaks_modern(c.wire) => {
                "n/a (legacy only)".into()
            }
            None => "none".into(),
        });
    }
    rows.push(era_row);
    for check in CHECKS {
        let mut row = vec![(*check).to_owned()];
        for c in columns {
            row.push(match c.cells.iter().find(|(n, _)| n == check) {
                Some((_, cell)) => match &cell.outcome {
                    Outcome::Pass(_) => format!("ok {}", ms(cell.elapsed)),
                    Outcome::Fail(_) => format!("FAIL {}", ms(cell.elapsed)),
                    Outcome::NotApplicable(_) => "n/a".into(),
                },
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut total_row = vec!["total".to_owned()];
    total_row.extend(
        columns
            .iter()
            .map(|c| ms(c.cells.iter().map(|(_, cell)| cell.elapsed).sum())),
    );
    rows.push(total_row);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}", w = *w))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(out, "|-{}-|", rule.join("-|-"));
        }
    }
    out
}

/// The counts, then every column's details.
fn details(columns: &[Column], total: Duration) -> String {
    let mut out = String::new();
    let (mut pass, mut fail, mut na) = (0, 0, 0);
    for (_, cell) in columns.iter().flat_map(|c| &c.cells) {
        match cell.outcome {
            Outcome::Pass(_) => pass += 1,
            Outcome::Fail(_) => fail += 1,
            Outcome::NotApplicable(_) => na += 1,
        }
    }
    let _ = writeln!(
        out,
        "\n{pass} passed, {fail} failed, {na} not applicable, in {}",
        ms(total)
    );
    let _ = writeln!(out, "\nDetails:");
    for c in columns {
        let _ = writeln!(
            out,
            "\n{} over {} × {}",
            c.kind.label(),
            c.wire.label(),
            c.mode.label()
        );
        for (name, cell) in &c.cells {
            let (tag, detail) = match &cell.outcome {
                Outcome::Pass(d) => ("ok  ", d),
                Outcome::Fail(d) => ("FAIL", d),
                Outcome::NotApplicable(d) => ("n/a ", d),
            };
            let _ = writeln!(out, "  {tag} {name:<13} {detail}");
        }
        let failed = c
            .cells
            .iter()
            .any(|(_, cell)| matches!(cell.outcome, Outcome::Fail(_)));
        if failed && !c.stderr_tail.is_empty() {
            let _ = writeln!(out, "  server stderr (last lines):");
            for line in &c.stderr_tail {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}
