//! Who may talk to the bridge over HTTP, as pure checks of a request's
//! head: the `Host` and `Origin` a browser page cannot fake (DNS
//! rebinding), and the bearer token of a bridge that listens beyond
//! loopback.

use subtle::ConstantTimeEq;

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `403`: the `Host` or `Origin` names a host the bridge does not
    /// serve.
    Forbidden(String),
    /// `401`: the bearer token is missing or wrong.
    Unauthorized,
}

/// Whether `host` (a `Host` header's value, port included or not) names
/// this machine's loopback interface.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // `[::1]:8080`: an IPv6 address, exactly.
        Some(rest) => {
            return match rest.split_once(']') {
                Some((inside, after)) if after.is_empty() || is_port(after) => inside
                    .parse::<std::net::Ipv6Addr>()
                    .is_ok_and(|ip| ip.is_loopback()),
                _ => false,
            };
        }
        None => match host.rsplit_once(':') {
            Some((name, port)) if is_port(&format!(":{port}")) => name,
            Some(_) => return false,
            None => host,
        },
    };
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `after` is `:` and a port number.
#[cfg(not(fuzz_planted))]
fn is_port(after: &str) -> bool {
    after
        .strip_prefix(':')
        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok())
}

/// The planted bug of the `bridge_http` fuzz target: an empty port passes.
#[cfg(fuzz_planted)]
fn is_port(after: &str) -> bool {
    after.strip_prefix(':').is_some_and(|p| {
        p.bytes().all(|b| b.is_ascii_digit()) && (p.is_empty() || p.parse::<u16>().is_ok())
    })
}

/// Whether an `Origin` header's value is a loopback origin
/// (`http://localhost:3000`, `https://127.0.0.1`).
pub(crate) fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    !rest.contains('/') && !rest.contains('@') && is_loopback_host(rest)
}

/// The checks of one request's head. `loopback`: the bridge listens on
/// loopback only (then `Host` must name loopback too); `origins`: the
/// origins allowed besides loopback ones; `token`: the bearer token
/// required, if any.
pub(crate) fn check(
    host: Option<&str>,
    origin: Option<&str>,
    authorization: Option<&[u8]>,
    loopback: bool,
    origins: &[String],
    token: Option<&[u8]>,
) -> Result<(), Refusal> {
    if loopback && !host.is_some_and(is_loopback_host) {
        return Err(Refusal::Forbidden(format!(
            "the Host header ({}) must name a loopback host: the bridge listens on loopback (DNS-rebinding protection)",
            host.unwrap_or("missing")
        )));
    }
    if let Some(origin) = origin
        && !is_loopback_origin(origin)
        && !origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    {
        return Err(Refusal::Forbidden(format!(
            "the Origin {origin:?} is not allowed (start the bridge with --allow-origin to allow it)"
        )));
    }
    if let Some(token) = token {
        let sent = authorization.and_then(|a| {
            let scheme = a.get(..7)?;
            scheme
                .eq_ignore_ascii_case(b"bearer ")
                .then(|| a[7..].trim_ascii())
        });
        // Compared in constant time: how much of a guess matched must not
        // show in how long the answer takes.
        match sent {
            Some(sent) if bool::from(sent.ct_eq(token)) => {}
            _ => return Err(Refusal::Unauthorized),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.",
            "127.0.0.1",
            "127.0.0.1:3000",
            "127.1.2.3",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.com",
            "localhost.evil.com",
            "127.0.0.1.nip.io",
            "10.0.0.1:80",
            "[::2]",
            "[::1]x",
            "[::1.]:30",
            "[127.0.0.1]",
            "localhost:",
            "localhost:http",
            "",
            "::1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn loopback_origins() {
        assert!(is_loopback_origin("http://localhost:3000"));
        assert!(is_loopback_origin("https://127.0.0.1"));
        assert!(is_loopback_origin("http://[::1]:1"));
        assert!(!is_loopback_origin("http://evil.com"));
        assert!(!is_loopback_origin("http://localhost@evil.com"));
        assert!(!is_loopback_origin("null"));
        assert!(!is_loopback_origin("file://localhost"));
    }

    #[test]
    fn a_rebinding_host_is_forbidden_on_loopback_only() {
        let refused = check(Some("evil.com:80"), None, None, true, &[], None);
        assert!(matches!(refused, Err(Refusal::Forbidden(_))));
        assert_eq!(
            check(Some("evil.com"), None, None, false, &[], None),
            Ok(())
        );
        assert!(check(None, None, None, true, &[], None).is_err());
    }

    #[test]
    fn origins_are_loopback_or_allowed() {
        let allowed = ["https://app.example".to_owned()];
        let host = Some("localhost");
        assert!(check(host, Some("http://evil.com"), None, true, &allowed, None).is_err());
        assert_eq!(
            check(
                host,
                Some("https://app.example"),
                None,
                true,
                &allowed,
                None
            ),
            Ok(())
        );
        assert_eq!(
            check(host, Some("http://localhost:5173"), None, true, &[], None),
            Ok(())
        );
    }

    #[test]
    fn the_bearer_token_must_match() {
        let token = Some(&b"s3cret"[..]);
        let host = Some("localhost");
        let sent = |a: &'static str| check(host, None, Some(a.as_bytes()), true, &[], token);
        assert_eq!(sent("Bearer s3cret"), Ok(()));
        assert_eq!(sent("bearer s3cret "), Ok(()));
        assert_eq!(sent("Bearer s3cre"), Err(Refusal::Unauthorized));
        assert_eq!(sent("Basic s3cret"), Err(Refusal::Unauthorized));
        assert_eq!(sent("Bearer"), Err(Refusal::Unauthorized));
        assert_eq!(
            check(host, None, None, true, &[], token),
            Err(Refusal::Unauthorized)
        );
    }
}
