//! The origin of a URL, which decides where a token and a DPoP nonce go.

/// `scheme://host[:port]` of a URL, as the transport compares origins.
pub(crate) fn origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    Some(parsed.origin().ascii_serialization())
}
