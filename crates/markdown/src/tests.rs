use super::*;
use proptest::prelude::*;

fn summary(doc: &Document) -> Vec<(String, String, usize, usize)> {
    doc.chunks
        .iter()
        .map(|c| {
            (
                c.breadcrumb.clone(),
                c.text.clone(),
                c.line_start,
                c.line_end,
            )
        })
        .collect()
}

#[test]
fn reference_example_sections() {
    let text = "# Backups\n\nWe back up nightly.\n\n## Restore\n\nRun it twice.\n\n### Replication\nLag under a second.";
    let doc = parse("backups.md", text);
    assert_eq!(doc.meta.title, "Backups");
    assert_eq!(
        summary(&doc),
        vec![
            ("Backups".into(), "We back up nightly.".into(), 3, 3),
            ("Backups › Restore".into(), "Run it twice.".into(), 7, 7),
            (
                "Backups › Restore › Replication".into(),
                "Lag under a second.".into(),
                10,
                10
            ),
        ]
    );
    assert_eq!(doc.chunks[2].heading, "Backups › Restore › Replication");
    assert_eq!(doc.headings[1].line, 5);
    assert_eq!(doc.headings[1].end_line, 10);
}

#[test]
fn frontmatter_lines_count_and_title_wins() {
    let text =
        "---\ntitle: Ops Guide\ntags: [ops]\n---\nIntro line.\n\n## Restore\nDo it. #db/pg\n";
    let doc = parse("x.md", text);
    assert_eq!(doc.meta.title, "Ops Guide");
    assert_eq!(doc.meta.tags, vec!["db/pg", "ops"]);
    assert_eq!(
        summary(&doc),
        vec![
            ("Ops Guide".into(), "Intro line.".into(), 5, 5),
            ("Ops Guide › Restore".into(), "Do it. #db/pg".into(), 8, 8),
        ]
    );
}

#[test]
fn title_falls_back_to_file_name() {
    let doc = parse("notes/my-note.md", "just text");
    assert_eq!(doc.meta.title, "my-note");
    assert_eq!(doc.chunks[0].breadcrumb, "my-note");
}

#[test]
fn skipped_levels_leave_no_empty_segment() {
    let doc = parse("a.md", "# A\n### C\ntext");
    assert_eq!(doc.chunks[0].heading, "A › C");
}

#[test]
fn malformed_frontmatter_is_a_warning_and_plain_text() {
    let text = "---\ntitle: [broken\n---\n# Real\nbody";
    let doc = parse("a.md", text);
    assert_eq!(doc.warnings.len(), 1);
    assert!(doc.warnings[0].contains("not valid YAML"));
    assert_eq!(doc.meta.title, "Real");
    assert!(doc.chunks[0].text.contains("title: [broken"));
    assert_eq!(doc.chunks.last().map(|c| c.text.as_str()), Some("body"));
}

#[test]
fn headings_inside_fences_are_code_and_long_fences_stay_whole() {
    let code: String = (0..200).map(|i| format!("line {i} of code\n")).collect();
    let text = format!("# T\n\n```sh\n# not a heading\n\n{code}```\n\nafter\n");
    let doc = parse("a.md", &text);
    assert!(doc.headings.len() == 1);
    let fence = doc
        .chunks
        .iter()
        .find(|c| c.text.starts_with("```sh"))
        .unwrap();
    assert!(fence.text.chars().count() > MAX_CHUNK_CHARS);
    assert!(fence.text.ends_with("```"));
    assert!(fence.text.contains("# not a heading"));
}

#[test]
fn long_sections_are_packed_by_paragraph() {
    let para = "word ".repeat(100); // 500 chars
    let text = format!("# T\n\n{para}\n\n{para}\n\n{para}\n\n{para}\n");
    let doc = parse("a.md", &text);
    assert_eq!(doc.chunks.len(), 2);
    assert!(
        doc.chunks
            .iter()
            .all(|c| c.text.chars().count() <= MAX_CHUNK_CHARS)
    );
    assert_eq!(doc.chunks[1].line_start, 7);
}

