//! Lifecycle: `initialize` (legacy), `server/discover` (modern), and the
//! description of a client or server ([`Implementation`]).

use serde::{Deserialize, Serialize};

use super::cache::CacheScope;
use super::capabilities::{ClientCapabilities, ServerCapabilities};
use super::common::{JsonObject, Meta, ResultType};
use crate::meta::SERVER_INFO;
use crate::version::ProtocolVersion;

string_enum! {
    /// The theme an [`Icon`] is drawn for.
    IconTheme {
        /// For a light background.
        Light = "light",
        /// For a dark background.
        Dark = "dark",
    }
}

/// An icon for a client, server, tool, prompt or resource (2025-11-25+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// The icon's URI (`https:` or `data:`).
    pub src: String,
    /// Its MIME type, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it is drawn at, such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme it is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
            extra: JsonObject::new(),
        }
    }
}

/// A client's or server's name and version (`clientInfo`, `serverInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// A website (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
            extra: JsonObject::new(),
        }
    }

    /// The same with a display name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same with a website.
    pub fn with_website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }
}

/// Params of `initialize` (legacy revisions only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeRequestParams {
    /// The revision the client wants to speak.
    pub protocol_version: ProtocolVersion,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InitializeRequestParams {
    /// `initialize` params.
    pub fn new(
        protocol_version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            protocol_version,
            capabilities,
            client_info,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Result of `initialize` (legacy revisions only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: ProtocolVersion,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, for a model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InitializeResult {
    /// An `initialize` result.
    pub fn new(
        protocol_version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version,
            capabilities,
            server_info,
            instructions: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Result of `server/discover` (2026-07-28+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// The revisions the server speaks.
    pub supported_versions: Vec<ProtocolVersion>,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for a model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the result stays fresh, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
    /// Who may share a cached copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `resultType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`, with `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DiscoverResult {
    /// A complete discover result.
    pub fn new(supported_versions: Vec<ProtocolVersion>, capabilities: ServerCapabilities) -> Self {
        DiscoverResult {
            supported_versions,
            capabilities,
            instructions: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: Some(ResultType::Complete),
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// `_meta["io.modelcontextprotocol/serverInfo"]`, when present and
    /// well-formed.
    pub fn server_info(&self) -> Option<Implementation> {
        let value = self.meta.as_ref()?.get(SERVER_INFO)?;
        serde_json::from_value(value.clone()).ok()
    }
}

unknown_fields! {
    Icon { theme: "theme" };
    Implementation { icons: "icons" };
    InitializeRequestParams { capabilities: "capabilities", client_info: "clientInfo" };
    InitializeResult { capabilities: "capabilities", server_info: "serverInfo" };
    DiscoverResult {
        capabilities: "capabilities",
        cache_scope: "cacheScope",
        result_type: "resultType",
    };
}
