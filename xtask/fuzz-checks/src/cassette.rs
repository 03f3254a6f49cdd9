//! A cassette file: any text reads or is refused without panicking,
//! never into more connections or requests than it has lines, and the
//! same with Windows line ends.

use mcp_testkit::cassette::Cassette;

/// The input is a cassette file.
pub fn cassette(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let read = Cassette::parse(text);
    if let Ok(cassette) = &read {
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        assert!(cassette.connections() <= lines);
        assert!(cassette.requests().len() < lines.max(1));
        let _ = (cassette.era(), cassette.verdict(), cassette.header());
    }
    if !text.contains('\r') {
        let crlf = text.replace('\n', "\r\n");
        let again = Cassette::parse(&crlf);
        assert_eq!(
            format!("{:?}", read.as_ref().map(summary)),
            format!("{:?}", again.as_ref().map(summary)),
            "with CRLF line ends"
        );
    }
}

fn summary(c: &Cassette) -> (usize, Vec<String>, Option<String>) {
    (c.connections(), c.requests(), c.era().map(str::to_owned))
}
