//! What every test of the real binary shares: starting `ragdown` (a command, or `stdio` under
//! an rmcp client), calling a tool and reading its text back, walking a tool table, and the
//! local services and fixtures several tests need.

use std::path::Path;

use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// The `ragdown` binary with what every test wants: the fast `hash` embedder (a test that
/// needs the real model sets `RAGDOWN_EMBEDDER` again), no docs dir, data dir or log level
/// inherited from the shell that runs the tests, and nothing downloadable from the internet.
/// `RAGDOWN_TEST_BIN` runs another build instead (a benchmark against the release binary).
pub fn ragdown() -> std::process::Command {
    let binary = std::env::var_os("RAGDOWN_TEST_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_ragdown").into());
    let mut cmd = std::process::Command::new(binary);
    cmd.env("RAGDOWN_EMBEDDER", "hash")
        .env("RAGDOWN_ORT_URL", "http://127.0.0.1:9")
        .env_remove("RAGDOWN_DOCS_DIR")
        .env_remove("RAGDOWN_DATA_DIR")
        .env_remove("RAGDOWN_DATABASE_URL")
        .env_remove("RAGDOWN_DATABASE_SCHEMA")
        .env_remove("RAGDOWN_LOG");
    cmd
}

/// [`ragdown`] keeping its index in `data`.
pub fn ragdown_in(data: &Path) -> std::process::Command {
    let mut cmd = ragdown();
    cmd.env("RAGDOWN_DATA_DIR", data);
    cmd
}

/// [`ragdown`] as `assert_cmd` runs it.
pub fn ragdown_cmd(data: &Path) -> assert_cmd::Command {
    assert_cmd::Command::from_std(ragdown_in(data))
}

