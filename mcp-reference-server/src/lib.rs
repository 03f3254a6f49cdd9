//! The reference MCP server: a server of either era (or both), in process
//! or over bytes, with configurable content and misbehaviour, that tests,
//! examples, benchmarks and the `mcp` command's embedded server run.
//!
//! Configure it in code with [`FakeConfig`] (era and versions,
//! capabilities, [`Content`], page size, caching hints, misbehaviour
//! [`Knob`]s), then use it:
//!
//! - **in process**: [`FakeServer::connect`] gives an `Arc<dyn Transport>`
//!   (an [`mcp_transport::Engine`] whose outbound queue the server consumes
//!   directly), and [`FakeServer::connector`] a [`mcp_transport::Connector`]
//!   making a fresh server per connection;
//! - **through bytes**: [`serve_lines`] over any `AsyncRead`/`AsyncWrite`
//!   (newline-delimited JSON), and [`serve_stdio`] on the process's own
//!   stdio, which the `mcp-reference-server` binary runs ([`binaries`]
//!   finds or builds it for tests in any crate);
//! - **over HTTP**: [`http::HttpFake`] on a loopback socket (feature
//!   `http`, on by default), which `mcp-reference-server --http PORT` runs:
//!   legacy Streamable HTTP with sessions and resumable streams, modern
//!   Streamable HTTP with its header checks, and the 2024-11-05 HTTP+SSE
//!   transport, with misbehaviour knobs ([`http::HttpKnob`]);
//! - **behind OAuth**: [`http::ProtectedHttpFake`] (feature `oauth`, on by
//!   default) puts it behind an OAuth authorization server of its own:
//!   metadata, registration, an authorization approved at once, PKCE,
//!   tokens that expire.
//!
//! Without its default features the crate is the server alone (tokio and
//! the protocol crates): what the `mcp` command embeds.
//!
//! It follows the spec of each revision it claims. **Legacy**: `initialize`
//! (the requested version echoed, or the newest it has offered instead),
//! then `notifications/initialized`; any other request before that gets
//! `-32600` (except `ping`); `logging/setLevel` then `notifications/message`;
//! `resources/subscribe` then `notifications/resources/updated`; list changes
//! pushed; elicitation, sampling and roots asked with server-to-client
//! requests. **Modern**: every request's `_meta` checked (`-32602` when the
//! protocol version or client capabilities are missing, `-32022` with
//! `{supported, requested}` for an unknown version, `-32021` with
//! `{requiredCapabilities}` for a tool needing an undeclared client
//! capability); `server/discover`; `resultType` and `_meta` serverInfo on
//! every result, `ttlMs`/`cacheScope` on discover, lists and reads;
//! multi round-trip tools (`input_required` with a self-checking
//! `requestState`); change notifications only on `subscriptions/listen`
//! streams; logging by `_meta` logLevel. **Both**: cursors, progress for a
//! request with a progress token, cancellation (`notifications/cancelled`
//! stops the request; nothing is answered; a listen stream ends with its
//! graceful result), `completion/complete`.
//!
//! # Default content
//!
//! Tools:
//!
//! | tool | does |
//! |---|---|
//! | `echo` | returns `arguments.text` |
//! | `structured` | `{sum, product}` of `a` and `b` as `structuredContent`, with an `outputSchema` |
//! | `fail` | returns `isError: true` |
//! | `slow` | `steps` (3) sleeps of `delayMs` (100), progress after each; honours cancel |
//! | `elicit` | asks a form elicitation `{name}` (needs `elicitation`) |
//! | `sample` | asks the model a question (needs `sampling`) |
//! | `roots` | asks for the roots (needs `roots`) |
//! | `mrtr_multi` | elicitation, then sampling, then (modern) a round with only `requestState` |
//! | `add_tool` | adds an echoing tool (`name`, or `added_<n>`) and announces `tools/list_changed` |
//! | `touch_resource` | counts `fake://counter` up (or changes `uri`) and announces `resources/updated` |
//! | `log` | sends `notifications/message` at `level` with `message` |
//!
//! The asking tools answer with the client's answers as JSON text, keyed
//! (`answer`; `login` and `capital` for `mrtr_multi`; `roots`).
//!
//! Resources: `fake://text/hello` (text/plain, `Hello from the fake MCP
//! server.\n`), `fake://blob/bytes` (application/octet-stream, the bytes
//! `00 01 02 fe ff`, base64 `AAEC/v8=`), `fake://json/config`
//! (application/json, `{"answer":42}`), `fake://counter` (text/plain, `0`).
//! Template: `fake://items/{id}` (reads as `item <id>`; `id` completes from
//! 1, 2, 3, 42). Prompts: `greeting` (argument `name`, required, completing
//! from Alice, Bob, Carol) and `simple` (no arguments).
//!
//! # Conformance fixtures
//!
//! [`FakeConfig::conformance`] (the binary's `--conformance`) serves, in
//! place of the default content, the fixtures the official MCP
//! conformance suite's server scenarios call (`conformance server --url
//! URL`): the tools `test_simple_text`, `test_image_content`,
//! `test_audio_content`, `test_embedded_resource`,
//! `test_multiple_content_types`, `test_error_handling`,
//! `test_tool_with_logging`, `test_logging_tool`, `test_tool_with_progress`,
//! `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
//! `test_elicitation_sep1330_enums`, `test_missing_capability`,
//! `test_streaming_elicitation`, `test_trigger_tool_change`,
//! `test_trigger_prompt_change`, `test_header_param` (an `x-mcp-header`
//! argument), `json_schema_2020_12_tool` (a JSON Schema 2020-12 input
//! schema) and the `test_input_required_result_*` tools; the resources `test://static-text`, `test://static-binary`,
//! `test://watched-resource` and the template `test://template/{id}/data`;
//! the prompts `test_simple_prompt`, `test_prompt_with_arguments`,
//! `test_prompt_with_embedded_resource`, `test_prompt_with_image` and
//! `test_input_required_result_prompt`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod binaries;
mod catalog;
mod config;
mod conformance;
mod content;
mod entries;
mod errors;
mod flow;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod legacy;
mod lines;
mod modern;
mod outbound;
mod server;
mod session;
mod skills;
mod tools;

pub use config::{
    CacheScope, DEFAULT_LEGACY_VERSIONS, DEFAULT_MODERN_VERSIONS, DiscoverAnswer, EraChoice,
    FakeConfig, Knob, Methods, default_capabilities,
};
pub use conformance::ConformanceTool;
pub use content::Content;
pub use entries::{
    FakePrompt, FakeResource, FakeTemplate, FakeTool, PromptArgument, ResourceBody, ToolBehavior,
};
pub use flow::{InputRequest, InputRound};
pub use lines::{Ending, serve_lines, serve_stdio};
pub use server::{FakeConnector, FakeServer};
pub use skills::{FakeSkill, demo_skills};
