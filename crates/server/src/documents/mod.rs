//! Documents on disk, for the tools and `/api`: reading ([`read`]), changing ([`write`]),
//! moving with link rewriting ([`moving`]), and the file-system helpers they share
//! ([`files`]). Every path goes through [`crate::paths`]; every change is indexed before it
//! returns. Answers are plain data ([`crate::answers`]), rendered by the callers' edges.

pub mod files;
pub mod moving;
pub mod read;
pub mod write;

pub use files::{
    DocumentLock, atomic_write, create_new, document_text, is_version, lock_document,
    remove_leftover_temp_files,
};
pub use moving::move_paths;
pub use read::{LineRange, backlinks, list, listed, read_doc, search_kind, stats, superseded_by};
pub use write::{delete, edit, ingest, match_line_endings, remember, slug, write};
