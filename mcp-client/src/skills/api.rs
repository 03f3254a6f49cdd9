//! The Skills extension's methods on [`Client`]: `skills/list` (cached for
//! its `ttlMs`, as the other lists), `skills/get` and
//! `resources/directory/read`, in either era.

use std::future::IntoFuture;

use mcp_protocol::methods::{self as m, GetSkill, ListSkills, ReadDirectory};
use mcp_protocol::types::{
    GetSkillRequestParams, ListSkillsResult, ReadDirectoryRequestParams, ReadDirectoryResult,
    Resource, SkillEntry, SkillsSettings,
};

use crate::client::Client;
use crate::error::Result;
use crate::options::CallOptions;
use crate::page::Page;

impl Client {
    /// What the server declared of the Skills extension
    /// (`io.modelcontextprotocol/skills` under its capabilities'
    /// `extensions`); `None` when it did not declare it, and then the
    /// client sends no skills request while it enforces capabilities.
    ///
    /// ```no_run
    /// # fn demo(client: mcp_client::Client) {
    /// match client.skills_extension() {
    ///     Some(skills) => println!("skills, directory reads: {}", skills.directory_read()),
    ///     None => println!("no skills"),
    /// }
    /// # }
    /// ```
    pub fn skills_extension(&self) -> Option<SkillsSettings> {
        SkillsSettings::of(&self.server_capabilities())
    }

    /// One page of `skills/list`; see [`list_tools`](Self::list_tools).
    /// Listing fetches no skill file. A server may list only some of its
    /// skills, or none: an empty listing is no proof it has none.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # use mcp_reference_server::{FakeConfig, FakeServer, demo_skills};
    /// # let server = FakeServer::new(FakeConfig::modern().with_skills(demo_skills(), true));
    /// # let client = mcp_client::Client::builder().connect(server.connector()).await?;
    /// let page = client.list_skills().await?;
    /// for skill in &page.items {
    ///     println!("{} ({}): {}", skill.name().unwrap_or("?"), skill.uri, skill.description().unwrap_or(""));
    /// }
    /// assert_eq!(page.items[0].uri, "skill://pdf-processing/SKILL.md");
    /// # Ok(())
    /// # }
    /// ```
    pub fn list_skills(&self) -> Page<'_, ListSkills> {
        Page::new(self, |_, _| {})
    }

    /// Every skill the server lists, following `nextCursor` up to the page
    /// cap.
    pub async fn list_all_skills(&self) -> Result<Vec<SkillEntry>> {
        self.paginate(
            m::SKILLS_LIST,
            |c| self.list_skills().maybe_after(c).into_future(),
            |r: ListSkillsResult| (r.items, r.next_cursor),
        )
        .await
    }

    /// `skills/get`: the current entry of the skill whose `SKILL.md` is at
    /// `uri`, listed or not. A server answers `-32602` for a URI that is
    /// not one of its skills.
    ///
    /// ```no_run
    /// # async fn demo(client: mcp_client::Client) -> mcp_client::Result<()> {
    /// let entry = client.get_skill("skill://pdf-processing/SKILL.md").await?;
    /// println!("{} files", entry.resources.files().map_or(0, |f| f.len()));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry> {
        self.request::<GetSkill>(GetSkillRequestParams::new(uri))
            .await
            .map(|r| r.skill)
    }

    /// One page of `resources/directory/read`: the direct children of the
    /// directory resource at `uri` (subdirectories have the MIME type
    /// `inode/directory`), from `cursor` when given. Never sent unless the
    /// server declared `directoryRead: true`: without it this fails before
    /// anything is sent, whatever
    /// [`enforce_server_capabilities`](crate::ClientBuilder::enforce_server_capabilities)
    /// says.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # use mcp_reference_server::{FakeConfig, FakeServer, demo_skills};
    /// # let server = FakeServer::new(FakeConfig::legacy().with_skills(demo_skills(), true));
    /// # let client = mcp_client::Client::builder().connect(server.connector()).await?;
    /// if client.skills_extension().is_some_and(|s| s.directory_read()) {
    ///     let page = client.read_directory("skill://pdf-processing/templates", None).await?;
    ///     for child in page.items {
    ///         println!("{} {}", child.uri, child.mime_type.unwrap_or_default());
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadDirectoryResult> {
        let mut params = ReadDirectoryRequestParams::new(uri);
        params.cursor = cursor.map(str::to_owned);
        self.request_with::<ReadDirectory>(params, &CallOptions::new())
            .await
    }

    /// Every child of a directory resource, following `nextCursor` up to
    /// the page cap.
    pub async fn read_all_directory(&self, uri: &str) -> Result<Vec<Resource>> {
        self.paginate(
            m::RESOURCES_DIRECTORY_READ,
            |c| async move { self.read_directory(uri, c.as_deref()).await },
            |r: ReadDirectoryResult| (r.items, r.next_cursor),
        )
        .await
    }
}