#[test]
fn empty_document_gets_one_chunk() {
    let doc = parse("empty.md", "");
    assert_eq!(doc.chunks.len(), 1);
    assert_eq!(doc.chunks[0].text, "empty");
    let doc = parse("h.md", "# Only\n## Headings\n");
    assert_eq!(doc.chunks.len(), 1);
    assert_eq!(doc.chunks[0].line_start, 1);
}

#[test]
fn links_with_lines() {
    let text = "# T\n\nSee [[Note]] and [[sub/Other#Restore|here]].\n\n![[diagram]]\n\n[rel](../a/b.md#Top) [web](https://x.org) `[[not a link]]`\n";
    let doc = parse("x/t.md", text);
    let got: Vec<_> = doc
        .links
        .iter()
        .map(|l| (l.kind, l.target.as_str(), l.heading.as_deref(), l.line))
        .collect();
    assert_eq!(
        got,
        vec![
            (LinkKind::Wiki, "Note", None, 3),
            (LinkKind::Wiki, "sub/Other", Some("Restore"), 3),
            (LinkKind::Embed, "diagram", None, 5),
            (LinkKind::Markdown, "../a/b.md", Some("Top"), 7),
        ]
    );
    let first = &doc.links[0];
    assert_eq!(&text[first.byte_range.clone()], "[[Note]]");
}

#[test]
fn tags_skip_code_and_fragments() {
    let text = "# T #Heading-Tag\n\ntext #ops `#notatag`\n\n```\n#nope\n```\n\n    #indented\n\n[x](http://a/#frag) #2024\n";
    let doc = parse("a.md", text);
    assert_eq!(doc.meta.tags, vec!["heading-tag", "ops"]);
}

#[test]
fn crlf_line_numbers() {
    let doc = parse("a.md", "# A\r\n\r\ntext\r\n## B\r\nmore\r\n");
    assert_eq!(summary(&doc)[0], ("A".into(), "text".into(), 3, 3));
    assert_eq!(summary(&doc)[1], ("A › B".into(), "more".into(), 5, 5));
}

#[test]
fn breadcrumb_rules() {
    assert_eq!(breadcrumb("T", ""), "T");
    assert_eq!(breadcrumb("T", "T"), "T");
    assert_eq!(breadcrumb("T", "T › A"), "T › A");
    assert_eq!(breadcrumb("T", "A"), "T › A");
}

fn markdownish() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just(String::new()),
        Just("# Title".to_string()),
        Just("## Section".to_string()),
        Just("### Deep".to_string()),
        Just("```".to_string()),
        Just("~~~".to_string()),
        Just("---".to_string()),
        Just("title: x".to_string()),
        Just("- item [[Link]]".to_string()),
        Just("    indented code".to_string()),
        Just("> quote #tag".to_string()),
        "[a-z #\\[\\]|]{0,40}",
        "[a-z ]{200,400}",
    ];
    prop::collection::vec(line, 0..60).prop_map(|lines| lines.join("\n"))
}

#[test]
fn empty_frontmatter_without_a_body_stays_inside_the_file() {
    // Found by the property test below in a CI run.
    for text in ["---\n---", "---\n---\n", "---\ntitle: x\n---"] {
        let doc = parse("p.md", text);
        for c in &doc.chunks {
            assert!(
                c.line_start >= 1 && c.line_start <= c.line_end,
                "{text:?}: {c:?}"
            );
            assert!(c.line_end <= doc.total_lines.max(1), "{text:?}: {c:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_line_in_at_most_one_chunk_and_ranges_ordered(text in markdownish()) {
        let doc = parse("p.md", &text);
        let total = doc.total_lines;
        prop_assert!(!doc.chunks.is_empty());
        let mut last_end = 0usize;
        for c in &doc.chunks {
            prop_assert!(c.line_start >= 1);
            prop_assert!(c.line_start <= c.line_end);
            prop_assert!(c.line_end <= total.max(1));
            // Slices of one over-long line share it; otherwise chunks never overlap.
            let shares_sliced_line = c.line_start == last_end && c.line_start == c.line_end;
            prop_assert!(c.line_start > last_end || shares_sliced_line,
                "chunk {}-{} overlaps previous end {}", c.line_start, c.line_end, last_end);
            last_end = c.line_end;
        }
    }

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,300}") {
        let doc = parse("p.md", &text);
        prop_assert!(!doc.chunks.is_empty());
    }
}
