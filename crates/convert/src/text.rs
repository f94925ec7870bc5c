//! Plain text: kept line for line (so a hit's lines are the file's lines), with Markdown's
//! block markers at line starts escaped so a `# comment` or `- item` reads as text.

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
