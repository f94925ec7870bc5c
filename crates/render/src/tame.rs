//! One linear pass over the HTML a document renders to, before the sanitiser sees it, so that
//! what the page shows is bounded in cost and whole in content:
//!
//! - **Nesting is capped** at [`MAX_DEPTH`] open elements. The HTML parser under `ammonia`
//!   checks scopes by walking the open elements, so 30,000 nested list items (60 KB of `- `)
//!   cost a minute of a core; tags past the cap are dropped and their text kept.
//! - **Nothing hides the rest of the document.** A comment, `<style>`, `<script>`,
//!   `<textarea>`, `<title>` (or any raw-text element) that is never closed, and a tag that
//!   never ends, would swallow everything after it on the page while agents read it all over
//!   MCP: their opening is shown as text instead. A closed `<textarea>`, `<title>` or `<xmp>`
//!   shows its text; a closed `<style>`, `<script>` or `<iframe>` goes with its content.
//! - **No form control survives**: `<form>`, `<button>`, `<select>` and the like lose their
//!   tags (their text stays), and an `<input>` is kept only as a task list's checkbox.
//!
//! The pass counts open elements conservatively — an end tag closes only the element on top,
//! as a well-nested document's always does — so the parser's own stack is never deeper than
//! the count. It makes nothing safe by itself: `ammonia` still sanitises what comes out.

/// The most elements open at once: 64 is 32 nested list levels, far past any real document.
pub const MAX_DEPTH: usize = 64;

/// The longest tag read as one: a `<` whose tag has not ended this far on is shown as text.
/// Bounds the work a `<` that never closes can cost (a tag is read from each such `<`).
const MAX_TAG_BYTES: usize = 8 * 1024;

/// Elements whose content the HTML parser reads as text up to their own end tag.
const RAW_TEXT: &[&str] = &[
    "script",
    "style",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "textarea",
    "title",
    "plaintext",
];

/// Raw-text elements whose content is the document's text, shown when they are closed.
const SHOWN_RAW_TEXT: &[&str] = &["textarea", "title", "xmp"];

/// Elements that never hold others.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "image", "input", "keygen", "link", "meta",
    "param", "source", "track", "wbr",
];

/// Form controls and elements that keep their content out of view: their tags are dropped,
/// their text kept.
const DROPPED: &[&str] = &[
    "form", "button", "select", "option", "optgroup", "datalist", "fieldset", "legend", "label",
    "output", "meter", "progress", "keygen", "template", "dialog", "frameset", "frame",
];

/// Block elements that close an open `<p>` on top of the stack when they start.
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "div",
    "dl",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// A tag as read: its lower-cased name, its attributes, whether it is an end tag, and where
/// its text ends (just past `>`).
struct Tag {
    name: String,
    /// Each attribute's name and value, as byte ranges of the text (read only for `<input>`).
    attributes: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    end_tag: bool,
    end: usize,
}

/// Reads the tag starting at `start` (`<` then a letter, or `</` then a letter); `None` when
/// it does not end (a `>` outside quotes) within [`MAX_TAG_BYTES`].
fn read_tag(html: &str, start: usize) -> Option<Tag> {
    let html = &html[..html.len().min(start + MAX_TAG_BYTES)];
    let bytes = html.as_bytes();
    let end_tag = bytes.get(start + 1) == Some(&b'/');
    let mut i = start + if end_tag { 2 } else { 1 };
    let name_start = i;
    while i < bytes.len() && !matches!(bytes[i], b'>' | b'/') && !bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let name = html[name_start..i].to_ascii_lowercase();
    let mut attributes = Vec::new();
    loop {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        match bytes.get(i) {
            None => return None,
            Some(b'>') => break,
            Some(_) => {}
        }
        // An attribute name runs to a space, `/`, `>` or `=` (an `=` first belongs to it).
        let attr_start = i;
        i += 1;
        while i < bytes.len()
            && !matches!(bytes[i], b'>' | b'/' | b'=')
            && !bytes[i].is_ascii_whitespace()
        {
            i += 1;
        }
        let attr_name = attr_start..i;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = i..i;
        if bytes.get(i) == Some(&b'=') {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            match bytes.get(i) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let close = html[i + 1..].find(quote as char)? + i + 1;
                    value = i + 1..close;
                    i = close + 1;
                }
                Some(_) => {
                    let value_start = i;
                    while i < bytes.len() && bytes[i] != b'>' && !bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    value = value_start..i;
                }
                None => return None,
            }
        }
        attributes.push((attr_name, value));
    }
    Some(Tag {
        name,
        attributes,
        end_tag,
        end: i + 1,
    })
}

/// Searches that may fail: each remembers where it last found nothing, since a search from
/// further on cannot find anything either. So a thousand unclosed `<!--` or `<style>` cost one
/// scan of the text, not one each.
#[derive(Default)]
struct Misses {
    comment_close: Option<usize>,
    comment_bang_close: Option<usize>,
    gt: Option<usize>,
    raw_text: std::collections::HashMap<String, usize>,
}

