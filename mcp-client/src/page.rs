//! One page of a listing, as a builder that is also the call:
//! `client.list_tools().await`, `client.list_tools().after(cursor).await`,
//! `client.list_tools().options(&options).await`.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

use mcp_protocol::methods::RequestMethod;
use mcp_protocol::types::PaginatedRequestParams;

use crate::client::Client;
use crate::error::Result;
use crate::options::CallOptions;

/// A request for one page of a list (`tools/list`, `resources/list`,
/// `resources/templates/list`, `prompts/list`), made by awaiting it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mcp_client::Result<()> {
/// # let fake = mcp_reference_server::FakeServer::new(Default::default());
/// # let client = mcp_client::Client::builder().connect(fake.connector()).await?;
/// use mcp_client::CallOptions;
///
/// let first = client.list_tools().await?;
/// if let Some(cursor) = first.next_cursor {
///     let next = client.list_tools().after(cursor).options(&CallOptions::new().bypass_cache()).await?;
///     println!("{} more", next.items.len());
/// }
/// # Ok(())
/// # }
/// ```
#[must_use = "a page is fetched when awaited"]
pub struct Page<'a, M: RequestMethod> {
    client: &'a Client,
    cursor: Option<String>,
    options: CallOptions,
    after: fn(&Client, &mut M::Result),
    method: PhantomData<M>,
}

impl<'a, M: RequestMethod> Page<'a, M> {
    pub(crate) fn new(client: &'a Client, after: fn(&Client, &mut M::Result)) -> Self {
        Page {
            client,
            cursor: None,
            options: CallOptions::new(),
            after,
            method: PhantomData,
        }
    }

    /// The page after `cursor` (a previous page's `nextCursor`), instead of
    /// the first.
    pub fn after(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// The page after `cursor` when there is one.
    pub(crate) fn maybe_after(mut self, cursor: Option<String>) -> Self {
        self.cursor = cursor;
        self
    }

    /// Per-call options (timeout, `_meta`, cache bypass…).
    pub fn options(mut self, options: &CallOptions) -> Self {
        self.options = options.clone();
        self
    }
}

impl<'a, M> IntoFuture for Page<'a, M>
where
    M: RequestMethod<Params = PaginatedRequestParams> + 'a,
    M::Result: Send,
{
    type Output = Result<M::Result>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<M::Result>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let params = match self.cursor {
                Some(c) => PaginatedRequestParams::new().with_cursor(c),
                None => PaginatedRequestParams::new(),
            };
            let mut result = self.client.request_with::<M>(params, &self.options).await?;
            (self.after)(self.client, &mut result);
            Ok(result)
        })
    }
}

impl<M: RequestMethod> std::fmt::Debug for Page<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("method", &M::METHOD)
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}
