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

/// The newest of the client's `offered` revisions (newest first) of `era`
/// that the server's list holds too.
///
/// ```
/// use mcp_protocol::{Era, ProtocolVersion, version::best_shared};
///
/// let offered = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
/// let server = [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25];
/// assert_eq!(best_shared(&offered, Era::Legacy, &server), Some(ProtocolVersion::V2025_11_25));
/// assert_eq!(best_shared(&offered, Era::Modern, &server), None);
/// ```
pub fn best_shared(
    offered: &[ProtocolVersion],
    era: Era,
    server: &[ProtocolVersion],
) -> Option<ProtocolVersion> {
    offered
        .iter()
        .find(|v| v.era() == era && server.contains(v))
        .cloned()
}

/// What a client does with a request the server answered with
/// [`UNSUPPORTED_PROTOCOL_VERSION`](crate::error_codes::UNSUPPORTED_PROTOCOL_VERSION)
/// (`-32022`): the one decision behind every place that meets it.
///
/// | the server's `supported` list | a retry is left | decision |
/// |---|---|---|
/// | holds a modern revision the client offers | yes | [`Retry`](VersionRetry::Retry) with the client's newest such one, even the one just sent (the server lists it, so its refusal may not hold again) |
/// | holds a modern revision the client offers | no | [`NoRetry`](VersionRetry::NoRetry): not sent again, so a server that keeps refusing makes no loop; the revision is for later requests |
/// | holds no modern revision the client offers (only newer or unknown ones, only legacy ones, or none) | either | [`NoneShared`](VersionRetry::NoneShared) |
/// | is missing or malformed | either | [`NoneShared`](VersionRetry::NoneShared), with an empty list |
///
/// What follows a decision (a negotiation error, a fall back to legacy, the
/// server's error as it is) is the caller's: it depends on where the
/// request was made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VersionRejection {
    /// The revisions the server lists, as read from the error's `data`
    /// (see [`supported_versions`](crate::error_codes::supported_versions)).
    pub supported: Vec<ProtocolVersion>,
    /// What to do.
    pub next: VersionRetry,
}

/// The decision of a [`VersionRejection`].
// Not `non_exhaustive`: a new decision must reach every caller's `match`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionRetry {
    /// Send the request again, once, with this revision: the newest modern
    /// one both sides know.
    Retry(ProtocolVersion),
    /// Both sides know this modern revision, but no retry is left: the
    /// request is not sent again.
    NoRetry(ProtocolVersion),
    /// The server lists no modern revision the client offers.
    NoneShared,
}

impl VersionRejection {
    /// Decides from a `-32022` error's `data`, the client's `offered`
    /// revisions (newest first, of any era) and whether the request may
    /// still be retried (`retry_left`: no retry made yet, and the request
    /// can be sent again). Pure: no I/O, no state.
    ///
    /// ```
    /// use mcp_protocol::ProtocolVersion;
    /// use mcp_protocol::version::{VersionRejection, VersionRetry};
    /// use serde_json::json;
    ///
    /// let offered = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    /// let data = json!({"supported": ["2026-07-28"], "requested": "2026-07-28"});
    /// let first = VersionRejection::read(Some(&data), &offered, true);
    /// assert_eq!(first.next, VersionRetry::Retry(ProtocolVersion::V2026_07_28));
    /// let again = VersionRejection::read(Some(&data), &offered, false);
    /// assert_eq!(again.next, VersionRetry::NoRetry(ProtocolVersion::V2026_07_28));
    /// ```
    pub fn read(
        data: Option<&serde_json::Value>,
        offered: &[ProtocolVersion],
        retry_left: bool,
    ) -> Self {
        Self::decide(
            crate::error_codes::supported_versions(data),
            offered,
            retry_left,
        )
    }

