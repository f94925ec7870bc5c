//! Converters against fixtures built here: PDFs written with lopdf (running headers and footers,
//! an outline, two columns, an image-only page), a DOCX zipped from its XML, an HTML article
//! with navigation and ads.

use std::io::Write;

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Document, Object, Stream, dictionary};

use super::*;

/// One PDF page: lines of text at (x, y) positions, in content-stream order.
type PageText = Vec<(f32, f32, String)>;

/// A PDF with the given pages and, optionally, an outline of (title, page index).
pub fn make_pdf(pages: &[PageText], outline: &[(&str, usize)]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    let mut page_ids = Vec::new();
    for page in pages {
        let mut ops = Vec::new();
        for (x, y, text) in page {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), 11.into()]));
            ops.push(Operation::new("Td", vec![(*x).into(), (*y).into()]));
            ops.push(Operation::new(
                "Tj",
                vec![Object::string_literal(text.as_str())],
            ));
            ops.push(Operation::new("ET", vec![]));
        }
        let content = Content { operations: ops };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(page_id.into());
        page_ids.push(page_id);
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => pages.len() as i64,
            "Resources" => resources_id,
        }),
    );
    let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
    if !outline.is_empty() {
        let outlines_id = doc.new_object_id();
        let item_ids: Vec<_> = outline.iter().map(|_| doc.new_object_id()).collect();
        for (i, (title, page)) in outline.iter().enumerate() {
            let mut item = dictionary! {
                "Title" => Object::string_literal(*title),
                "Parent" => outlines_id,
                "Dest" => vec![page_ids[*page].into(), "Fit".into()],
            };
            if i > 0 {
                item.set("Prev", item_ids[i - 1]);
            }
            if i + 1 < item_ids.len() {
                item.set("Next", item_ids[i + 1]);
            }
            doc.objects.insert(item_ids[i], Object::Dictionary(item));
        }
        doc.objects.insert(
            outlines_id,
            Object::Dictionary(dictionary! {
                "Type" => "Outlines",
                "First" => item_ids[0],
                "Last" => *item_ids.last().unwrap(),
                "Count" => item_ids.len() as i64,
            }),
        );
        catalog.set("Outlines", outlines_id);
    }
    let catalog_id = doc.add_object(catalog);
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// A page with a running header and footer around `body` lines.
fn handbook_page(n: usize, total: usize, body: &[&str]) -> PageText {
    let mut lines = vec![(72.0, 800.0, "ACME Operations Handbook".to_string())];
    for (i, b) in body.iter().enumerate() {
        lines.push((72.0, 700.0 - 20.0 * i as f32, b.to_string()));
    }
    lines.push((72.0, 40.0, format!("Page {n} of {total}")));
    lines
}

pub fn handbook_pdf() -> Vec<u8> {
    let pages = vec![
        handbook_page(
            1,
            3,
            &["Welcome to the handbook.", "It covers the on-call rota."],
        ),
        handbook_page(
            2,
            3,
            &[
                "Rotate the signing keys every ninety days.",
                "Use the vault CLI.",
            ],
        ),
        handbook_page(
            3,
            3,
            &[
                "Escalate incidents to the duty manager.",
                "Call the bridge line.",
            ],
        ),
    ];
    make_pdf(
        &pages,
        &[("Introduction", 0), ("Key rotation", 1), ("Incidents", 2)],
    )
}

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

/// A DOCX from a `word/document.xml` body.
pub fn make_docx(body: &str) -> Vec<u8> {
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("[Content_Types].xml", options).unwrap();
        zip.write_all(b"<Types/>").unwrap();
        zip.start_file("word/document.xml", options).unwrap();
        zip.write_all(xml.as_bytes()).unwrap();
        zip.finish().unwrap();
    }
    out.into_inner()
}

fn para(style: Option<&str>, list: Option<u8>, text: &str) -> String {
    let mut ppr = String::new();
    if let Some(s) = style {
        ppr.push_str(&format!(r#"<w:pStyle w:val="{s}"/>"#));
    }
    if let Some(level) = list {
        ppr.push_str(&format!(
            r#"<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="1"/></w:numPr>"#
        ));
    }
    format!(r#"<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>"#)
}

pub fn report_docx() -> Vec<u8> {
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", para(None, None, t));
    let row = |a: &str, b: &str| format!("<w:tr>{}{}</w:tr>", cell(a), cell(b));
    let body = [
        para(Some("Title"), None, "Quarterly Report"),
        para(None, None, "Intro &amp; scope of the quarter."),
        para(Some("Heading1"), None, "Findings"),
        para(None, Some(0), "Latency dropped by a third"),
        para(None, Some(1), "mostly in the EU region"),
        para(None, Some(0), "Costs stayed flat"),
        para(Some("Heading2"), None, "Budget"),
        format!(
            "<w:tbl>{}{}{}</w:tbl>",
            row("Team", "Spend"),
            row("Platform", "120k"),
            row("Search | Ranking", "80k")
        ),
    ]
    .concat();
    make_docx(&body)
}

#[test]
fn docx_headings_lists_and_tables() {
    let md = convert(Format::Docx, &report_docx()).unwrap();
    let expected = "# Quarterly Report\n\nIntro & scope of the quarter.\n\n# Findings\n\n- Latency dropped by a third\n  - mostly in the EU region\n- Costs stayed flat\n\n## Budget\n\n| Team | Spend |\n| --- | --- |\n| Platform | 120k |\n| Search \\| Ranking | 80k |\n";
    assert_eq!(md, expected);
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

pub const ARTICLE_HTML: &str = r#"<!doctype html>
<html><head><title>Rotating TLS certificates</title></head>
<body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/blog">Blog</a></li><li><a href="/about">About us</a></li></ul></nav>
<div class="ad banner sponsored">Buy CloudWidgets today! Limited offer!</div>
<article>
<h1>Rotating TLS certificates</h1>
<p>Certificates on the edge proxies expire every ninety days, and the renewal job runs nightly at two in the morning. When the job fails, the proxies keep serving the old certificate until it expires.</p>
<h2>Manual renewal</h2>
<p>Run the renewal by hand when the nightly job has failed twice in a row. The operator needs the deploy role and access to the secrets vault before starting.</p>
<ul><li>Stop the renewal timer</li><li>Run certbot renew --force</li><li>Reload the proxies one at a time</li></ul>
<pre><code>certbot renew --force-renewal --cert-name edge
systemctl reload haproxy</code></pre>
<table><tr><th>Proxy</th><th>Region</th></tr><tr><td>edge-1</td><td>eu-west</td></tr></table>
<p>Check the expiry date afterwards with openssl and record the new serial number in the change log so the next rotation can be audited.</p>
</article>
<footer>Copyright 2026 Example Corp. Privacy. Terms. Cookies.</footer>
</body></html>"#;

#[test]
fn html_main_content_becomes_markdown() {
    let md = convert(Format::Html, ARTICLE_HTML.as_bytes()).unwrap();
    assert!(md.starts_with("# Rotating TLS certificates"), "{md}");
    assert!(md.contains("## Manual renewal"), "{md}");
    assert!(md.contains("certbot renew --force-renewal"), "{md}");
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
