//! First-start download of a preset's files from a Hugging Face–style hub into the models
//! folder: streamed to a `.part` file, checked against the hub's SHA-256 ETag when it sends
//! one, then renamed into place, so an interrupted download never leaves a half file behind.
//!
//! Every download (and the OpenAI-compatible client) goes through [`agent`]: it trusts the
//! platform's certificate store, with `SSL_CERT_FILE` / `SSL_CERT_DIR` honoured as pip and
//! curl honour them, so a TLS-inspecting proxy whose CA the machine trusts is trusted here too;
//! `HTTPS_PROXY` is followed. A failure says what failed, from where, and what to set.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{EmbedError, Preset, Result};

/// The HTTP client of every download and embedding request (see the module text), with an
/// overall time limit per request when given.
pub fn agent(timeout: Option<std::time::Duration>) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(platform_roots())
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(timeout)
        .http_status_as_error(false)
        .build()
        .into()
}

/// The machine's trusted certificates (`SSL_CERT_FILE` / `SSL_CERT_DIR` when set); Mozilla's
/// bundled roots when the machine has none.
fn platform_roots() -> ureq::tls::RootCerts {
    let found = rustls_native_certs::load_native_certs();
    for e in &found.errors {
        tracing::warn!("reading the system's trusted certificates: {e}");
    }
    if found.certs.is_empty() {
        return ureq::tls::RootCerts::WebPki;
    }
    found
        .certs
        .iter()
        .map(|der| ureq::tls::Certificate::from_der(der.as_ref()).to_owned())
        .into()
}

/// What went wrong reaching a server, with what to do about it.
fn explain(error: &ureq::Error) -> String {
    let text = error.to_string();
    let lower = text.to_lowercase();
    if lower.contains("certificate") || lower.contains("unknownissuer") || lower.contains("tls") {
        format!(
            "{text}: the server's certificate is not trusted here. Behind a proxy that inspects \
             TLS, point SSL_CERT_FILE at a PEM file holding its CA certificate (or SSL_CERT_DIR at \
             a folder of them), or install that CA in the system's store"
        )
    } else if matches!(
        error,
        ureq::Error::Io(_) | ureq::Error::HostNotFound | ureq::Error::ConnectionFailed
    ) || lower.contains("timed out")
    {
        // What to set is the caller's to say: it knows what was being downloaded.
        format!("{text}: the server could not be reached")
    } else {
        text
    }
}

/// Receives download progress (the CLI draws a bar; servers log).
pub trait Progress: Sync {
    fn start(&self, what: &str, total_bytes: Option<u64>);
    fn advance(&self, bytes: u64);
    fn finish(&self);
}

/// Progress that goes nowhere.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// Makes sure every file of `preset` is in `models_dir/<preset name>/`, downloading what is
/// missing from `endpoint`. Returns that folder.
pub fn ensure_preset(
    preset: &Preset,
    models_dir: &Path,
    endpoint: &str,
    progress: &dyn Progress,
) -> Result<PathBuf> {
    let dir = models_dir.join(&preset.name);
    for (remote, local) in &preset.files {
        let target = dir.join(local);
        if target.is_file() {
            continue;
        }
        fs::create_dir_all(&dir).map_err(|source| EmbedError::Io {
            path: dir.clone(),
            source,
        })?;
        let url = format!(
            "{}/{}/resolve/main/{}",
            endpoint.trim_end_matches('/'),
            preset.repo,
            remote
        );
        tracing::info!(%url, "downloading model file");
        download(&url, &target, progress).map_err(|e| match e {
            EmbedError::Download { url, reason } => EmbedError::Download {
                url,
                reason: format!(
                    "{reason}. The model {} is downloaded once, on first start: set HF_ENDPOINT \
                     to a mirror you can reach, or copy its files into {}",
                    preset.name,
                    dir.display()
                ),
            },
            other => other,
        })?;
    }
    Ok(dir)
}

/// Downloads `url` to `target` atomically, checked against the SHA-256 the server sends.
pub fn download(url: &str, target: &Path, progress: &dyn Progress) -> Result<()> {
    download_checked(url, target, None, progress)
}

