//! What a client and a server can do: [`ClientCapabilities`] and
//! [`ServerCapabilities`].
//!
//! A capability present as `{}` means "supported with no options"; absent
//! means unsupported. Unknown capabilities and sub-options are kept.

use serde::{Deserialize, Serialize};

use super::common::JsonObject;

/// `roots` of the client's capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed` (legacy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `sampling` of the client's capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Present when the client honours `includeContext` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present when the client accepts `tools` and `toolChoice` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `elicitation` of the client's capabilities. `{}` means form mode only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Present when form mode is supported (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present when URL mode is supported (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// Whether form mode is supported (an empty capability means it is).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// `tasks` of either side's capabilities (2025-11-25, experimental).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TasksCapability {
    /// Present when `tasks/list` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Present when `tasks/cancel` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be run as tasks, such as `{"tools":{"call":{}}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<JsonObject>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a client can do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// The client answers `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client answers `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client answers `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Experimental tasks (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions the client supports, by identifier (2026-07-28+), such
    /// as `io.modelcontextprotocol/tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// No capabilities: `{}`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same with `roots` (legacy `listChanged` as given).
    pub fn with_roots(mut self, list_changed: Option<bool>) -> Self {
        self.roots = Some(RootsCapability {
            list_changed,
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with `sampling`; `tools` declares sampling with tools.
    pub fn with_sampling(mut self, tools: bool) -> Self {
        self.sampling = Some(SamplingCapability {
            context: None,
            tools: tools.then(JsonObject::new),
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with `elicitation` for the given modes. Both `false`
    /// gives `{}`, which means form mode only.
    pub fn with_elicitation(mut self, form: bool, url: bool) -> Self {
        self.elicitation = Some(ElicitationCapability {
            form: form.then(JsonObject::new),
            url: url.then(JsonObject::new),
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with an extension declared (`{}` settings).
    pub fn with_extension(mut self, id: impl Into<String>) -> Self {
        self.extensions
            .get_or_insert_with(JsonObject::new)
            .insert(id.into(), JsonObject::new().into());
        self
    }

    /// Whether an extension is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// `prompts` or `tools` of the server's capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether the server sends a `list_changed` notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `resources` of the server's capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether the server supports subscribing to a resource's updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a server can do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// The server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Experimental tasks (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions the server supports, by identifier (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ServerCapabilities {
    /// No capabilities: `{}`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same with `tools`.
    pub fn with_tools(mut self, list_changed: Option<bool>) -> Self {
        self.tools = Some(ListChangedCapability {
            list_changed,
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with `prompts`.
    pub fn with_prompts(mut self, list_changed: Option<bool>) -> Self {
        self.prompts = Some(ListChangedCapability {
            list_changed,
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with `resources`.
    pub fn with_resources(mut self, subscribe: Option<bool>, list_changed: Option<bool>) -> Self {
        self.resources = Some(ResourcesCapability {
            subscribe,
            list_changed,
            extra: JsonObject::new(),
        });
        self
    }

    /// The same with `logging`.
    pub fn with_logging(mut self) -> Self {
        self.logging = Some(JsonObject::new());
        self
    }

    /// The same with `completions`.
    pub fn with_completions(mut self) -> Self {
        self.completions = Some(JsonObject::new());
        self
    }

    /// The same with an extension declared (`{}` settings).
    pub fn with_extension(mut self, id: impl Into<String>) -> Self {
        self.extensions
            .get_or_insert_with(JsonObject::new)
            .insert(id.into(), JsonObject::new().into());
        self
    }

    /// Whether an extension is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

unknown_fields! {
    RootsCapability;
    SamplingCapability;
    ElicitationCapability;
    TasksCapability;
    ClientCapabilities {
        roots: "roots",
        sampling: "sampling",
        elicitation: "elicitation",
        tasks: "tasks",
    };
    ListChangedCapability;
    ResourcesCapability;
    ServerCapabilities {
        prompts: "prompts",
        resources: "resources",
        tools: "tools",
        tasks: "tasks",
    };
}
