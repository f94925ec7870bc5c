//! Writes the fixture documents (a PDF with an outline and running lines, a DOCX with headings,
//! lists and a table, an HTML article) into a directory: seeds for the fuzzers, or files to
//! look at. `cargo run -p ragdown-convert --features fixtures --example write_fixtures -- DIR`

use ragdown_convert::fixtures;

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("handbook.pdf"), fixtures::handbook_pdf())?;
    std::fs::write(dir.join("report.docx"), fixtures::report_docx())?;
    std::fs::write(dir.join("article.html"), fixtures::ARTICLE_HTML)?;
    Ok(())
}
