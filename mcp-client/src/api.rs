//! The typed API: tools, resources, prompts, completion; the same calls in
//! every era.

use mcp_protocol::methods::{
    self as m, CallTool, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources,
    ListTools, ReadResource, RequestMethod,
};
use mcp_protocol::types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
    SubscribeRequestParams, Tool,
};
use serde_json::Value;

use crate::client::{Client, parse, to_params};
use crate::error::{ClientError, Result};
use crate::mrtr::Outcome;
use crate::options::CallOptions;
use crate::tool_schemas::drop_invalid_tools;

fn page(cursor: Option<String>) -> PaginatedRequestParams {
    match cursor {
        Some(c) => PaginatedRequestParams::new().with_cursor(c),
        None => PaginatedRequestParams::new(),
    }
}

impl Client {
    /// One page of `tools/list`.
    ///
    /// Tools whose `x-mcp-header` annotations are invalid are left out,
    /// with a warning, as the spec asks.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult> {
        self.list_tools_with(cursor, &CallOptions::new()).await
    }

    /// [`list_tools`](Self::list_tools) with per-call options.
    pub async fn list_tools_with(
        &self,
        cursor: Option<String>,
        options: &CallOptions,
    ) -> Result<ListToolsResult> {
        let mut result = self
            .request_with::<ListTools>(page(cursor), options)
            .await?;
        drop_invalid_tools(&mut result.tools);
        self.session.output_schemas.learn(&result.tools);
        Ok(result)
    }

    /// Every tool, following `nextCursor` up to the page cap.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_testkit::fake::FakeServer::new(Default::default());
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
            |c| self.list_tools(c),
            |r: ListToolsResult| (r.tools, r.next_cursor),
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
    /// # let fake = mcp_testkit::fake::FakeServer::new(Default::default());
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
        let result = self.request_with::<CallTool>(params, options).await?;
        if self.session.config.validate_structured_output {
            self.session
                .output_schemas
                .check(&name, &result)
                .map_err(|detail| ClientError::invalid(detail).with_method(m::TOOLS_CALL))?;
        }
        Ok(result)
    }

    /// One round of `tools/call` in manual mode: an `input_required`
    /// answer is handed back instead of fulfilled (see
    /// [`crate::mrtr::retry_params`]).
    pub async fn call_tool_once(
        &self,
        params: Value,
        options: &CallOptions,
    ) -> Result<Outcome<CallToolResult>> {
        self.once::<CallTool>(params, options).await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult> {
        self.request::<ListResources>(page(cursor)).await
    }

    /// Every resource, following `nextCursor` up to the page cap.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>> {
        self.paginate(
            m::RESOURCES_LIST,
            |c| self.list_resources(c),
            |r: ListResourcesResult| (r.resources, r.next_cursor),
        )
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult> {
        self.request::<ListResourceTemplates>(page(cursor)).await
    }

    /// Every resource template, following `nextCursor` up to the page cap.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.paginate(
            m::RESOURCES_TEMPLATES_LIST,
            |c| self.list_resource_templates(c),
            |r: ListResourceTemplatesResult| (r.resource_templates, r.next_cursor),
        )
        .await
    }

    /// Reads a resource.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_testkit::fake::FakeServer::new(Default::default());
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
            .await
            .map(drop)
    }

    /// Ends a subscription (legacy `resources/unsubscribe`).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.request::<m::Unsubscribe>(SubscribeRequestParams::new(uri))
            .await
            .map(drop)
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult> {
        self.request::<ListPrompts>(page(cursor)).await
    }

    /// Every prompt, following `nextCursor` up to the page cap.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        self.paginate(
            m::PROMPTS_LIST,
            |c| self.list_prompts(c),
            |r: ListPromptsResult| (r.prompts, r.next_cursor),
        )
        .await
    }

    /// Gets a prompt with string arguments.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_testkit::fake::FakeServer::new(Default::default());
    /// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
    /// let prompt = client
    ///     .get_prompt("greeting", [("name".to_owned(), "Ada".to_owned())])
    ///     .await?;
    /// println!("{} messages", prompt.messages.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (String, String)>,
    ) -> Result<GetPromptResult> {
        let params =
            GetPromptRequestParams::new(name).with_arguments(arguments.into_iter().collect());
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
        params: Value,
        options: &CallOptions,
    ) -> Result<Outcome<M::Result>> {
        self.session.gate(M::METHOD)?;
        let params = to_params(M::METHOD, &params)?;
        match self.session.send_once(M::METHOD, params, options).await? {
            Outcome::Complete(v) => Ok(Outcome::Complete(parse(M::METHOD, v)?)),
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(ir)),
        }
    }

    async fn paginate<R, T, F, Fut>(
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
