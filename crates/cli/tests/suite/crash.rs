//! Crash safety with real processes: `ragdown index` is killed with SIGKILL at different points
//! of a first index, then restarted. The index must open without error and, after the next sync,
//! hold exactly what a fresh index of the same files holds — nothing half-replaced, nothing
//! indexed twice.

use std::process::Stdio;
use std::time::Duration;

use crate::harness::{self, ragdown_in as ragdown};

fn status(data: &std::path::Path, docs: &std::path::Path) -> (u64, u64) {
    let v = harness::json_output(ragdown(data).args(["status", "--json"]).arg(docs));
    (
        v["documents"].as_u64().unwrap(),
        v["chunks"].as_u64().unwrap(),
    )
}

fn index(data: &std::path::Path, docs: &std::path::Path) {
    let out = ragdown(data).arg("index").arg(docs).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigkill_mid_sync_then_restart_converges_on_a_fresh_index() {
    let docs = tempfile::tempdir().unwrap();
    for i in 0..1500 {
        let dir = docs.path().join(format!("d{}", i % 30));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("note-{i}.md")),
            format!(
                "# Note {i}\n\nIntro {i}.\n\n## Part A\n\nalpha {i}\n\n## Part B\n\nbeta {i}\n"
            ),
        )
        .unwrap();
    }
    let fresh = tempfile::tempdir().unwrap();
    index(fresh.path(), docs.path());
    let expected = status(fresh.path(), docs.path());
    assert_eq!(expected, (1500, 4500));

    let mut killed_mid_sync = 0;
    for (round, delay_ms) in [40u64, 90, 150, 250, 400].into_iter().enumerate() {
        let data = tempfile::tempdir().unwrap();
        let mut child = ragdown(data.path())
            .arg("index")
            .arg(docs.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Whatever was committed is consistent and opens cleanly.
        let (documents, chunks) = status(data.path(), docs.path());
        assert_eq!(
            chunks,
            documents * 3,
            "round {round}: a document is half-indexed"
        );
        if !finished && documents < 1500 {
            killed_mid_sync += 1;
        }
        index(data.path(), docs.path());
        assert_eq!(
            status(data.path(), docs.path()),
            expected,
            "round {round} did not converge"
        );
    }
    assert!(
        killed_mid_sync >= 1,
        "no round hit a sync in progress; the corpus is too small to test anything"
    );
}

#[test]
fn a_second_index_run_forwards_to_the_running_one() {
    let docs = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        std::fs::write(
            docs.path().join(format!("n{i}.md")),
            format!("# N {i}\n\ntext {i}\n"),
        )
        .unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let mut first = ragdown(data.path())
        .arg("index")
        .arg(docs.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let primary_was_running = first.try_wait().unwrap().is_none();
    // Either a reader that forwards its sync to the running primary, or (if the first already
    // finished) a primary itself: both must end with the whole folder indexed.
    let out = ragdown(data.path())
        .arg("index")
        .arg(docs.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("indexed 3000 documents"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(first.wait().unwrap().success());
    assert!(
        primary_was_running,
        "the first run finished too fast to test forwarding"
    );
}
