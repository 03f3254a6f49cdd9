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

macro_rules! impl_paginated {
    ($($ty:ty => $item:ty, $field:ident;)+) => {
        $(
            impl $ty {
                /// A page holding `items`, the last one.
                pub fn new(items: Vec<$item>) -> Self {
                    Self {
                        $field: items,
                        ..Default::default()
                    }
                }

                /// The same with a next page.
                pub fn with_next_cursor(mut self, cursor: impl Into<Cursor>) -> Self {
                    self.next_cursor = Some(cursor.into());
                    self
                }
            }

            impl Paginated for $ty {
                type Item = $item;
                fn next_cursor(&self) -> Option<&str> {
                    self.next_cursor.as_deref()
                }
                fn into_items(self) -> Vec<$item> {
                    self.$field
                }
            }
        )+
    };
}

impl_paginated! {
    super::tools::ListToolsResult => super::tools::Tool, tools;
    super::prompts::ListPromptsResult => super::prompts::Prompt, prompts;
    super::resources::ListResourcesResult => super::resources::Resource, resources;
    super::resources::ListResourceTemplatesResult => super::resources::ResourceTemplate, resource_templates;
    super::tasks::ListTasksResult => super::tasks::Task, tasks;
}

unknown_fields! {
    PaginatedRequestParams;
}