/// Downloads `url` to `target` atomically, checked against `pinned` when given, else against
/// the SHA-256 the server sends (if any).
pub fn download_checked(
    url: &str,
    target: &Path,
    pinned: Option<String>,
    progress: &dyn Progress,
) -> Result<()> {
    let fail = |reason: String| EmbedError::Download {
        url: url.to_string(),
        reason,
    };
    let io = |source| EmbedError::Io {
        path: target.to_path_buf(),
        source,
    };
    let mut response = agent(None).get(url).call().map_err(|e| fail(explain(&e)))?;
    if !response.status().is_success() {
        return Err(fail(format!(
            "the server answered {}: check the address (HF_ENDPOINT for models, RAGDOWN_ORT_URL for ONNX Runtime)",
            response.status()
        )));
    }
    let expected = pinned.or_else(|| server_checksum(&response));
    let total = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let part = target.with_extension("part");
    let mut file = fs::File::create(&part).map_err(io)?;
    let mut reader = response.body_mut().as_reader();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    progress.start(&name, total);
    loop {
        let n = reader.read(&mut buf).map_err(|e| fail(e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        file.write_all(&buf[..n]).map_err(io)?;
        progress.advance(n as u64);
    }
    progress.finish();
    file.sync_all().map_err(io)?;
    drop(file);
    let actual = format!("{:x}", hasher.finalize());
    if let Some(expected) = expected
        && expected != actual
    {
        let _ = fs::remove_file(&part);
        return Err(fail(format!(
            "checksum mismatch (expected {expected}, got {actual}); try again"
        )));
    }
    fs::rename(&part, target).map_err(io)
}

/// The hub sends the SHA-256 of LFS files as the (linked) ETag.
fn server_checksum(response: &ureq::http::Response<ureq::Body>) -> Option<String> {
    ["x-linked-etag", "etag"].iter().find_map(|name| {
        let value = response.headers().get(*name)?.to_str().ok()?;
        let hex = value
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_ascii_lowercase();
        (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then_some(hex)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::BufRead;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Serves `body` for every request on a local port, with `etag` when given.
    pub(crate) fn serve(body: &'static [u8], etag: Option<String>, requests: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.unwrap();
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                }
                let status = if request_line.contains("/missing/") {
                    "404 Not Found"
                } else {
                    "200 OK"
                };
                let etag = etag
                    .as_ref()
                    .map(|e| format!("ETag: \"{e}\"\r\n"))
                    .unwrap_or_default();
                write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{etag}Connection: close\r\n\r\n",
                    body.len()
                )
                .unwrap();
                stream.write_all(body).unwrap();
            }
        });
        format!("http://{addr}")
    }

    /// A private CA (as a TLS-inspecting proxy has) is trusted once SSL_CERT_FILE names it,
    /// and until then the failure says to set it. The CA and the HTTPS server come from the
    /// machine's openssl and Python.
    #[test]
    fn a_private_ca_is_trusted_through_ssl_cert_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &str| {
            let ok = std::process::Command::new("sh")
                .arg("-c")
                .arg(args)
                .current_dir(dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap()
                .success();
            assert!(ok, "{args}");
        };
        run(
            "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=ragdown-test-ca",
        );
        run(
            "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1",
        );
        run(
            "printf 'subjectAltName=IP:127.0.0.1' > san.ext && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext",
        );
        std::fs::write(dir.path().join("model.bin"), b"weights").unwrap();
        let server = "import http.server, ssl, sys\n\
            s = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n\
            c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
            c.load_cert_chain('server.pem', 'server.key')\n\
            s.socket = c.wrap_socket(s.socket, server_side=True)\n\
            print(s.server_address[1], flush=True)\n\
            s.serve_forever()\n";
        let mut child = std::process::Command::new("python3")
            .args(["-c", server])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut port = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let url = format!("https://127.0.0.1:{}/model.bin", port.trim());
        let target = dir.path().join("got.bin");
        // SAFETY (of the test): nextest runs each test in its own process.
        unsafe { std::env::remove_var("SSL_CERT_FILE") };
        let refused = download(&url, &target, &Silent).unwrap_err().to_string();
        assert!(refused.contains("SSL_CERT_FILE"), "{refused}");
        unsafe { std::env::set_var("SSL_CERT_FILE", dir.path().join("ca.pem")) };
        let fetched = download(&url, &target, &Silent);
        unsafe { std::env::remove_var("SSL_CERT_FILE") };
        let _ = child.kill();
        let _ = child.wait();
        fetched.unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"weights");
    }

    struct Counting(AtomicU64);
    impl Progress for Counting {
        fn start(&self, _: &str, total: Option<u64>) {
            assert_eq!(total, Some(11));
        }
        fn advance(&self, n: u64) {
            self.0.fetch_add(n, Ordering::Relaxed);
        }
        fn finish(&self) {}
    }

    fn preset(repo: &str) -> Preset {
        Preset {
            repo: repo.into(),
            files: vec![
                ("onnx/model.onnx".into(), "model.onnx".into()),
                ("tokenizer.json".into(), "tokenizer.json".into()),
            ],
            ..crate::preset::presets().remove(0)
        }
    }

    #[test]
    fn downloads_missing_files_with_progress_and_checksum() {
        let body: &'static [u8] = b"model bytes";
        let sha = format!("{:x}", Sha256::digest(body));
        let endpoint = serve(body, Some(sha), 2);
        let models = tempfile::tempdir().unwrap();
        let progress = Counting(AtomicU64::new(0));
        let dir = ensure_preset(&preset("org/model"), models.path(), &endpoint, &progress).unwrap();
        assert_eq!(fs::read(dir.join("model.onnx")).unwrap(), body);
        assert_eq!(fs::read(dir.join("tokenizer.json")).unwrap(), body);
        assert_eq!(progress.0.load(Ordering::Relaxed), 22);
        // Present files are not fetched again (the server only answers two requests).
        ensure_preset(&preset("org/model"), models.path(), &endpoint, &Silent).unwrap();
    }

    #[test]
    fn checksum_mismatch_leaves_nothing_behind() {
        let endpoint = serve(b"tampered!!!", Some("0".repeat(64)), 1);
        let models = tempfile::tempdir().unwrap();
        let err =
            ensure_preset(&preset("org/model"), models.path(), &endpoint, &Silent).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        let dir = models.path().join("granite-small");
        assert!(!dir.join("model.onnx").exists());
        assert!(!dir.join("model.part").exists());
    }

    #[test]
    fn http_errors_name_the_url() {
        let endpoint = serve(b"", None, 1);
        let models = tempfile::tempdir().unwrap();
        let err =
            ensure_preset(&preset("missing/model"), models.path(), &endpoint, &Silent).unwrap_err();
        assert!(
            err.to_string()
                .contains("/missing/model/resolve/main/onnx/model.onnx"),
            "{err}"
        );
    }
}
