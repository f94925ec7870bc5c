//! Documents as MCP resources: each document an endpoint serves is a resource with a stable URI,
//! `ragdown://<folder>/<folder-relative path>` (each path segment percent-encoded), titled by its
//! title and read as Markdown (a converted PDF, DOCX or HTML as the Markdown it was indexed as).
//! This module names and reads them over one folder's [`Engine`]; listing pages, templates and
//! change notices are the MCP adapter's (`mcp.rs`). It neither writes nor ranks.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::args::ListArgs;
use crate::documents::{self, LineRange};
use crate::{Engine, ToolError};

/// The scheme every resource URI starts with.
pub const SCHEME: &str = "ragdown://";

/// What a path segment keeps as it is: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One document as a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocResource {
    pub uri: String,
    /// The path as the endpoint names documents (its `name`).
    pub path: String,
    pub title: String,
    pub size: u64,
    /// When the file last changed: a subscribed document whose stamp moves is announced.
    pub mtime_ns: i64,
}

/// The URI of `path` (folder-relative) in `folder`.
pub fn uri(folder: &str, path: &str) -> String {
    let segments: Vec<String> = std::iter::once(folder)
        .chain(path.split('/'))
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    format!("{SCHEME}{}", segments.join("/"))
}

/// The folder and folder-relative path a URI names; `None` for anything that is not one of
/// ours (another scheme, no path, a segment that does not decode).
pub fn parse(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let mut segments = rest.split('/').map(|s| {
        percent_decode_str(s)
            .decode_utf8()
            .ok()
            .map(|d| d.into_owned())
    });
    let folder = segments.next()??;
    let path: Option<Vec<String>> = segments.collect();
    let path = path?.join("/");
    (!folder.is_empty() && !path.is_empty()).then_some((folder, path))
}

/// The template a client fills to name any document of `folder` (RFC 6570).
pub fn template(folder: &str) -> String {
    format!("{SCHEME}{}/{{+path}}", utf8_percent_encode(folder, SEGMENT))
}

/// Every document `engine` serves, in path order.
pub fn of_engine(engine: &Engine) -> Result<Vec<DocResource>, ToolError> {
    let listing = documents::list(engine, &ListArgs::default())?;
    Ok(listing
        .documents
        .into_iter()
        .map(|d| DocResource {
            uri: uri(&engine.name, &engine.scoped(&d.path)),
            path: d.path,
            title: d.title,
            size: d.size,
            mtime_ns: d.mtime_ns,
        })
        .collect())
}

/// The Markdown of the document `uri` names, when `engine` serves it; else the same
/// "not found" a missing document gets.
pub fn read(engine: &Engine, uri: &str) -> Result<String, ToolError> {
    let missing = || ToolError::not_found(format!("no such resource here: {uri}"));
    let (folder, path) = parse(uri).ok_or_else(missing)?;
    if folder != engine.name {
        return Err(missing());
    }
    let within = if engine.scope.is_empty() {
        path
    } else {
        path.strip_prefix(&format!("{}/", engine.scope))
            .ok_or_else(missing)?
            .to_string()
    };
    let doc = documents::read_doc(engine, &within, LineRange::default())?;
    // Only a document's own path names it: not a wikilink target or an alias.
    if doc.resolved_from.is_some() {
        return Err(missing());
    }
    Ok(doc.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_with_odd_names() {
        for (folder, path) in [
            ("work", "ops/backups.md"),
            ("my notes", "a b/c#d?.md"),
            ("ü", "ünï/çödé %20.md"),
        ] {
            let u = uri(folder, path);
            assert!(
                u.starts_with(SCHEME) && !u.contains(' ') && !u.contains('#'),
                "{u}"
            );
            assert_eq!(
                parse(&u),
                Some((folder.to_string(), path.to_string())),
                "{u}"
            );
        }
        assert_eq!(
            uri("work", "ops/backups.md"),
            "ragdown://work/ops/backups.md"
        );
        assert_eq!(parse("file:///etc/passwd"), None);
        assert_eq!(parse("ragdown://work"), None);
        assert_eq!(parse("ragdown://work/%ff.md"), None);
        assert_eq!(template("my notes"), "ragdown://my%20notes/{+path}");
    }
}
