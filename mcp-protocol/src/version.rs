//! Protocol revisions and their eras.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The two eras of MCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize`-based revisions: 2024-11-05 to 2025-11-25.
    Legacy,
    /// Stateless revisions with per-request `_meta`: 2026-07-28 and later.
    Modern,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

/// A protocol revision, such as `2025-11-25`.
///
/// Known revisions have constants; any other string is kept as it is (a
/// server newer than this library may name one), never rejected. Revisions
/// order by their date, which is how their strings compare.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion(Cow<'static, str>);

impl ProtocolVersion {
    /// The first public revision: `initialize`, stdio and HTTP+SSE.
    pub const V2024_11_05: ProtocolVersion = ProtocolVersion(Cow::Borrowed("2024-11-05"));
    /// Streamable HTTP, batches, OAuth, audio, tool annotations.
    pub const V2025_03_26: ProtocolVersion = ProtocolVersion(Cow::Borrowed("2025-03-26"));
    /// Elicitation, structured tool output, resource links; no batches.
    pub const V2025_06_18: ProtocolVersion = ProtocolVersion(Cow::Borrowed("2025-06-18"));
    /// URL elicitation, experimental tasks, sampling with tools.
    pub const V2025_11_25: ProtocolVersion = ProtocolVersion(Cow::Borrowed("2025-11-25"));
    /// The stateless revision: `server/discover`, per-request `_meta`, MRTR.
    pub const V2026_07_28: ProtocolVersion = ProtocolVersion(Cow::Borrowed("2026-07-28"));

    /// Every revision this library knows, oldest first.
    pub const KNOWN: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The first revision of the modern era.
    pub const FIRST_MODERN: ProtocolVersion = Self::V2026_07_28;

    /// The newest revision this library knows.
    pub const LATEST: ProtocolVersion = Self::V2026_07_28;

    /// The newest legacy revision this library knows.
    pub const LATEST_LEGACY: ProtocolVersion = Self::V2025_11_25;

    /// A revision from its string; unknown strings are kept.
    pub fn new(version: impl Into<String>) -> Self {
        let version = version.into();
        Self::KNOWN
            .iter()
            .find(|k| k.as_str() == version)
            .cloned()
            .unwrap_or(ProtocolVersion(Cow::Owned(version)))
    }

    /// The revision's string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The revision's string when it lives as long as the program: that
    /// of a revision this library knows (an HTTP header can then carry it
    /// without a copy).
    ///
    /// ```
    /// use mcp_protocol::ProtocolVersion;
    ///
    /// assert_eq!(ProtocolVersion::V2025_06_18.as_static_str(), Some("2025-06-18"));
    /// assert_eq!(ProtocolVersion::new("2099-01-01").as_static_str(), None);
    /// ```
    pub fn as_static_str(&self) -> Option<&'static str> {
        match self.0 {
            Cow::Borrowed(s) => Some(s),
            Cow::Owned(_) => None,
        }
    }

    /// Whether this library knows the revision.
    pub fn is_known(&self) -> bool {
        Self::KNOWN.iter().any(|k| k == self)
    }

    /// The revision's era. An unknown revision dated on or after the first
    /// modern one is taken as modern (revisions never go back to the
    /// handshake); anything else as legacy.
    pub fn era(&self) -> Era {
        if *self >= Self::FIRST_MODERN && looks_like_date(self.as_str()) {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl From<&str> for ProtocolVersion {
    fn from(s: &str) -> Self {
        ProtocolVersion::new(s)
    }
}

impl From<String> for ProtocolVersion {
    fn from(s: String) -> Self {
        ProtocolVersion::new(s)
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(ProtocolVersion::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_with_eras() {
        let k = ProtocolVersion::KNOWN;
        assert!(k.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            k.iter().map(|v| v.era()).collect::<Vec<_>>(),
            [
                Era::Legacy,
                Era::Legacy,
                Era::Legacy,
                Era::Legacy,
                Era::Modern
            ]
        );
    }

    #[test]
    fn unknown_kept() {
        let v: ProtocolVersion = serde_json::from_str("\"2027-01-01\"").unwrap();
        assert_eq!(v.as_str(), "2027-01-01");
        assert!(!v.is_known());
        assert_eq!(v.era(), Era::Modern);
        assert_eq!(ProtocolVersion::new("draft").era(), Era::Legacy);
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"2027-01-01\"");
    }
}
