//! Frontmatter: finding the `---` block at the top of a document and reading the keys ragdown
//! understands (title, tags, aliases, description, supersedes, created_by, session).
//!
//! Owns only the YAML → [`Frontmatter`] step. It never fails: malformed YAML becomes a warning
//! and an empty [`Frontmatter`], so the document is still indexed as plain text.

use serde_yaml_ng::Value;

/// Where the frontmatter block sits in the document, in 0-based line indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontmatterSpan {
    /// Index of the closing `---`/`...` line; the body starts on the next line.
    pub closing_line: usize,
}

/// The keys ragdown reads from a document's frontmatter. Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    /// Paths as written, relative to the document's own directory.
    pub supersedes: Vec<String>,
    pub created_by: Option<String>,
    pub session: Option<String>,
}

/// Finds the frontmatter block: the first line, trimmed, is `---`, and a later line starting at
/// column 0 is `---` or `...` (trailing whitespace allowed). Without a closing line there is no
/// frontmatter and the whole file is body.
pub fn find_span(lines: &[&str]) -> Option<FrontmatterSpan> {
    if lines.first().map(|l| l.trim()) != Some("---") {
        return None;
    }
    lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, line)| {
            let end = line.trim_end();
            end == "---" || end == "..."
        })
        .map(|(closing_line, _)| FrontmatterSpan { closing_line })
}

/// Parses the YAML between the fences. `Err` carries a one-line reason for the warning.
pub fn parse(yaml: &str) -> Result<Frontmatter, String> {
    let Some(map) = mapping(yaml)? else {
        return Ok(Frontmatter::default());
    };
    let get = |key: &str| map.get(Value::String(key.to_string()));
    Ok(Frontmatter {
        title: get("title").and_then(scalar),
        tags: get("tags").map(|v| list(v, true)).unwrap_or_default(),
        aliases: dedup(get("aliases").map(|v| list(v, false)).unwrap_or_default()),
        description: get("description").and_then(scalar),
        supersedes: get("supersedes")
            .map(|v| {
                list(v, false)
                    .into_iter()
                    .flat_map(|s| {
                        s.split(',')
                            .map(|p| p.trim().to_string())
                            .collect::<Vec<_>>()
                    })
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        created_by: get("created_by").and_then(scalar),
        session: get("session").and_then(scalar),
    })
}

/// Every key of the frontmatter with its value as one display line, in file order: what a
/// property table shows. A list is its items joined by `, `; a nested mapping its YAML on one
/// line. Malformed YAML or a non-mapping gives `Err` with the reason, as [`parse`] does.
pub fn properties(yaml: &str) -> Result<Vec<(String, String)>, String> {
    let Some(map) = mapping(yaml)? else {
        return Ok(Vec::new());
    };
    Ok(map
        .iter()
        .map(|(key, value)| (display(key), display(value)))
        .collect())
}

/// The YAML between the fences as a mapping; `None` when there is nothing in it, `Err` when it
/// is malformed or not `key: value` pairs.
fn mapping(yaml: &str) -> Result<Option<serde_yaml_ng::Mapping>, String> {
    if yaml.trim().is_empty() {
        return Ok(None);
    }
    match serde_yaml_ng::from_str(yaml).map_err(|e| e.to_string())? {
        Value::Mapping(map) => Ok(Some(map)),
        Value::Null => Ok(None),
        _ => Err("frontmatter is not a key: value mapping".to_string()),
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Sequence(items) => items.iter().map(display).collect::<Vec<_>>().join(", "),
        Value::Mapping(_) => serde_yaml_ng::to_string(value)
            .map(|yaml| yaml.trim().replace('\n', "; "))
            .unwrap_or_default(),
        other => scalar(other).unwrap_or_default(),
    }
}

/// A scalar as one trimmed line (block scalars are folded to single spaces); empty is absent.
fn scalar(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Tagged(t) => return scalar(&t.value),
        _ => return None,
    };
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!folded.is_empty()).then_some(folded)
}

/// A list given as a YAML sequence or as one scalar. `split_scalar` splits a scalar on
/// whitespace and commas (tags: `tags: a, b c`); aliases keep a scalar whole.
fn list(value: &Value, split_scalar: bool) -> Vec<String> {
    match value {
        Value::Sequence(items) => items.iter().filter_map(scalar).collect(),
        other => match scalar(other) {
            Some(s) if split_scalar => s
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
            Some(s) => vec![s],
            None => Vec::new(),
        },
    }
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_keep_file_order_and_show_lists_on_one_line() {
        let props =
            properties("title: Backups\ntags: [ops, db]\nowner:\n  team: infra\nempty:\n").unwrap();
        assert_eq!(
            props,
            vec![
                ("title".to_string(), "Backups".to_string()),
                ("tags".to_string(), "ops, db".to_string()),
                ("owner".to_string(), "team: infra".to_string()),
                ("empty".to_string(), String::new()),
            ]
        );
        assert!(properties("- a\n- b\n").is_err());
        assert!(properties("a: [unclosed\n").is_err());
    }

    #[test]
    fn span_needs_a_closing_line() {
        assert_eq!(find_span(&["---", "a: 1"]), None);
        assert_eq!(
            find_span(&["---", "a: 1", "...", "x"]),
            Some(FrontmatterSpan { closing_line: 2 })
        );
        assert_eq!(find_span(&["text", "---"]), None);
    }

    #[test]
    fn reads_lists_and_scalars() {
        let fm = parse(
            "title: \"Backups\"\ntags: ops, infra/db\naliases:\n  - Big, Old Name\n  - BON\n\
             description: >\n  one\n  two\nsupersedes: [a.md, b.md]\ncreated_by: ragdown_remember\n",
        )
        .unwrap();
        assert_eq!(fm.title.as_deref(), Some("Backups"));
        assert_eq!(fm.tags, vec!["ops", "infra/db"]);
        assert_eq!(fm.aliases, vec!["Big, Old Name", "BON"]);
        assert_eq!(fm.description.as_deref(), Some("one two"));
        assert_eq!(fm.supersedes, vec!["a.md", "b.md"]);
        assert_eq!(fm.created_by.as_deref(), Some("ragdown_remember"));
        assert_eq!(fm.session, None);
    }

    #[test]
    fn malformed_yaml_is_an_error_not_a_panic() {
        assert!(parse("title: [unclosed\n").is_err());
        assert!(parse("- just\n- a list\n").is_err());
    }
}
