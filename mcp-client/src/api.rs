//! The typed API: tools, resources, prompts, completion; the same calls in
//! every era.

use std::future::IntoFuture;

use mcp_protocol::Era;
use mcp_protocol::methods::{
    self as m, CallTool, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources,
    ListTools, ReadResource, RequestMethod,
};
use mcp_protocol::types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResult, InputRequiredResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
    SubscribeRequestParams, Tool,
};
use serde_json::Value;

use crate::call;
use crate::client::{Client, parse_result, to_params};
use crate::error::{ClientError, Result};
use crate::mrtr::{InputAnswer, InputRound, Outcome, fulfil, retry_params};
use crate::options::CallOptions;
use crate::page::Page;
use crate::tool_schemas::drop_invalid_tools;

impl Client {
    /// One page of `tools/list`: the first, or with
    /// [`Page::after`] a later one.
    ///
    /// Tools whose `x-mcp-header` annotations are invalid are left out,
    /// with a warning, as the spec asks.
    pub fn list_tools(&self) -> Page<'_, ListTools> {
        Page::new(self, |client, result: &mut ListToolsResult| {
            drop_invalid_tools(&mut result.items);
            client.session.output_schemas.learn(&result.items);
            client.session.input_schemas.learn(&result.items);
            client.session.resend.learn_tools(&result.items);
        })
    }

    /// Every tool, following `nextCursor` up to the page cap.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// for tool in client.list_all_tools().await? {
    ///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>> {
        self.paginate(
            m::TOOLS_LIST,
            |c| self.list_tools().maybe_after(c).into_future(),
            |r: ListToolsResult| (r.items, r.next_cursor),
        )
        .await
    }

    /// Calls a tool with JSON arguments (an object, or null for none).
    ///
    /// A result with `isError: true` is a result, not an error: the tool
    /// ran and failed, and the model should see why.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// use mcp_client::protocol::types::ContentBlock;
    ///
    /// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
    /// assert!(!result.is_error());
    /// assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "hi"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(tool_params(name, arguments)?, &CallOptions::new())
            .await
    }

    /// Calls a tool with typed params and per-call options. Requests for
    /// input (elicitation, sampling, roots) are answered through the
    /// client's handlers, in either era.
    pub async fn call_tool_with(
        &self,
        params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<CallToolResult> {
        let name = params.name.clone();
        let result = if self.sends_param_headers() {
            let params = &params;
            self.with_param_headers(params, options, |o| async move {
                self.request_with::<CallTool>(params.clone(), &o).await
            })
            .await?
        } else {
            // The arguments are moved into the request, not copied: they
            // may be large.
            let value = call_params_value(params)?;
            let result = call::complete(&self.session, m::TOOLS_CALL, value, options).await?;
            // Moved into place, not rebuilt: `structuredContent` and
            // `_meta` are already `Value`s.
            parse_result::<mcp_protocol::methods::CallTool>(result)?
        };
        if self.session.config.validate_structured_output {
            self.session
                .output_schemas
                .check(&name, &result)
                .map_err(|detail| ClientError::invalid(detail).with_method(m::TOOLS_CALL))?;
        }
        Ok(result)
    }

    /// Whether calls carry `Mcp-Param-*` headers: modern, over a
    /// transport that sends headers.
    fn sends_param_headers(&self) -> bool {
        self.era() == Era::Modern && self.session.transport().profile().sends_headers
    }

    /// Runs `send` with the call's `Mcp-Param-*` headers, from the tool's
    /// `x-mcp-header` annotations in the cached tool list (the tools are
    /// listed first when they never were). A `-32020` says the server
    /// reads the tool's annotations differently, so the list is read again
    /// and the call retried once with the rebuilt headers.
    async fn with_param_headers<T, Fut>(
        &self,
        params: &CallToolRequestParams,
        options: &CallOptions,
        send: impl Fn(CallOptions) -> Fut,
    ) -> Result<T>
    where
        Fut: Future<Output = Result<T>>,
    {
        // The listings are boxed: they run once, and unboxed they would
        // grow every call's future (copied at each level of the call).
        if !self.session.input_schemas.listed()
            && let Err(e) = Box::pin(self.list_all_tools()).await
        {
            tracing::debug!(error = %e, "could not list the tools for their headers");
        }
        let mut options = options.clone();
        options.headers = self.param_headers(params);
        match send(options.clone()).await {
            Err(e) if e.code() == Some(mcp_protocol::error_codes::HEADER_MISMATCH) => {
                tracing::info!(tool = %params.name, error = %e, "the server refused the call's headers; reading the tool list again");
                let fresh = CallOptions::new().bypass_cache();
                Box::pin(self.paginate(
                    m::TOOLS_LIST,
                    |c| {
                        self.list_tools()
                            .maybe_after(c)
                            .options(&fresh)
                            .into_future()
                    },
                    |r: ListToolsResult| (r.items, r.next_cursor),
                ))
                .await?;
                options.headers = self.param_headers(params);
                send(options).await
            }
            other => other,
        }
    }

    /// The `Mcp-Param-*` headers of a call, from the cached tool list.
    fn param_headers(&self, params: &CallToolRequestParams) -> Vec<(String, String)> {
        let empty = serde_json::Map::new();
        let arguments = params.arguments.as_ref().unwrap_or(&empty);
        self.session.input_schemas.headers(&params.name, arguments)
    }

    /// One round of `tools/call` in manual mode: an `input_required`
    /// answer is handed back instead of fulfilled. Call again with the same
    /// params and an [`InputAnswer`] to it (the client's handlers can make
    /// one: [`fulfil_input`](Self::fulfil_input)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(mcp_reference_server::FakeConfig::modern());
    /// // A handler declares elicitation; here the rounds are answered by hand.
    /// let client = mcp_client::Client::builder()
    ///     .on_elicitation(|_, _| async { unreachable!("answered by hand") })
    ///     .connect(fake.connector())
    ///     .await?;
    /// use mcp_client::CallOptions;
    /// use mcp_client::mrtr::{InputAnswer, Outcome};
    /// use mcp_client::protocol::types::{CallToolRequestParams, ElicitResult, InputResponse, InputResponses};
    ///
    /// let params = CallToolRequestParams::new("elicit");
    /// let options = CallOptions::new();
    /// let mut answer = None;
    /// let result = loop {
    ///     match client.call_tool_once(&params, answer.as_ref(), &options).await? {
    ///         Outcome::Complete(result) => break result,
    ///         Outcome::InputRequired(asked) => {
    ///             // Decide each answer yourself (here: accept with nothing).
    ///             let mut responses = InputResponses::new();
    ///             for key in asked.input_requests.iter().flatten().map(|(k, _)| k) {
    ///                 let content = serde_json::Map::from_iter([("name".into(), "Ada".into())]);
    ///                 responses.insert(key.clone(), InputResponse::Elicitation(ElicitResult::accept(content)));
    ///             }
    ///             answer = Some(InputAnswer::to(&asked, responses));
    ///         }
    ///         _ => unreachable!(),
    ///     }
    /// };
    /// assert!(!result.is_error());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_once(
        &self,
        params: &CallToolRequestParams,
        answer: Option<&InputAnswer>,
        options: &CallOptions,
    ) -> Result<Outcome<CallToolResult>> {
        if self.sends_param_headers() {
            return self
                .with_param_headers(params, options, |o| async move {
                    self.once::<CallTool>(params, answer, &o).await
                })
                .await;
        }
        self.once::<CallTool>(params, answer, options).await
    }

    /// One round of `prompts/get` in manual mode; see
    /// [`call_tool_once`](Self::call_tool_once).
    pub async fn get_prompt_once(
        &self,
        params: &GetPromptRequestParams,
        answer: Option<&InputAnswer>,
        options: &CallOptions,
    ) -> Result<Outcome<GetPromptResult>> {
        self.once::<GetPrompt>(params, answer, options).await
    }

    /// One round of `resources/read` in manual mode; see
    /// [`call_tool_once`](Self::call_tool_once).
    pub async fn read_resource_once(
        &self,
        params: &ReadResourceRequestParams,
        answer: Option<&InputAnswer>,
        options: &CallOptions,
    ) -> Result<Outcome<ReadResourceResult>> {
        self.once::<ReadResource>(params, answer, options).await
    }

    /// Answers a round's input requests through the client's handlers, as
    /// the automatic calls do, for a caller who drives the rounds itself.
    pub async fn fulfil_input(&self, asked: &InputRequiredResult) -> Result<InputAnswer> {
        let responses = match &asked.input_requests {
            Some(requests) => {
                let round = InputRound {
                    method: None,
                    target: None,
                    round: 1,
                    version: self.session.version(),
                    request_id: None,
                    on_behalf_of: None,
                    handlers: self.session.config.handlers.clone(),
                };
                fulfil(&self.session.config, requests, &round, None).await?
            }
            None => Default::default(),
        };
        Ok(InputAnswer::to(asked, responses))
    }

    /// One page of `resources/list`; see [`list_tools`](Self::list_tools).
    pub fn list_resources(&self) -> Page<'_, ListResources> {
        Page::new(self, |_, _| {})
    }

    /// Every resource, following `nextCursor` up to the page cap.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.paginate(
            m::RESOURCES_LIST,
            |c| self.list_resources().maybe_after(c).into_future(),
            |r: ListResourcesResult| (r.items, r.next_cursor),
        )
        .await
    }

    /// One page of `resources/templates/list`; see
    /// [`list_tools`](Self::list_tools).
    pub fn list_resource_templates(&self) -> Page<'_, ListResourceTemplates> {
        Page::new(self, |_, _| {})
    }

    /// Every resource template, following `nextCursor` up to the page cap.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.paginate(
            m::RESOURCES_TEMPLATES_LIST,
            |c| self.list_resource_templates().maybe_after(c).into_future(),
            |r: ListResourceTemplatesResult| (r.items, r.next_cursor),
        )
        .await
    }

    /// Reads a resource.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// use mcp_client::protocol::types::ResourceContents;
    ///
    /// let read = client.read_resource("fake://text/hello").await?;
    /// if let ResourceContents::Text(text) = &read.contents[0] {
    ///     print!("{}", text.text);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.request::<ReadResource>(ReadResourceRequestParams::new(uri))
            .await
    }

    /// Reads a resource with typed params and per-call options.
    pub async fn read_resource_with(
        &self,
        params: ReadResourceRequestParams,
        options: &CallOptions,
    ) -> Result<ReadResourceResult> {
        self.request_with::<ReadResource>(params, options).await
    }

    /// Subscribes to a resource's changes (legacy `resources/subscribe`).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.request::<m::Subscribe>(SubscribeRequestParams::new(uri))
            .await?;
        // Subscribed again if the session has to be renewed.
        self.session.renewal.subscribed(uri);
        Ok(())
    }

    /// Ends a subscription (legacy `resources/unsubscribe`).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.session.renewal.unsubscribed(uri);
        self.request::<m::Unsubscribe>(SubscribeRequestParams::new(uri))
            .await
            .map(drop)
    }

    /// One page of `prompts/list`; see [`list_tools`](Self::list_tools).
    pub fn list_prompts(&self) -> Page<'_, ListPrompts> {
        Page::new(self, |_, _| {})
    }

    /// Every prompt, following `nextCursor` up to the page cap.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.paginate(
            m::PROMPTS_LIST,
            |c| self.list_prompts().maybe_after(c).into_future(),
            |r: ListPromptsResult| (r.items, r.next_cursor),
        )
        .await
    }

    /// Gets a prompt with string arguments: any iterator of key/value
    /// pairs (an array of tuples, a `HashMap`, a `BTreeMap`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// let prompt = client.get_prompt("greeting", [("name", "Ada")]).await?;
    /// println!("{} messages", prompt.messages.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        self.request::<GetPrompt>(params).await
    }

    /// Gets a prompt with typed params and per-call options.
    pub async fn get_prompt_with(
        &self,
        params: GetPromptRequestParams,
        options: &CallOptions,
    ) -> Result<GetPromptResult> {
        self.request_with::<GetPrompt>(params, options).await
    }

    /// `completion/complete`: suggestions for a prompt or template argument.
    pub async fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult> {
        self.request::<Complete>(params).await
    }

    async fn once<M: RequestMethod>(
        &self,
        params: &M::Params,
        answer: Option<&InputAnswer>,
        options: &CallOptions,
    ) -> Result<Outcome<M::Result>> {
        let params = to_params(M::METHOD, params)?;
        let params = match answer {
            Some(a) => retry_params(&params, &a.responses, a.request_state.as_deref()),
            None => params,
        };
        match call::one_round(&self.session, M::METHOD, params, options).await? {
            Outcome::Complete(v) => Ok(Outcome::Complete(parse_result::<M>(v)?)),
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(ir)),
        }
    }

    pub(crate) async fn paginate<R, T, F, Fut>(
        &self,
        method: &str,
        mut fetch: F,
        split: impl Fn(R) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: Future<Output = Result<R>>,
    {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..self.session.config.max_list_pages {
            let (items, next) = split(fetch(cursor.take()).await?);
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(ClientError::usage(format!(
            "the listing has more than {} pages; raise ClientBuilder::max_list_pages",
            self.session.config.max_list_pages
        ))
        .with_method(method))
    }
}

/// `tools/call` params as JSON, the arguments moved rather than
/// serialized (which would copy every string in them).
fn call_params_value(mut params: CallToolRequestParams) -> Result<Value> {
    let arguments = params.arguments.take();
    let mut value = to_params(m::TOOLS_CALL, &params)?;
    if let (Some(arguments), Value::Object(map)) = (arguments, &mut value) {
        map.insert("arguments".into(), Value::Object(arguments));
    }
    Ok(value)
}

fn tool_params(name: &str, arguments: Value) -> Result<CallToolRequestParams> {
    let params = CallToolRequestParams::new(name);
    match arguments {
        Value::Null => Ok(params),
        Value::Object(map) => Ok(params.with_arguments(map)),
        other => Err(ClientError::usage(format!(
            "tool arguments must be a JSON object, not {other}"
        ))
        .with_method(m::TOOLS_CALL)),
    }
}
