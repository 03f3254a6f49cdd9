//! The HTTP side of `mcp bridge`: who may connect (`Host`, `Origin`, the
//! bearer token), the headers a 2026-07-28 request mirrors its body in,
//! and `Last-Event-ID`. Each agrees with a plain statement of its rule.

use std::net::{IpAddr, Ipv6Addr};

use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_bridge::fuzzing::{
    check_head, check_headers, is_loopback_host, is_loopback_origin, resume,
};
use mcp_protocol::headers::{encode_header_value, name_value};
use mcp_protocol::meta::PROTOCOL_VERSION;
use mcp_protocol::{Inbound, Message};
use serde_json::Value;

/// The input's lines: a `Host`, an `Origin`, an `Authorization`, a
/// token, a `Last-Event-ID` and an event count, then a body.
pub fn bridge_http(input: &[u8]) {
    let mut fields = input.splitn(7, |&b| b == b'\n');
    let mut next = || String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let (host, origin, authorization, token, last, count) =
        (next(), next(), next(), next(), next(), next());
    let body = fields.next().unwrap_or_default();

    assert_eq!(
        is_loopback_host(&host),
        loopback_host(&host),
        "Host {host:?}"
    );
    assert_eq!(
        is_loopback_origin(&origin),
        loopback_origin(&origin),
        "Origin {origin:?}"
    );
    head(&host, &origin, authorization.as_bytes(), token.as_bytes());
    let events = count.bytes().map(usize::from).sum::<usize>() % 64;
    events_after(events, &last);
    if let Ok(inbound) = Inbound::parse(body) {
        for message in inbound.into_messages(|_| {}) {
            honest_headers_pass(&message);
        }
    }
}

/// The rule, said plainly: `localhost` or a loopback address, with a
/// port that is a number of 16 bits or none, an IPv6 address bracketed.
fn loopback_host(host: &str) -> bool {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let Some((inside, after)) = rest.split_once(']') else {
            return false;
        };
        let Ok(ip) = inside.parse::<Ipv6Addr>() else {
            return false;
        };
        if !ip.is_loopback() {
            return false;
        }
        return match after.strip_prefix(':') {
            None => after.is_empty(),
            Some(port) => port_ok(port),
        };
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if port.is_some_and(|p| !port_ok(p)) {
        return false;
    }
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn port_ok(port: &str) -> bool {
    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok()
}

fn loopback_origin(origin: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    rest.is_some_and(|r| !r.contains(['/', '@']) && loopback_host(r))
}

/// A head passes exactly when each of its rules holds.
fn head(host: &str, origin: &str, authorization: &[u8], token: &[u8]) {
    let token = token.trim_ascii();
    let token = (!token.is_empty()).then_some(token);
    let origin = (!origin.is_empty()).then_some(origin);
    let passed = check_head(Some(host), origin, Some(authorization), true, &[], token).is_ok();
    let bearer_ok = token.is_none_or(|t| {
        authorization.len() >= 7
            && authorization[..7].eq_ignore_ascii_case(b"bearer ")
            && authorization[7..].trim_ascii() == t
    });
    let want = loopback_host(host) && origin.is_none_or(loopback_origin) && bearer_ok;
    assert_eq!(
        passed, want,
        "{host:?} {origin:?} {authorization:?} {token:?}"
    );
    // Its own token, sent as a client would, always passes.
    if let Some(t) = token {
        let sent = [b"Bearer ".as_slice(), t].concat();
        assert!(check_head(Some("localhost"), None, Some(&sent), true, &[], Some(t)).is_ok());
    }
    // Beyond loopback, with no token and no Origin, the Host is not judged.
    assert!(check_head(Some(host), None, None, false, &[], None).is_ok());
}

/// Resuming after event `n` of a stream that carried `events` replays
/// the events after it.
fn events_after(events: usize, last: &str) {
    let replayed = resume(events, last);
    let named = last.trim().split_once('-').and_then(|(s, e)| {
        let stream: u64 = s.parse().ok()?;
        let event: u64 = e.parse().ok()?;
        (stream == 1).then_some(event)
    });
    match named {
        Some(event) => assert_eq!(
            replayed,
            Some(events.saturating_sub(event as usize)),
            "{last:?} of {events}"
        ),
        None => assert_eq!(replayed, None, "{last:?}"),
    }
}

/// A 2026-07-28 message whose headers are made from its own body, as a
/// client makes them, passes the checks.
fn honest_headers_pass(message: &Message) {
    let (method, params) = match message {
        Message::Request(r) => (&r.method, r.params.as_ref()),
        Message::Notification(n) => (&n.method, n.params.as_ref()),
        _ => return,
    };
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .unwrap_or("2026-07-28");
    let mut headers = HeaderMap::new();
    let mut put = |name: &'static str, value: &str| -> Option<()> {
        let value = HeaderValue::from_str(value).ok()?;
        headers.insert(HeaderName::from_static(name), value);
        Some(())
    };
    let mut made = put("mcp-protocol-version", version).is_some()
        && put("mcp-method", &encode_header_value(method)).is_some();
    if let Some(name) = name_value(method, params) {
        made &= put("mcp-name", &encode_header_value(name)).is_some();
    }
    if made {
        assert_eq!(check_headers(&headers, message), Ok(()), "{message:?}");
    }
}
