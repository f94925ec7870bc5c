//! PDF, DOCX, HTML and text documents indexed in place, end to end through the real binary with
//! the real model (MiniLM from scripts/fetch-test-model.sh): a question answered only inside one
//! of them finds that document at the right page or section; a broken file is skipped with a
//! warning naming it while the rest is indexed; the converted text is what read_doc returns.

use std::path::Path;
use std::process::Command;

use ragdown_convert::fixtures;
use serde_json::Value;

use crate::harness;

/// `ragdown` with the real model.
fn ragdown(data: &Path) -> Command {
    let mut cmd = harness::ragdown_in(data);
    cmd.env("RAGDOWN_EMBEDDER", "minilm");
    cmd
}

fn corpus(docs: &Path) {
    std::fs::write(docs.join("handbook.pdf"), fixtures::handbook_pdf()).unwrap();
    std::fs::write(docs.join("report.docx"), fixtures::report_docx()).unwrap();
    std::fs::write(docs.join("tls.html"), fixtures::ARTICLE_HTML).unwrap();
    std::fs::write(
        docs.join("plain.txt"),
        "Garden log\n\nThe tomatoes were planted in May along the south fence.\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("notes.md"),
        "# Notes\n\n## Lunch\n\nThe canteen serves soup on Mondays.\n",
    )
    .unwrap();
    // Broken files: skipped with a reason, never fatal.
    let pdf = fixtures::handbook_pdf();
    std::fs::write(docs.join("truncated.pdf"), &pdf[..pdf.len() / 3]).unwrap();
    std::fs::write(docs.join("broken.docx"), b"PK not really a zip").unwrap();
    std::fs::write(docs.join("locked.pdf"), fixtures::encrypted_pdf("secret")).unwrap();
    std::fs::write(docs.join("scan.pdf"), fixtures::make_pdf(&[vec![]], &[])).unwrap();
}

fn top_hit(docs: &Path, data: &Path, question: &str) -> Value {
    let v = harness::json_output(ragdown(data).args([
        "query",
        docs.to_str().unwrap(),
        question,
        "--json",
        "--top-k",
        "3",
    ]));
    v["hits"][0].clone()
}

#[test]
fn questions_answered_inside_pdf_docx_html_find_them() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    corpus(docs.path());
    let out = ragdown(data.path())
        .args(["index", docs.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("indexed 5 documents"), "{stdout}");
    for (file, why) in [
        ("truncated.pdf", "not a valid PDF"),
        ("broken.docx", "not a valid DOCX"),
        ("scan.pdf", "holds no text"),
        ("locked.pdf", "encrypted"),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("skipped {file}")))
            .unwrap_or_else(|| panic!("{file} not reported:\n{stdout}"));
        assert!(line.contains(why), "{line}");
    }

    let hit = top_hit(
        docs.path(),
        data.path(),
        "how often must the signing keys be rotated?",
    );
    assert_eq!(hit["path"], "handbook.pdf", "{hit}");
    assert!(
        hit["heading"]
            .as_str()
            .unwrap()
            .ends_with("Key rotation › Page 2"),
        "the hit cites the page: {hit}"
    );

    let hit = top_hit(
        docs.path(),
        data.path(),
        "what did the platform team spend?",
    );
    assert_eq!(hit["path"], "report.docx", "{hit}");
    assert!(
        hit["heading"].as_str().unwrap().ends_with("Budget"),
        "{hit}"
    );

    let hit = top_hit(
        docs.path(),
        data.path(),
        "which role does the operator need to run the renewal by hand?",
    );
    assert_eq!(hit["path"], "tls.html", "{hit}");
    assert!(
        hit["heading"].as_str().unwrap().ends_with("Manual renewal"),
        "{hit}"
    );

    let hit = top_hit(docs.path(), data.path(), "when were the tomatoes planted?");
    assert_eq!(hit["path"], "plain.txt", "{hit}");
}