/// Runs `cmd`, which must succeed (else its stderr is the failure), and parses its stdout as
/// JSON.
pub fn json_output(cmd: &mut std::process::Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `ragdown stdio` over `docs` with its index in `data`, stderr silenced, ready for
/// [`connect`] (add `env` first to change a setting).
pub fn stdio(docs: &Path, data: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(ragdown_in(data));
    cmd.arg("stdio")
        .env("RAGDOWN_DOCS_DIR", docs)
        .stderr(std::process::Stdio::null());
    cmd
}

/// An rmcp client over the stdio of `cmd`, and the server's process id.
pub async fn connect(cmd: tokio::process::Command) -> (RunningService<RoleClient, ()>, u32) {
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pid = transport.id().unwrap();
    (().serve(transport).await.unwrap(), pid)
}

/// Calls a tool: (is it an error result, its text content joined).
pub async fn call_tool(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> (bool, String) {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
        .await
        .unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<String>();
    (result.is_error.unwrap_or(false), text)
}

/// An OpenAI-compatible embedding service on a local port that takes `delay` per request
/// (a slow model): each input becomes a small vector from its bytes. Returns its base URL
/// (for `RAGDOWN_EMBEDDING_URL`).
pub fn slow_embedding_service(delay: std::time::Duration) -> String {
    use std::io::{BufRead, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).unwrap();
                let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                std::thread::sleep(delay);
                let data: Vec<Value> = request["input"]
                    .as_array()
                    .map(|inputs| {
                        inputs
                            .iter()
                            .enumerate()
                            .map(|(i, text)| {
                                let bytes = text.as_str().unwrap_or("").as_bytes();
                                let mut v = [1.0f32; 8];
                                for (j, b) in bytes.iter().enumerate() {
                                    v[j % 8] += f32::from(*b);
                                }
                                serde_json::json!({"index": i, "embedding": v})
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let answer = serde_json::json!({"data": data}).to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    format!("http://{addr}/v1")
}

/// A folder of `count` one-section notes about lighthouses, for tests that need a first index
/// that takes a while on a slow model.
pub fn lighthouse_notes(count: usize) -> tempfile::TempDir {
    let docs = tempfile::tempdir().unwrap();
    for i in 0..count {
        std::fs::write(
            docs.path().join(format!("note-{i}.md")),
            format!("# Note {i}\n\nThe lighthouse number {i} keeps its lamp lit all night.\n"),
        )
        .unwrap();
    }
    docs
}

/// One tool as an endpoint lists it: its name and whether it writes.
pub async fn listed_tools(client: &RunningService<RoleClient, ()>) -> Vec<(String, bool)> {
    let mut tools: Vec<(String, bool)> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| {
            let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
            (t.name.to_string(), read_only != Some(true))
        })
        .collect();
    tools.sort();
    tools
}

/// Walks an endpoint's tool table: of `every` tool (as [`listed_tools`] gave them with nothing
/// hidden), exactly those `served(name, writes)` accepts are listed, and a tool answers a
/// call exactly when it is listed — an unlisted one answers "unknown tool". Each call carries
/// `{}`, which every tool that could change a document refuses for a missing argument.
pub async fn walk_tool_table(
    client: &RunningService<RoleClient, ()>,
    every: &[(String, bool)],
    served: impl Fn(&str, bool) -> bool,
) {
    let expected: Vec<(String, bool)> = every
        .iter()
        .filter(|(name, writes)| served(name, *writes))
        .cloned()
        .collect();
    assert_eq!(listed_tools(client).await, expected);
    for (name, writes) in every {
        let (err, text) = call_tool(client, name, Value::Object(Default::default())).await;
        let unknown = err && text.contains("unknown tool");
        assert_eq!(
            unknown,
            !served(name, *writes),
            "{name}: listed and callable must agree: {text}"
        );
    }
}

/// Starts `ragdown serve` on a free loopback port over `docs` (token `token`, data in `data`),
/// and waits until it listens. Returns the child, its base URL and its log as it grows.
pub fn spawn_serve(
    docs: &Path,
    data: &Path,
    token: &str,
    env: &[(&str, &str)],
) -> (
    std::process::Child,
    String,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    let mut cmd = ragdown_in(data);
    cmd.arg("serve")
        .env("RAGDOWN_DOCS_DIR", docs)
        .env("RAGDOWN_TOKEN", token)
        .env("PORT", "0")
        .env("RAGDOWN_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let (base, log) = wait_listening(&mut child);
    (child, base, log)
}

/// Starts `ragdown serve` on a free loopback port over `docs` (hash embedder, no token) under
/// an open-file limit of `nofile` (`ulimit -n`, hard too, so it cannot be raised), and waits
/// until it listens. Returns the child, its base URL and its log.
pub fn spawn_serve_limited(
    docs: &Path,
    data: &Path,
    nofile: u32,
) -> (
    std::process::Child,
    String,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    let mut child = std::process::Command::new("sh")
        .args(["-c", &format!("ulimit -n {nofile} && exec \"$0\" serve")])
        .arg(env!("CARGO_BIN_EXE_ragdown"))
        .env("RAGDOWN_DOCS_DIR", docs)
        .env("RAGDOWN_DATA_DIR", data)
        .env("RAGDOWN_EMBEDDER", "hash")
        .env("SECURE_LOCAL_NET", "true")
        .env("PORT", "0")
        .env("RAGDOWN_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (base, log) = wait_listening(&mut child);
    (child, base, log)
}

/// Reads a started `ragdown serve`'s log (its stderr, piped) until it says where it listens;
/// returns its base URL and the log, which keeps growing.
pub fn wait_listening(
    child: &mut std::process::Child,
) -> (String, std::sync::Arc<std::sync::Mutex<String>>) {
    use std::io::BufRead;
    let stderr = child.stderr.take().unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(addr) = line.split("listening on http://").nth(1) {
                let _ = tx.send(addr.trim().to_string());
            }
            sink.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    let addr = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("serve did not listen: {}", log.lock().unwrap()));
    (format!("http://{addr}"), log)
}