impl Misses {
    /// `haystack[from..].find(needle)` as an absolute position, unless a search from at or
    /// before `from` already found nothing.
    fn find(memo: &mut Option<usize>, haystack: &str, from: usize, needle: &str) -> Option<usize> {
        if memo.is_some_and(|missed| from >= missed) {
            return None;
        }
        let found = haystack[from..].find(needle).map(|at| at + from);
        if found.is_none() {
            *memo = Some(from);
        }
        found
    }
}

/// Where the end tag `</name…>` closing a raw-text element starts and ends, searching `lower`
/// (the text in ASCII lower case) from `from`; `None` when it is never closed.
fn raw_text_close(
    html: &str,
    lower: &str,
    from: usize,
    name: &str,
    misses: &mut Misses,
) -> Option<(usize, usize)> {
    let needle = format!("</{name}");
    let mut memo = misses.raw_text.get(name).copied();
    let mut searched = from;
    let close = loop {
        let Some(at) = Misses::find(&mut memo, lower, searched, &needle) else {
            break None;
        };
        let after = html.as_bytes().get(at + needle.len());
        if after.is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>')) {
            break read_tag(html, at).map(|tag| (at, tag.end));
        }
        searched = at + needle.len();
    };
    if let Some(missed) = memo {
        misses.raw_text.insert(name.to_string(), missed);
    }
    close
}

/// Text shown as it is written: `&` stays (entities read the same), `<` and `>` escaped.
fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

