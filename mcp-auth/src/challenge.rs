//! The `WWW-Authenticate: Bearer ...` challenge (RFC 6750 §3, RFC 9728 §5.1),
//! or its `DPoP ...` twin (RFC 9449 §7.1), which has the same parameters.

/// What a `Bearer` challenge says: the parameters the flow uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// `scope`, split on spaces: the scopes the request needs.
    pub scope: Vec<String>,
    /// `resource_metadata`: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
}

impl BearerChallenge {
    /// Parses the first challenge of a `WWW-Authenticate` value if it is
    /// `Bearer` or `DPoP`;
    /// anything unreadable is left out rather than failing, since a
    /// challenge only guides discovery.
    ///
    /// ```
    /// use mcp_auth::BearerChallenge;
    /// let c = BearerChallenge::parse(
    ///     r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource""#,
    /// );
    /// assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    /// assert_eq!(c.scope, ["a", "b"]);
    /// ```
    pub fn parse(header: &str) -> BearerChallenge {
        let mut out = BearerChallenge::default();
        let trimmed = header.trim_start();
        let Some(rest) = strip_scheme(trimmed) else {
            return out;
        };
        for (name, value) in params(rest) {
            match name.to_ascii_lowercase().as_str() {
                "error" => out.error = Some(value),
                "scope" => out.scope = value.split_whitespace().map(str::to_owned).collect(),
                "resource_metadata" => out.resource_metadata = Some(value),
                _ => {}
            }
        }
        out
    }

    /// Whether the server asks for more scope (a 403 to step up on).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

fn strip_scheme(header: &str) -> Option<&str> {
    let (scheme, rest) = header.split_once(|c: char| c.is_ascii_whitespace())?;
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop")).then_some(rest)
}

/// `name=value` or `name="quoted \" value"` pairs separated by commas; stops
/// at the next scheme (a token with no `=`).
fn params(mut s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start_matches(|c: char| c == ',' || c.is_ascii_whitespace());
        let Some(eq) = s.find('=') else { break };
        let name = s[..eq].trim();
        if name.is_empty() || name.contains(|c: char| c.is_ascii_whitespace()) {
            break;
        }
        s = s[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = s.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            value = v;
            s = &quoted[end.min(quoted.len())..];
        } else {
            let end = s.find(',').unwrap_or(s.len());
            value = s[..end].trim().to_owned();
            s = &s[end..];
        }
        out.push((name.to_owned(), value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_and_bare_values() {
        let c = BearerChallenge::parse(
            r#"Bearer error="invalid_token", error_description="a \"b\", c", scope=x, resource_metadata="http://h:1/p""#,
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope, ["x"]);
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h:1/p"));
        assert!(!c.is_insufficient_scope());
    }

    #[test]
    fn a_dpop_challenge_reads_the_same() {
        let c = BearerChallenge::parse(
            r#"DPoP error="use_dpop_nonce", resource_metadata="http://h:1/p""#,
        );
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h:1/p"));
    }

    #[test]
    fn another_scheme_says_nothing() {
        assert_eq!(
            BearerChallenge::parse("Basic realm=\"x\""),
            BearerChallenge::default()
        );
        assert_eq!(BearerChallenge::parse(""), BearerChallenge::default());
    }
}
