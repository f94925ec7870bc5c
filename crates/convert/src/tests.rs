//! Converters against fixtures built here: PDFs written with lopdf (running headers and footers,
//! an outline, two columns, an image-only page), a DOCX zipped from its XML, an HTML article
//! with navigation and ads.

use std::io::Write;

use super::fixtures::*;
use super::*;

#[test]
fn pdf_pages_outline_and_running_lines() {
    let md = convert(Format::Pdf, &handbook_pdf()).unwrap();
    assert!(
        !md.contains("ACME Operations Handbook"),
        "header removed:\n{md}"
    );
    assert!(!md.contains("of 3"), "footer removed:\n{md}");
    assert!(md.contains("## Key rotation"), "outline heading:\n{md}");
    assert!(md.contains("### Page 2"), "page heading under it:\n{md}");
    let rotation = md.find("Rotate the signing keys").unwrap();
    assert!(md.find("### Page 2").unwrap() < rotation && rotation < md.find("### Page 3").unwrap());
    // The chunker sees a section per page with the outline in its breadcrumb.
    let doc = ragdown_markdown_free_parse(&md);
    assert!(
        doc.iter()
            .any(|(h, body)| h.ends_with("Page 2") && body.contains("signing keys")),
        "{doc:?}"
    );
}

/// Headings and the text under each, without the markdown crate (convert must not need it).
fn ragdown_markdown_free_parse(md: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in md.lines() {
        if line.starts_with('#') {
            out.push((line.to_string(), String::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out
}

#[test]
fn pdf_without_outline_has_a_heading_per_page() {
    let pages = vec![
        vec![(72.0, 700.0, "First page words.".to_string())],
        vec![(72.0, 700.0, "Second page words.".to_string())],
    ];
    let md = convert(Format::Pdf, &make_pdf(&pages, &[])).unwrap();
    assert!(md.starts_with("## Page 1\n\nFirst page words."), "{md}");
    assert!(md.contains("## Page 2\n\nSecond page words."), "{md}");
}

#[test]
fn pdf_words_hyphenated_across_lines_are_joined() {
    let body = [
        "Rotate the signing keys of the replica-",
        "tion service every ninety days; the long-",
        "term keys live in the vault. Long-term keys",
        "never leave it.",
    ];
    let page: PageText = body
        .iter()
        .enumerate()
        .map(|(i, line)| (72.0, 700.0 - 14.0 * i as f32, line.to_string()))
        .collect();
    let md = convert(Format::Pdf, &make_pdf(&[page], &[])).unwrap();
    assert!(md.contains("of the replication"), "{md}");
    assert!(md.contains("the long-term\nkeys live"), "{md}");
    assert!(!md.contains("replica-"), "{md}");
}

#[test]
fn a_pdf_without_an_outline_gets_its_headings_from_type_sizes() {
    // Lines down a page, each a line height below the last.
    fn set(lines: &[(f32, &str)]) -> SizedPageText {
        let mut y = 800.0;
        lines
            .iter()
            .map(|(size, text)| {
                y -= size * 1.6;
                (72.0, y, *size, text.to_string())
            })
            .collect()
    }
    let body = "Body text of the guide, set in the size most of its lines use.";
    let mut first = vec![(22.0, "Operations Guide"), (16.0, "Backups")];
    first.extend([(11.0, body); 6]);
    first.push((13.0, "Restoring a snapshot"));
    first.push((
        11.0,
        "Run pg_restore twice; the first pass creates the roles.",
    ));
    first.extend([(11.0, body); 6]);
    let mut second = vec![(16.0, "Monitoring")];
    second.extend([(11.0, body); 6]);
    let pdf = make_sized_pdf(&[set(&first), set(&second)], &[]);
    let md = convert(Format::Pdf, &pdf).unwrap();
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "## Operations Guide",
            "### Backups",
            "##### Page 1",
            "#### Restoring a snapshot",
            "### Monitoring",
            "##### Page 2"
        ],
        "{md}"
    );
    let doc = ragdown_markdown_free_parse(&md);
    assert!(
        doc.iter()
            .any(|(h, body)| h == "#### Restoring a snapshot" && body.contains("pg_restore")),
        "{doc:?}"
    );
}

#[test]
fn two_column_pdf_keeps_each_column_together() {
    let left = [
        "The left column starts here",
        "and continues on the left",
        "then ends left.",
    ];
    let right = [
        "The right column begins",
        "and keeps going right",
        "then ends right.",
    ];
    let mut page = Vec::new();
    for (i, l) in left.iter().enumerate() {
        page.push((50.0, 700.0 - 14.0 * i as f32, l.to_string()));
    }
    for (i, r) in right.iter().enumerate() {
        page.push((320.0, 700.0 - 14.0 * i as f32, r.to_string()));
    }
    let md = convert(Format::Pdf, &make_pdf(&[page], &[])).unwrap();
    let flat = md.split_whitespace().collect::<Vec<_>>().join(" ");
    let l = flat.find("The left column starts here").unwrap();
    let l_end = flat.find("then ends left.").unwrap();
    let r = flat.find("The right column begins").unwrap();
    assert!(
        l < l_end && l_end < r,
        "the left column is read whole before the right:\n{md}"
    );
}

#[test]
fn image_only_pdf_is_no_text() {
    let md = convert(Format::Pdf, &make_pdf(&[vec![]], &[]));
    assert_eq!(md, Err(ConvertError::NoText));
}

#[test]
fn broken_pdfs_are_errors_not_panics() {
    let good = handbook_pdf();
    for bad in [
        good[..good.len() / 2].to_vec(),
        b"%PDF-1.5\n garbage".to_vec(),
        Vec::new(),
        vec![0u8; 4096],
    ] {
        let out = convert(Format::Pdf, &bad);
        assert!(out.is_err(), "{:?}", out);
    }
}

#[test]
fn docx_headings_lists_and_tables() {
    let md = convert(Format::Docx, &report_docx()).unwrap();
    let expected = "# Quarterly Report\n\nIntro & scope of the quarter.\n\n## Findings\n\n- Latency dropped by a third\n  - mostly in the EU region\n- Costs stayed flat\n\n### Budget\n\n| Team | Spend |\n| --- | --- |\n| Platform | 120k |\n| Search \\| Ranking | 80k |\n";
    assert_eq!(md, expected);
}

/// Word stores the built-in style names in English whatever the language; the ids are
/// localised (Japanese Word: `1`, `2`; German: `berschrift1`).
#[test]
fn docx_headings_are_known_by_their_style_names_not_ids() {
    let style = |id: &str, inner: &str| {
        format!(r#"<w:style w:type="paragraph" w:styleId="{id}">{inner}</w:style>"#)
    };
    let styles = [
        style("1", r#"<w:name w:val="heading 1"/>"#),
        style("berschrift2", r#"<w:name w:val="heading 2"/><w:basedOn w:val="1"/>"#),
        style("Kapitel", r#"<w:name w:val="Kapitel"/><w:basedOn w:val="1"/>"#),
        style(
            "Gliederung",
            r#"<w:name w:val="Gliederung"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr>"#,
        ),
        style("Textkorper", r#"<w:name w:val="Body Text"/><w:basedOn w:val="Loop"/>"#),
        style("Loop", r#"<w:name w:val="Loop"/><w:basedOn w:val="Textkorper"/>"#),
        r#"<w:style w:type="character" w:styleId="1Zchn"><w:name w:val="heading 1 Char"/></w:style>"#.to_string(),
    ]
    .concat();
    let body = [
        para(Some("1"), None, "概要"),
        para(None, None, "本文です。"),
        para(Some("berschrift2"), None, "Installation"),
        para(Some("Kapitel"), None, "Ein Kapitel"),
        para(Some("Gliederung"), None, "Dritte Ebene"),
        para(Some("Textkorper"), None, "Nur Text."),
        r#"<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Direct outline</w:t></w:r></w:p>"#
            .to_string(),
    ]
    .concat();
    let md = convert(Format::Docx, &make_docx_with_styles(&body, Some(&styles))).unwrap();
    assert_eq!(
        md,
        "# 概要\n\n本文です。\n\n## Installation\n\n# Ein Kapitel\n\n### Dritte Ebene\n\nNur Text.\n\n## Direct outline\n"
    );
    // Without styles.xml, the English ids still make headings.
    let md = convert(Format::Docx, &report_docx()).unwrap();
    assert!(md.starts_with("# Quarterly Report"), "{md}");
}

#[test]
fn docx_body_text_that_looks_like_markdown_stays_text() {
    let body = [
        para(None, None, "# not a heading"),
        para(None, None, "&gt; not a quote"),
    ]
    .concat();
    let md = convert(Format::Docx, &make_docx(&body)).unwrap();
    assert_eq!(md, "\\# not a heading\n\n\\> not a quote\n");
}

#[test]
fn docx_non_breaking_hyphens_stay_and_soft_hyphens_go() {
    let body = r#"<w:p><w:r><w:t>a long</w:t><w:noBreakHyphen/><w:t>term plan for repli</w:t><w:softHyphen/><w:t>cation</w:t></w:r></w:p>"#;
    let md = convert(Format::Docx, &make_docx(body)).unwrap();
    assert_eq!(md.trim(), "a long-term plan for replication");
}

#[test]
fn broken_docx_and_zip_bombs_are_refused() {
    let good = report_docx();
    assert!(matches!(
        convert(Format::Docx, &good[..good.len() / 2]),
        Err(ConvertError::Malformed { .. })
    ));
    assert!(matches!(
        convert(Format::Docx, b"not a zip"),
        Err(ConvertError::Malformed { .. })
    ));
    // 200 MB of zeros deflate to a few hundred KB.
    let bomb_body = format!(
        "<w:p><w:r><w:t>{}</w:t></w:r></w:p>",
        "0".repeat(200 * 1024 * 1024)
    );
    let bomb = make_docx(&bomb_body);
    assert!(bomb.len() < 2 * 1024 * 1024, "{} bytes", bomb.len());
    assert!(matches!(
        convert(Format::Docx, &bomb),
        Err(ConvertError::TooLarge(_))
    ));
    let no_document = {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        zip.start_file("other.xml", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(b"<x/>").unwrap();
        zip.finish().unwrap();
        out.into_inner()
    };
    assert!(matches!(
        convert(Format::Docx, &no_document),
        Err(ConvertError::Malformed { .. })
    ));
}

#[test]
fn html_main_content_becomes_markdown() {
    let md = convert(Format::Html, ARTICLE_HTML.as_bytes()).unwrap();
    assert!(md.starts_with("# Rotating TLS certificates"), "{md}");
    assert!(md.contains("## Manual renewal"), "{md}");
    assert!(md.contains("certbot renew --force-renewal"), "{md}");
    assert!(
        md.contains("twice in a row. The operator"),
        "sentence ends are not escaped:\n{md}"
    );
    assert!(
        md.contains("```") || md.contains("    certbot"),
        "code kept as code:\n{md}"
    );
    assert!(md.contains("Stop the renewal timer"), "{md}");
    assert!(md.contains("edge-1"), "{md}");
    for noise in ["Buy CloudWidgets", "About us", "Copyright 2026"] {
        assert!(!md.contains(noise), "{noise} should be stripped:\n{md}");
    }
}

#[test]
fn html_soft_hyphens_do_not_split_words() {
    let html = ARTICLE_HTML.replace("renewal by hand", "re&shy;newal by hand");
    assert_ne!(html, ARTICLE_HTML);
    let md = convert(Format::Html, html.as_bytes()).unwrap();
    assert!(md.contains("Run the renewal by hand"), "{md}");
    assert!(!md.contains('\u{AD}'), "{md}");
}

#[test]
fn deeply_nested_html_is_refused() {
    let html = format!("<html><body>{}x</body></html>", "<div>".repeat(200_000));
    assert!(matches!(
        convert(Format::Html, html.as_bytes()),
        Err(ConvertError::TooLarge(_))
    ));
}

#[test]
fn text_keeps_lines_and_escapes_markers() {
    let md = convert(
        Format::Text,
        b"# not a heading\nplain line\n- not a list? fine\n",
    )
    .unwrap();
    assert_eq!(md, "\\# not a heading\nplain line\n- not a list? fine\n");
    assert_eq!(md.lines().count(), 3, "line numbers are the file's");
}

#[test]
fn formats_by_extension() {
    assert_eq!(Format::from_path("a/b.PDF"), Some(Format::Pdf));
    assert_eq!(Format::from_path("x.htm"), Some(Format::Html));
    assert_eq!(Format::from_path("x.docx"), Some(Format::Docx));
    assert_eq!(Format::from_path("x.txt"), Some(Format::Text));
    assert_eq!(Format::from_path("x.md"), None);
    assert_eq!(Format::from_path("x.doc"), None);
}

#[test]
fn encrypted_pdfs_open_only_without_a_password() {
    assert_eq!(
        convert(Format::Pdf, &encrypted_pdf("secret")),
        Err(ConvertError::Encrypted)
    );
    let open = convert(Format::Pdf, &encrypted_pdf("")).unwrap();
    assert!(open.contains("signing keys"), "{open}");
}