/// The pass itself (see the module's doc).
pub fn tame(html: &str) -> String {
    let bytes = html.as_bytes();
    // ASCII lower case keeps every byte where it is: positions found here hold in `html`.
    let lower = html.to_ascii_lowercase();
    let mut misses = Misses::default();
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    // Open elements this pass kept, and those past the cap it dropped (their end tags go too).
    let mut open: Vec<String> = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let Some(lt) = html[i..].find('<').map(|at| at + i) else {
            out.push_str(&html[i..]);
            break;
        };
        out.push_str(&html[i..lt]);
        i = lt;
        let rest = &html[lt..];
        let next = bytes.get(lt + 1).copied();
        if let Some(inside) = rest.strip_prefix("<!--") {
            // `<!-->` and `<!--->` are whole (empty) comments.
            let close = if inside.starts_with('>') {
                Some(lt + 5)
            } else if inside.starts_with("->") {
                Some(lt + 6)
            } else {
                // `--!>` closes a comment too: the first of the two ends it.
                let usual = Misses::find(&mut misses.comment_close, html, lt + 4, "-->");
                let bang = Misses::find(&mut misses.comment_bang_close, html, lt + 4, "--!>");
                match (usual, bang) {
                    (Some(a), Some(b)) if b < a => Some(b + 4),
                    (Some(a), _) => Some(a + 3),
                    (None, b) => b.map(|b| b + 4),
                }
            };
            match close {
                Some(after) => i = after,
                None => {
                    out.push_str("&lt;");
                    i += 1;
                }
            }
            continue;
        }
        let letter = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphabetic());
        let tag_like = letter(next) || (next == Some(b'/') && letter(bytes.get(lt + 2).copied()));
        if !tag_like {
            // `<!doctype>`, `<?…>`, `</ >` and the like are comments to the parser: dropped
            // through their `>`, or shown when they never end. A lone `<` is text.
            if matches!(next, Some(b'!' | b'?' | b'/')) {
                match Misses::find(&mut misses.gt, html, lt, ">") {
                    Some(at) => i = at + 1,
                    None => {
                        out.push_str("&lt;");
                        i += 1;
                    }
                }
            } else {
                out.push_str("&lt;");
                i += 1;
            }
            continue;
        }
        let Some(tag) = read_tag(html, lt) else {
            // A tag that never ends would take the rest of the document with it.
            out.push_str("&lt;");
            i += 1;
            continue;
        };
        let written = &html[lt..tag.end];
        i = tag.end;
        if tag.end_tag {
            if dropped.last() == Some(&tag.name) {
                dropped.pop();
            } else if DROPPED.contains(&tag.name.as_str()) {
            } else {
                if open.last() == Some(&tag.name) {
                    open.pop();
                }
                out.push_str(written);
            }
            continue;
        }
        let name = tag.name.as_str();
        if RAW_TEXT.contains(&name) {
            let close = (name != "plaintext")
                .then(|| raw_text_close(html, &lower, tag.end, name, &mut misses))
                .flatten();
            match close {
                Some((content_end, after)) => {
                    if SHOWN_RAW_TEXT.contains(&name) {
                        push_text(&mut out, &html[tag.end..content_end]);
                    }
                    i = after;
                }
                None => push_text(&mut out, written),
            }
            continue;
        }
        if name == "input" {
            let attribute = |key: &str| {
                tag.attributes
                    .iter()
                    .find(|(k, _)| html[k.clone()].eq_ignore_ascii_case(key))
                    .map(|(_, v)| &html[v.clone()])
            };
            if attribute("type").is_some_and(|v| v.eq_ignore_ascii_case("checkbox")) {
                out.push_str(if attribute("checked").is_some() {
                    "<input type=\"checkbox\" checked=\"\" disabled=\"\">"
                } else {
                    "<input type=\"checkbox\" disabled=\"\">"
                });
            }
            continue;
        }
        if DROPPED.contains(&name) {
            continue;
        }
        if VOID.contains(&name) {
            out.push_str(written);
            continue;
        }
        // Elements the parser closes implicitly, when they are on top.
        let implied = match (open.last().map(String::as_str), name) {
            (Some("p"), n) => CLOSES_P.contains(&n),
            (Some("li"), "li") => true,
            (Some("dt" | "dd"), "dt" | "dd") => true,
            (Some("td" | "th"), "td" | "th" | "tr") => true,
            (Some("tr"), "tr") => true,
            _ => false,
        };
        if implied {
            open.pop();
        }
        if open.len() >= MAX_DEPTH {
            dropped.push(tag.name);
            continue;
        }
        out.push_str(written);
        open.push(tag.name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_past_the_cap_keeps_its_text_not_its_tags() {
        let html = "<ul><li>".repeat(100) + "deep" + &"</li></ul>".repeat(100);
        let out = tame(&html);
        assert_eq!(out.matches("<ul>").count(), MAX_DEPTH / 2);
        assert_eq!(
            out.matches("<ul>").count(),
            out.matches("</ul>").count(),
            "every kept tag keeps its end tag"
        );
        assert!(out.contains("deep"));
    }

    #[test]
    fn nothing_left_open_hides_the_rest() {
        for opening in [
            "<!-- never closed",
            "<style>p { display: none }",
            "<textarea>",
            "<script>",
            "<title>",
            "<div title=\"never closed",
            "<plaintext>",
        ] {
            let out = tame(&format!("<p>before</p>{opening}<p>after <b>bold</b></p>"));
            assert!(out.contains("after <b>bold</b>"), "{opening}: {out}");
            assert!(
                out.contains("&lt;"),
                "{opening}: its opening is shown: {out}"
            );
        }
    }

    #[test]
    fn closed_elements_show_their_text_or_go_whole() {
        assert_eq!(tame("<textarea>notes</textarea> after"), "notes after");
        assert_eq!(tame("a<style>p{}</style>b<script>x()</script >c"), "abc");
        assert_eq!(tame("a<!-- hidden -->b<!-->c"), "abc");
        assert_eq!(tame("a<!-- x --!>b<!-- y -->c"), "abc");
        assert_eq!(tame("<TEXTAREA>1 < 2</TEXTAREA>"), "1 &lt; 2");
    }

    #[test]
    fn only_a_checkbox_input_survives() {
        assert_eq!(
            tame("<input type=\"checkbox\" checked> done"),
            "<input type=\"checkbox\" checked=\"\" disabled=\"\"> done"
        );
        for hostile in [
            "<input type=\"password\">",
            "<input>",
            "<input/type=password>",
            "<INPUT TYPE=text value='x>y'>",
        ] {
            assert_eq!(tame(&format!("{hostile}z")), "z", "{hostile}");
        }
        assert_eq!(
            tame(
                "<form action=\"x\"><button>Go</button><select><option>a</option></select></form>"
            ),
            "Goa"
        );
    }

    #[test]
    fn well_nested_html_passes_unchanged() {
        let html = "<h1 id=\"h-a\">A</h1>\n<ul>\n<li>one &amp; <em>two</em></li>\n</ul>\n<p>x &lt; y</p>\n<pre><code>a\n</code></pre>\n";
        assert_eq!(tame(html), html);
    }

    #[test]
    fn the_pass_is_linear_in_openings_that_never_close() {
        for unit in [
            "<!--",
            "<style>",
            "<a b",
            "<!x",
            "<div title=\"",
            "<textarea>",
        ] {
            let html = unit.repeat(20_000);
            let started = std::time::Instant::now();
            let out = tame(&html);
            assert!(
                !out.contains('<'),
                "{unit}: every opening is shown as text: {}",
                &out[..200]
            );
            assert!(started.elapsed().as_secs() < 5, "{unit}");
        }
    }

    #[test]
    fn the_pass_is_linear_in_deep_input() {
        // 30,000 open divs: quadratic work would take seconds even in this test.
        let html = "<div>".repeat(30_000) + "x";
        let started = std::time::Instant::now();
        let out = tame(&html);
        assert_eq!(out.matches("<div>").count(), MAX_DEPTH);
        assert!(started.elapsed().as_secs() < 5);
    }
}
