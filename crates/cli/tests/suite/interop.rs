//! Interoperability with a client nobody here wrote: the official Python MCP SDK (installed
//! from PyPI by scripts/test.sh into a virtual environment named by RAGDOWN_TEST_PYTHON) runs
//! the scripts in tests/interop against the real binary: `ragdown stdio`, and a folder
//! endpoint of `ragdown serve` over Streamable HTTP.

use std::path::PathBuf;

/// Runs `script` with the SDK's Python and returns its stdout, failing on a non-zero exit.
fn run_python(script: &str) -> String {
    let python = std::env::var("RAGDOWN_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("RAGDOWN_TEST_PYTHON is not set: run scripts/test.sh, which installs the Python MCP SDK into a venv")
    });
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop")
        .join(script);
    let output = std::process::Command::new(python)
        .arg(path)
        .arg(env!("CARGO_BIN_EXE_ragdown"))
        .output()
        .expect("the Python interpreter runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

#[test]
fn python_mcp_sdk_lists_and_calls_tools() {
    let stdout = run_python("python_client.py");
    assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
}

#[test]
fn python_mcp_sdk_over_streamable_http() {
    let stdout = run_python("python_http_client.py");
    assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
}

/// Every tool that declares an output schema, at a folder endpoint and at the root, returns
/// structured content the SDK validates against that schema.
#[test]
fn python_mcp_sdk_validates_structured_content() {
    let stdout = run_python("python_structured.py");
    assert!(
        stdout.contains("30 calls checked, 14 tools validated, 0 failed"),
        "{stdout}"
    );
}

/// Documents as resources: listed with cursors, templated, read, subscribed over stdio with an
/// update arriving after an edit and a list change after a new file; over HTTP, a folder's and
/// the root's own documents, never a human-only folder's.
#[test]
fn python_mcp_sdk_lists_reads_and_subscribes_to_documents() {
    let stdout = run_python("python_resources.py");
    assert!(
        stdout.contains("python resources: 8 passed, 0 failed"),
        "{stdout}"
    );
}
