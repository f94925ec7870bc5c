//! Interoperability with a client nobody here wrote: the official Python MCP SDK (installed
//! from PyPI by scripts/test.sh into a virtual environment named by RAGDOWN_TEST_PYTHON) runs
//! tests/interop/python_client.py against the real `ragdown stdio`.

use std::path::PathBuf;

#[test]
fn python_mcp_sdk_lists_and_calls_tools() {
    let python = std::env::var("RAGDOWN_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("RAGDOWN_TEST_PYTHON is not set: run scripts/test.sh, which installs the Python MCP SDK into a venv")
    });
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/python_client.py");
    let output = std::process::Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_ragdown"))
        .output()
        .expect("the Python interpreter runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
}
