//! Pagination: an opaque `cursor` in, an opaque `nextCursor` out.
//!
//! An empty string is a valid cursor; an absent `nextCursor` is the end.

use serde::{Deserialize, Serialize};

use super::common::{JsonObject, Meta};

/// An opaque pagination cursor.
pub type Cursor = String;

/// Params of the list methods: `tools/list`, `prompts/list`,
/// `resources/list`, `resources/templates/list`, `tasks/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// The cursor of the page to fetch; `None` for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PaginatedRequestParams {
    /// Params for the first page.
    pub fn new() -> Self {
        Self::default()
    }

    /// Params for the page at `cursor`.
    pub fn with_cursor(mut self, cursor: impl Into<Cursor>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// The same params with `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// A page of a list result.
pub trait Paginated {
    /// What the list holds.
    type Item;

    /// The cursor of the next page; `None` at the end.
    fn next_cursor(&self) -> Option<&str>;

    /// The page's items.
    fn into_items(self) -> Vec<Self::Item>;
}

unknown_fields! {
    PaginatedRequestParams;
}