    /// [`read`](Self::read), from the server's list already read (a
    /// `DiscoverResult`'s `supportedVersions` that lacks the revision the
    /// request was sent in, for instance).
    pub fn decide(
        supported: Vec<ProtocolVersion>,
        offered: &[ProtocolVersion],
        retry_left: bool,
    ) -> Self {
        let next = match best_shared(offered, Era::Modern, &supported) {
            Some(v) if retry_left => VersionRetry::Retry(v),
            Some(v) => VersionRetry::NoRetry(v),
            None => VersionRetry::NoneShared,
        };
        VersionRejection { supported, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client of most rows: a modern revision newer than the library's,
    /// the library's modern one, and the newest legacy one.
    fn offered() -> Vec<ProtocolVersion> {
        vec![
            ProtocolVersion::new("2026-12-01"),
            ProtocolVersion::V2026_07_28,
            ProtocolVersion::V2025_11_25,
        ]
    }

    fn decide(data: serde_json::Value, retry_left: bool) -> VersionRejection {
        VersionRejection::read(Some(&data), &offered(), retry_left)
    }

    #[test]
    fn rejection_server_lists_only_a_newer_revision() {
        let r = decide(serde_json::json!({"supported": ["2027-06-01"]}), true);
        assert_eq!(r.next, VersionRetry::NoneShared);
        assert_eq!(r.supported, [ProtocolVersion::new("2027-06-01")]);
    }

    #[test]
    fn rejection_several_shared_the_clients_newest_chosen() {
        // The server's order does not matter: the client's does.
        let r = decide(
            serde_json::json!({"supported": ["2026-07-28", "2026-12-01", "2025-11-25"]}),
            true,
        );
        assert_eq!(
            r.next,
            VersionRetry::Retry(ProtocolVersion::new("2026-12-01"))
        );
        assert_eq!(r.supported.len(), 3);
    }

    #[test]
    fn rejection_one_shared_among_unknown_ones() {
        let r = decide(
            serde_json::json!({"supported": ["2027-06-01", "2026-07-28"]}),
            true,
        );
        assert_eq!(r.next, VersionRetry::Retry(ProtocolVersion::V2026_07_28));
    }

    #[test]
    fn rejection_only_a_legacy_revision_shared() {
        // The decision is about modern revisions: a legacy one shared is
        // for the caller to weigh (the probe falls back to legacy on it).
        let r = decide(
            serde_json::json!({"supported": ["2025-11-25", "2024-11-05"]}),
            true,
        );
        assert_eq!(r.next, VersionRetry::NoneShared);
        assert_eq!(r.supported[0], ProtocolVersion::V2025_11_25);
    }

    #[test]
    fn rejection_none_shared() {
        let r = decide(serde_json::json!({"supported": ["2024-11-05"]}), true);
        assert_eq!(r.next, VersionRetry::NoneShared);
        let r = decide(serde_json::json!({"supported": []}), true);
        assert_eq!(r.next, VersionRetry::NoneShared);
        assert!(r.supported.is_empty());
    }

    #[test]
    fn rejection_malformed_or_missing_data() {
        for data in [
            serde_json::json!({"supported": 3}),
            serde_json::json!({"supported": "2026-07-28"}),
            serde_json::json!({"requested": "2026-07-28"}),
            serde_json::json!(["2026-07-28"]),
            serde_json::Value::Null,
        ] {
            let r = decide(data.clone(), true);
            assert_eq!(r.next, VersionRetry::NoneShared, "{data}");
            assert!(r.supported.is_empty(), "{data}");
        }
        let r = VersionRejection::read(None, &offered(), true);
        assert_eq!(r.next, VersionRetry::NoneShared);
        assert!(r.supported.is_empty());
        // Entries that are no strings are skipped, the others kept.
        let r = decide(
            serde_json::json!({"supported": [7, null, "2026-07-28"]}),
            true,
        );
        assert_eq!(r.next, VersionRetry::Retry(ProtocolVersion::V2026_07_28));
        assert_eq!(r.supported, [ProtocolVersion::V2026_07_28]);
    }

    #[test]
    fn rejection_the_version_just_tried_is_retried_once_then_not_again() {
        // The server refuses 2026-07-28 yet lists it: one retry with it...
        let data = serde_json::json!({"supported": ["2026-07-28"], "requested": "2026-07-28"});
        let first = decide(data.clone(), true);
        assert_eq!(
            first.next,
            VersionRetry::Retry(ProtocolVersion::V2026_07_28)
        );
        // ...and the same answer to the retry ends there: no loop.
        let second = decide(data, false);
        assert_eq!(
            second.next,
            VersionRetry::NoRetry(ProtocolVersion::V2026_07_28)
        );
    }

    #[test]
    fn rejection_no_retry_left_still_names_the_shared_revision() {
        let r = decide(serde_json::json!({"supported": ["2026-12-01"]}), false);
        assert_eq!(
            r.next,
            VersionRetry::NoRetry(ProtocolVersion::new("2026-12-01"))
        );
    }

    #[test]
    fn rejection_no_retry_left_and_none_shared() {
        let r = decide(serde_json::json!({"supported": ["2027-06-01"]}), false);
        assert_eq!(r.next, VersionRetry::NoneShared);
    }

    #[test]
    fn rejection_client_offering_no_modern_revision() {
        let offered = [ProtocolVersion::V2025_11_25];
        let data = serde_json::json!({"supported": ["2026-07-28", "2025-11-25"]});
        let r = VersionRejection::read(Some(&data), &offered, true);
        assert_eq!(r.next, VersionRetry::NoneShared);
    }

    #[test]
    fn rejection_decided_from_a_list_already_read() {
        // A `DiscoverResult` lacking the revision sent: the same table.
        let supported = vec![ProtocolVersion::V2026_07_28];
        let r = VersionRejection::decide(supported.clone(), &offered(), true);
        assert_eq!(r.next, VersionRetry::Retry(ProtocolVersion::V2026_07_28));
        assert_eq!(r.supported, supported);
        let r = VersionRejection::decide(supported, &offered(), false);
        assert_eq!(r.next, VersionRetry::NoRetry(ProtocolVersion::V2026_07_28));
    }

    #[test]
    fn best_shared_by_era_in_the_clients_order() {
        let offered = offered();
        let server = [
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ];
        assert_eq!(
            best_shared(&offered, Era::Modern, &server),
            Some(ProtocolVersion::V2026_07_28)
        );
        assert_eq!(
            best_shared(&offered, Era::Legacy, &server),
            Some(ProtocolVersion::V2025_11_25)
        );
        assert_eq!(best_shared(&offered, Era::Legacy, &server[..1]), None);
        assert_eq!(best_shared(&[], Era::Modern, &server), None);
    }

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
