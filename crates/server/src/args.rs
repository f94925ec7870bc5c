//! What each tool takes: one argument type per tool, deserialised from the call's JSON and
//! the source of the tool's JSON schema (doc comments become the schema's descriptions). The
//! engine ([`crate::documents`], [`crate::context`]) takes these same types; there are no
//! mirror structs between the schema and the engine.

use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WrittenBy {
    Agent,
    User,
}

impl From<WrittenBy> for ragdown_search::WrittenBy {
    fn from(w: WrittenBy) -> Self {
        match w {
            WrittenBy::Agent => Self::Agent,
            WrittenBy::User => Self::User,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecallFormat {
    #[default]
    Text,
    Json,
}

// `ragdown_folders` takes nothing.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FoldersArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateFolderArgs {
    /// The folder's directory name.
    pub name: String,
    /// A title to show instead of the name.
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RecallArgs {
    /// What to look for, in words or with the exact name, error or flag.
    pub query: String,
    /// How many sections (1–50, default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<usize>,
    /// Only documents under this subfolder.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Only documents with this tag (nested tags match: `project` matches `project/alpha`).
    #[serde(default)]
    pub tag: Option<String>,
    /// `agent`: documents an agent wrote (frontmatter created_by); `user`: the rest.
    #[serde(default)]
    pub written_by: Option<WrittenBy>,
    /// `text` (default): the hits as readable text; `json`: an array of hits with path,
    /// title, heading, lines, similarity, score, sources, tags, modified and text.
    #[serde(default)]
    pub format: RecallFormat,
    /// Characters per hit in text output (default RAGDOWN_TEXT_LIMIT, 0 = never clip).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// A document path relative to the folder, or a wikilink target (`Note`, `Note#Heading`, `sub/Note`, an alias).
    pub path: String,
    /// First line to return (1-based).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<usize>,
    /// Last line to return.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<usize>,
    /// Also this many whole sections before the lines asked for (widen a hit).
    #[serde(default)]
    pub before: Option<usize>,
    /// Also this many whole sections after them.
    #[serde(default)]
    pub after: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PathArgs {
    /// A document path relative to the folder.
    pub path: String,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListSort {
    #[default]
    Path,
    Recent,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only documents under this subfolder, e.g. `projects/`.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Only documents with this tag (nested tags match: `project` matches `project/alpha`).
    #[serde(default)]
    pub tag: Option<String>,
    /// `agent`: documents an agent wrote (frontmatter created_by); `user`: the rest.
    #[serde(default)]
    pub written_by: Option<WrittenBy>,
    /// Documents written in this session (frontmatter `session`).
    #[serde(default)]
    pub session_id: Option<String>,
    /// `path` (default) or `recent` (last changed first).
    #[serde(default)]
    pub sort: ListSort,
    /// Most documents (1–1000, default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StatsArgs {
    /// Also list every document with its chunk count.
    #[serde(default)]
    pub include_files: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberArgs {
    /// The document's title, written as its first heading.
    pub title: String,
    /// The body, in Markdown.
    pub content: String,
    /// Tags for its frontmatter (`project/alpha` nests under `project`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// File name without `.md` (default `<date>-<title-slug>`).
    #[serde(default)]
    pub name: Option<String>,
    /// Paths of documents this one replaces because a fact changed.
    #[serde(default)]
    pub supersedes: Vec<String>,
    /// Stable id of the conversation, recorded in the document's frontmatter (`session`).
    #[serde(default)]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IngestFormat {
    Text,
    Markdown,
    Html,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IngestArgs {
    /// What the client fetched: a page's HTML, plain text, or Markdown.
    pub content: String,
    /// `html` (main content extracted, converted to Markdown), `text` or `markdown`.
    pub format: IngestFormat,
    /// Where it came from (a URL or a name). The same source again replaces the document.
    pub source: String,
    /// A title (default: the content's first heading, else the source).
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// A Markdown path (.md, .markdown, .mdx) relative to the folder.
    pub path: String,
    /// The document's new Markdown, or with `append`, what to add.
    pub text: String,
    /// The hash ragdown_read_doc returned; required to replace an existing document.
    #[serde(default)]
    pub base_hash: Option<String>,
    /// Add the text at the end (or at the end of `heading`'s section) instead of replacing.
    #[serde(default)]
    pub append: bool,
    /// With `append`: add to the end of the section under this heading.
    #[serde(default)]
    pub heading: Option<String>,
    /// Stable id of the conversation, recorded in the frontmatter of a document this creates.
    #[serde(default)]
    pub session_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditItem {
    /// The exact passage to replace, character for character.
    pub old_text: String,
    /// Its replacement (empty deletes it).
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// A Markdown path (.md, .markdown, .mdx) relative to the folder.
    pub path: String,
    /// Applied in order, all or nothing.
    pub edits: Vec<EditItem>,
    /// The hash ragdown_read_doc returned. Optional: when given and the file changed since,
    /// nothing is written.
    #[serde(default)]
    pub base_hash: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveArgs {
    /// The document or subfolder to move.
    pub from: String,
    /// Its whole new path, name included.
    pub to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    /// The document or subfolder, relative to the folder, e.g. `ops/pg.md` or `ops`.
    pub path: String,
    /// Needed to delete a non-empty subfolder.
    #[serde(default)]
    pub recursive: bool,
    /// Delete only the version that was read.
    #[serde(default)]
    pub base_hash: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReindexArgs {
    /// Drop everything and re-embed every document.
    #[serde(default)]
    pub full: bool,
}

// How `ragdown_context` answers: the block as text, or a Claude Code hook's JSON (a plain
// comment: a doc comment would change the tool's published schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ContextFormat {
    #[default]
    Text,
    ClaudeCode,
}

#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ContextArgs {
    /// The user's prompt (may be empty, e.g. with `reset` after a compaction).
    pub prompt: String,
    /// Remembers what was injected, so a section is not repeated in this session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Forget this session's memory first.
    #[serde(default)]
    pub reset: bool,
    /// `text` (the block or empty text) or `claude-code` (UserPromptSubmit hook JSON).
    #[serde(default)]
    pub format: ContextFormat,
    /// Most sections (1–50, default 4).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<usize>,
    /// Lowest cosine similarity injected, an extra floor on this model's scale (default: none).
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Lowest share of the best injected hit's similarity (0–1, default 0: off).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_ratio: Option<f32>,
    /// Lowest evidence that the prompt's strongest section answers it: the share of the
    /// prompt's rare terms it holds plus its closeness above unrelated prompts' (default 0.75;
    /// the sections after it need 80% of it; `ragdown eval` calibrates it on your own prompts).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub min_evidence: Option<f32>,
    /// Most characters (default 6000).
    #[serde(default)]
    pub max_chars: Option<usize>,
}
