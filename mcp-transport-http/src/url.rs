//! Origins and `Location` resolution, for the redirect policy.

use http::Uri;

/// Scheme, host (lowercase) and port (the scheme's default when absent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    pub(crate) fn of(uri: &Uri) -> Option<Origin> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let host = uri.host()?.to_ascii_lowercase();
        let port = match (uri.port_u16(), scheme.as_str()) {
            (Some(p), _) => p,
            (None, "http") => 80,
            (None, "https") => 443,
            (None, _) => return None,
        };
        Some(Origin { scheme, host, port })
    }
}

/// Resolves a `Location` value against the URL the request went to:
/// absolute, absolute-path (`/x`) and relative-path (`x`) references;
/// a query-only or fragment reference keeps the path.
pub(crate) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    let location = location.trim();
    if let Ok(uri) = location.parse::<Uri>()
        && uri.scheme().is_some()
    {
        return Some(uri);
    }
    let scheme = base.scheme_str()?;
    let authority = base.authority()?.as_str();
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}").parse().ok();
    }
    let location = location.split('#').next().unwrap_or_default();
    let path_and_query = if location.starts_with('/') {
        location.to_owned()
    } else if location.starts_with('?') {
        format!("{}{location}", base.path())
    } else if location.is_empty() {
        base.path_and_query().map(|p| p.as_str().to_owned())?
    } else {
        let dir = match base.path().rfind('/') {
            Some(i) => &base.path()[..=i],
            None => "/",
        };
        format!("{dir}{location}")
    };
    format!("{scheme}://{authority}{path_and_query}")
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn origins_compare_with_default_ports_and_case() {
        assert_eq!(
            Origin::of(&u("http://Example.com/mcp")),
            Origin::of(&u("http://example.com:80/other"))
        );
        assert_ne!(
            Origin::of(&u("http://example.com/")),
            Origin::of(&u("https://example.com/"))
        );
        assert_ne!(
            Origin::of(&u("http://127.0.0.1:8000/")),
            Origin::of(&u("http://127.0.0.1:8001/"))
        );
    }

    #[test]
    fn resolves_references() {
        let base = u("http://h:1/a/mcp?x=1");
        assert_eq!(resolve(&base, "http://o:2/p").unwrap(), u("http://o:2/p"));
        assert_eq!(resolve(&base, "/new").unwrap(), u("http://h:1/new"));
        assert_eq!(resolve(&base, "next").unwrap(), u("http://h:1/a/next"));
        assert_eq!(resolve(&base, "?y=2").unwrap(), u("http://h:1/a/mcp?y=2"));
        assert_eq!(resolve(&base, "//o:3/q").unwrap(), u("http://o:3/q"));
    }
}
