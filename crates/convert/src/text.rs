//! Plain text: kept line for line (so a hit's lines are the file's lines), with the Markdown
//! block markers that would change a section's shape escaped at line starts — headings (a
//! `# comment` must not cut a section), fences, `---` and `>` — so they read as text. List
//! markers are left as they are: a `- item` line reads the same as a list item.

pub fn to_markdown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.starts_with('#')
            || trimmed.starts_with("```")
            || trimmed.starts_with("~~~")
            || trimmed.starts_with("---")
            || trimmed.starts_with('>');
        if marker {
            let indent = line.len() - trimmed.len();
            out.push_str(&line[..indent]);
            out.push('\\');
            out.push_str(trimmed);
        } else {
            out.push_str(line);
        }
    }
    out
}
