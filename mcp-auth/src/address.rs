//! The option for clients that run server-side: URLs a server hands out
//! (resource metadata, authorization servers, their endpoints) refused
//! when their host resolves to an address inside a network rather than
//! on the Internet (RFC 1918, loopback, link-local, unique local, shared,
//! unspecified…), so that a malicious MCP server cannot point the client
//! at the machines around it (server-side request forgery). The
//! configured MCP server's own origin (scheme, host and port) is always
//! allowed: it was chosen, not handed out. Another port or scheme of the
//! same host is not: it may be another service of that machine.
//!
//! The check resolves the host just before each request; the HTTP client
//! then resolves it again, so a name whose answers change between the two
//! (DNS rebinding) can slip through. It narrows the hole; a deployment
//! that must close it also filters outbound connections.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::AuthError;

/// Which hosts the flow's requests may reach.
#[derive(Clone, Debug, Default)]
pub(crate) struct AddressPolicy {
    /// Refuse internal addresses (off by default).
    refuse_internal: bool,
    /// The configured MCP server's origin, always allowed.
    configured_origin: Option<url::Origin>,
}

impl AddressPolicy {
    /// Refuses internal addresses, except `configured_url`'s origin.
    pub(crate) fn refuse_internal(configured_url: &str) -> AddressPolicy {
        AddressPolicy {
            refuse_internal: true,
            configured_origin: url::Url::parse(configured_url)
                .ok()
                .map(|u| u.origin())
                .filter(url::Origin::is_tuple),
        }
    }

    /// Refuses `url` if the policy says so: its host, or any address it
    /// resolves to, is internal and `url` is not on the configured
    /// server's origin.
    pub(crate) async fn check(&self, url: &str) -> Result<(), AuthError> {
        if !self.refuse_internal {
            return Ok(());
        }
        let Ok(parsed) = url::Url::parse(url) else {
            return Ok(()); // the request itself fails on it
        };
        if self.configured_origin.as_ref() == Some(&parsed.origin()) {
            return Ok(());
        }
        let refused = || {
            AuthError::Refused(format!(
                "{url}: its host is a private, loopback or link-local address, which this client \
                 refuses for URLs a server hands out"
            ))
        };
        let addresses: Vec<IpAddr> = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(url::Host::Domain(name)) => {
                if name.eq_ignore_ascii_case("localhost") || name.ends_with(".localhost") {
                    return Err(refused());
                }
                let port = parsed.port_or_known_default().unwrap_or(443);
                match tokio::net::lookup_host((name, port)).await {
                    Ok(found) => found.map(|a| a.ip()).collect(),
                    // Unresolvable: the request fails on its own.
                    Err(_) => return Ok(()),
                }
            }
            None => return Ok(()),
        };
        if addresses.into_iter().any(is_internal) {
            return Err(refused());
        }
        Ok(())
    }
}

/// Whether an address belongs inside a network rather than on the
/// Internet.
pub(crate) fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => {
            // IPv4-mapped and -compatible addresses are their IPv4 address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return internal_v4(v4);
            }
            internal_v6(v6)
        }
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private() // 10/8, 172.16/12, 192.168/16
        || ip.is_loopback() // 127/8
        || ip.is_link_local() // 169.254/16, cloud metadata among them
        || ip.is_unspecified() // 0.0.0.0
        || ip.is_broadcast()
        || a == 0 // 0/8, "this network"
        || (a == 100 && (64..128).contains(&b)) // 100.64/10, shared (RFC 6598)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // 192.0.0/24, protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // 198.18/15, benchmarking
        || a >= 240 // 240/4, reserved
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback() // ::1
        || ip.is_unspecified() // ::
        || (first & 0xfe00) == 0xfc00 // fc00::/7, unique local
        || (first & 0xffc0) == 0xfe80 // fe80::/10, link-local
        || (first & 0xffc0) == 0xfec0 // fec0::/10, the old site-local
        || (first == 0x64 && ip.segments()[1] == 0xff9b && ip.segments()[2] == 1) // 64:ff9b:1::/48, local NAT64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(text: &str) -> bool {
        is_internal(text.parse().unwrap())
    }

    #[test]
    fn internal_addresses_of_each_kind() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "127.0.0.1",
            "127.0.0.2",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(internal(ip), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!internal(ip), "{ip}");
        }
    }

    #[tokio::test]
    async fn off_by_default_and_the_configured_origin_always_passes() {
        let off = AddressPolicy::default();
        assert!(off.check("http://10.0.0.1/token").await.is_ok());
        let on = AddressPolicy::refuse_internal("http://127.0.0.1:3000/mcp");
        assert!(on.check("http://127.0.0.1:3000/token").await.is_ok());
        assert!(on.check("http://127.0.0.1:3000/").await.is_ok());
        for url in [
            // The configured host, but another service of it.
            "http://127.0.0.1:4000/token",
            "https://127.0.0.1:3000/token",
            "http://127.0.0.2:4000/token",
            "https://169.254.169.254/latest/meta-data",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://192.168.0.1/authorize",
            "http://localhost:3000/token",
        ] {
            assert!(
                matches!(on.check(url).await, Err(AuthError::Refused(_))),
                "{url}"
            );
        }
        assert!(on.check("https://8.8.8.8/token").await.is_ok());
    }
}
