//! Fixture documents built in code, for this crate's tests and other crates' (feature
//! `fixtures`): PDFs written with lopdf (running headers and footers, an outline, any text at
//! any position), DOCX files zipped from their XML, an HTML article with navigation and ads.
//! Test support only: a builder that fails panics, as a test would.

use std::io::Write;

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Document, Object, Stream, dictionary};

/// One PDF page: lines of text at (x, y) positions, in content-stream order.
pub type PageText = Vec<(f32, f32, String)>;

/// One PDF page whose lines also give their type size: (x, y, size, text).
pub type SizedPageText = Vec<(f32, f32, f32, String)>;

/// A PDF with the given pages, all set in 11 pt, and, optionally, an outline of (title, page
/// index).
pub fn make_pdf(pages: &[PageText], outline: &[(&str, usize)]) -> Vec<u8> {
    let sized: Vec<SizedPageText> = pages
        .iter()
        .map(|page| {
            page.iter()
                .map(|(x, y, text)| (*x, *y, 11.0, text.clone()))
                .collect()
        })
        .collect();
    make_sized_pdf(&sized, outline)
}

/// A PDF whose lines are set in the sizes given, with an optional outline.
pub fn make_sized_pdf(pages: &[SizedPageText], outline: &[(&str, usize)]) -> Vec<u8> {
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
        for (x, y, size, text) in page {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), (*size).into()]));
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
pub fn handbook_page(n: usize, total: usize, body: &[&str]) -> PageText {
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

/// A DOCX from a `word/document.xml` body.
pub fn make_docx(body: &str) -> Vec<u8> {
    make_docx_with_styles(body, None)
}

/// A DOCX with `body` and, when given, a `word/styles.xml` holding `styles` (`<w:style>`
/// elements).
pub fn make_docx_with_styles(body: &str, styles: Option<&str>) -> Vec<u8> {
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
        if let Some(styles) = styles {
            zip.start_file("word/styles.xml", options).unwrap();
            let xml = format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">{styles}</w:styles>"#
            );
            zip.write_all(xml.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

pub fn para(style: Option<&str>, list: Option<u8>, text: &str) -> String {
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

/// The handbook PDF, encrypted (RC4 128) with `user_password` ("" opens without one).
pub fn encrypted_pdf(user_password: &str) -> Vec<u8> {
    let mut doc = Document::load_mem(&handbook_pdf()).unwrap();
    let id = Object::String(
        b"ragdown-fixture!".to_vec(),
        pdf_extract::StringFormat::Literal,
    );
    doc.trailer.set("ID", vec![id.clone(), id]);
    let version = pdf_extract::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner-secret",
        user_password,
        key_length: 128,
        permissions: pdf_extract::Permissions::all(),
    };
    let state = pdf_extract::EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}
