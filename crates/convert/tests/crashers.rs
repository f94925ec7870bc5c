//! Regression tests from fuzzing (fuzz/README.md): every input that made a converter panic or
//! hang under cargo-fuzz is kept in tests/crashers/<format>/ (for DOCX and HTML, where ten
//! minutes found none, a dozen of the odd inputs it built instead), and converting each must give
//! Markdown or an error — a converter's panic is contained, nothing hangs past the limit.

use std::time::{Duration, Instant};

use ragdown_convert::{Format, Limits, convert_with};

fn check(dir: &str, format: Format) -> usize {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/crashers")
        .join(dir);
    let Ok(entries) = std::fs::read_dir(&path) else {
        return 0;
    };
    let limits = Limits {
        timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let mut n = 0;
    for entry in entries {
        let file = entry.unwrap().path();
        let bytes = std::fs::read(&file).unwrap();
        let started = Instant::now();
        let outcome = convert_with(format, &bytes, &limits);
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{} ran past the limit",
            file.display()
        );
        eprintln!(
            "{}: {:?}",
            file.display(),
            outcome.as_ref().map(|m| m.len())
        );
        n += 1;
    }
    n
}

#[test]
fn pdf_crashers_are_contained() {
    assert!(check("pdf", Format::Pdf) > 0, "the PDF crashers are kept");
}

#[test]
fn docx_fuzz_inputs_are_contained() {
    assert!(check("docx", Format::Docx) > 0, "the DOCX inputs are kept");
}

#[test]
fn html_fuzz_inputs_are_contained() {
    assert!(check("html", Format::Html) > 0, "the HTML inputs are kept");
}
