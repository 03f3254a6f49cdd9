//! `WWW-Authenticate` values: any value reads without panicking into
//! schemes that are tokens; and the parameters of a `Bearer` challenge
//! written from parts of the input, after a challenge of another scheme,
//! read back as written.

use mcp_auth::BearerChallenge;

const MCP_URL: &str = "https://mcp.example/mcp";

/// The input is a `WWW-Authenticate` value, and the parts of one to write.
pub fn www_authenticate(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let read = BearerChallenge::parse(&text);
    for scheme in &read.schemes {
        assert!(
            !scheme.is_empty() && scheme.chars().all(is_tchar),
            "{scheme:?} is no scheme"
        );
    }
    assert_eq!(
        read.offers_dpop(),
        read.schemes.iter().any(|s| s.eq_ignore_ascii_case("dpop"))
    );
    let urls = mcp_auth::fuzzing::metadata_urls(MCP_URL, &read);
    assert!(!urls.is_empty());
    written(&text);
}

/// The input split at NUL into an error, scopes and a metadata URL.
fn written(text: &str) {
    let mut parts = text.split('\0');
    let error = parts.next().unwrap_or_default();
    let scope = parts.next().unwrap_or_default();
    let url = parts.next().unwrap_or_default();
    let other = parts.next().unwrap_or("Basic");
    let scheme = if other.is_empty() || !other.chars().all(is_tchar) {
        "Basic"
    } else {
        other
    };
    let header = format!(
        "{scheme} realm=\"x\", Bearer error={}, scope={}, resource_metadata={}",
        quoted(error),
        quoted(scope),
        quoted(url)
    );
    // A first `Bearer` or `DPoP` challenge has only a realm: the
    // parameters are still the second one's.
    let read = BearerChallenge::parse(&header);
    assert_eq!(read.schemes, [scheme, "Bearer"], "{header}");
    assert_eq!(read.error.as_deref(), Some(error), "{header}");
    let scopes: Vec<&str> = scope.split_whitespace().collect();
    assert_eq!(read.scope, scopes, "{header}");
    assert_eq!(read.resource_metadata.as_deref(), Some(url), "{header}");
}

/// A quoted string (RFC 9110 §5.6.4).
fn quoted(value: &str) -> String {
    let mut out = String::from('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}
