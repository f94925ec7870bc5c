//! `ragdown serve` over real HTTP on a loopback port: every /api route's success and refusal
//! codes, auth on every protected route (walked from the router's own route table), path
//! traversal on every path-taking route, and MCP through rmcp's Streamable HTTP client. The
//! hash embedder keeps it fast; retrieval quality is tested with the real model elsewhere.

use crate::harness;

use std::path::Path;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

const TOKEN: &str = "test-token-123";

struct Serve {
    child: Child,
    base: String,
    docs: Arc<tempfile::TempDir>,
    outside: Arc<tempfile::TempDir>,
    data: Arc<tempfile::TempDir>,
    log: Arc<Mutex<String>>,
    http: reqwest::Client,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let full = root.join(rel);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn fixture(docs: &Path, outside: &Path) {
    write(
        docs,
        "work/.ragdown.json",
        r#"{"mcp": true, "color": "blue"}"#,
    );
    write(
        docs,
        "work/backups.md",
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
    );
    write(
        docs,
        "work/ops/pg.md",
        "---\naliases: [Postgres Guide]\ntags: [db]\n---\n# PG\n\n## Vacuum\n\nRun vacuum weekly.\n",
    );
    write(
        docs,
        "work/links.md",
        "# Links\n\nSee [[ops/pg#Vacuum|vacuum]] and [pg](ops/pg.md).\n",
    );
    write(
        docs,
        "work/sub/deep.md",
        "# Deep\n\nThe lighthouse keeper logs.\n",
    );
    write(docs, "work/img/logo.png", "\u{89}PNG fake");
    write(docs, "work/.obsidian/app.md", "# Hidden\n");
    write(docs, "home/garden.md", "# Garden\n\nTomatoes need sun.\n");
    write(docs, "loose.md", "# Loose\n");
    write(
        outside,
        "secret.md",
        "# Secret\n\nTOP SECRET outside text\n",
    );
    std::os::unix::fs::symlink(outside.join("secret.md"), docs.join("work/leak.md")).unwrap();
    std::os::unix::fs::symlink(outside, docs.join("work/linkdir")).unwrap();
}

impl Serve {
    async fn start(env: &[(&str, &str)]) -> Serve {
        let docs = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fixture(docs.path(), outside.path());
        let dirs = (
            Arc::new(docs),
            Arc::new(outside),
            Arc::new(tempfile::tempdir().unwrap()),
        );
        let serve = Serve::spawn(dirs, env);
        serve.wait_synced(5).await;
        serve
    }

    /// Another `ragdown serve` on the same docs and data dirs.
    fn also(&self, env: &[(&str, &str)]) -> Serve {
        let dirs = (self.docs.clone(), self.outside.clone(), self.data.clone());
        Serve::spawn(dirs, env)
    }

    fn spawn(
        (docs, outside, data): (
            Arc<tempfile::TempDir>,
            Arc<tempfile::TempDir>,
            Arc<tempfile::TempDir>,
        ),
        env: &[(&str, &str)],
    ) -> Serve {
        let (child, base, log) = harness::spawn_serve(docs.path(), data.path(), TOKEN, env);
        Serve {
            child,
            base,
            docs,
            outside,
            data,
            log,
            http: reqwest::Client::new(),
        }
    }

    /// Waits (bounded) until the folders hold `files` documents and no sync runs.
    async fn wait_synced(&self, files: u64) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let (code, status) = self.call(Method::GET, "/api/status", None, false).await;
            if code == StatusCode::OK
                && status["ready"] == true
                && status["files"].as_u64() == Some(files)
                && status["syncing"] == false
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("folders never synced: {}", self.log.lock().unwrap());
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        auth: bool,
    ) -> (StatusCode, Value) {
        let (code, _, bytes) = self.raw(method, path, body, auth).await;
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (code, value)
    }

    async fn raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        auth: bool,
    ) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if auth {
            req = req.bearer_auth(TOKEN);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = req.send().await.unwrap();
        let code = resp.status();
        let headers = resp.headers().clone();
        (code, headers, resp.bytes().await.unwrap().to_vec())
    }

    /// One request over a plain socket, its path sent byte for byte: (status, body).
    fn raw_tcp(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let addr = self.base.trim_start_matches("http://");
        request_with(
            &self.base,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            ),
            body,
        )
    }

    /// The status a POST of a `len`-byte body gets (read while the body is still being sent:
    /// a server refusing a body too large stops reading it).
    fn announce_body(&self, path: &str, len: usize) -> u16 {
        use std::io::{Read, Write};
        let addr = self.base.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
        )
        .unwrap();
        // The body goes from another thread: the server may stop reading it half-way.
        let mut writer = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            let block = vec![b' '; 64 * 1024];
            for _ in 0..len / block.len() + 1 {
                if writer.write_all(&block).is_err() {
                    return;
                }
            }
        });
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None, true).await
    }

    async fn mcp(&self, path: &str) -> RunningService<RoleClient, ()> {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", self.base));
        config.auth_header = Some(TOKEN.to_string());
        let transport = StreamableHttpClientTransport::from_config(config);
        ().serve(transport).await.unwrap()
    }
}

use harness::call_tool as tool;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protected_route_needs_the_token() {
    let s = Serve::start(&[]).await;
    let mut checked = 0;
    for route in ragdown_http::api_routes() {
        let path = route
            .path
            .replace("{name}", "work")
            .replace("{*scope}", "work");
        for method in route.methods {
            let m = Method::from_bytes(method.as_str().as_bytes()).unwrap();
            let (code, body) = s.call(m.clone(), &path, Some(json!({})), false).await;
            if route.needs_token {
                assert_eq!(code, StatusCode::UNAUTHORIZED, "{method} {path}: {body}");
                assert_eq!(body["error"], "Unauthorized");
                let wrong = s
                    .http
                    .request(m, format!("{}{path}", s.base))
                    .bearer_auth("wrong-token")
                    .send()
                    .await
                    .unwrap();
                assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
            } else {
                assert_eq!(code, StatusCode::OK, "{method} {path} is open");
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "the route table lists {checked} routes");
    // Unknown /api paths are 404 before auth; every other page is the web UI, without a token.
    let (code, _) = s.call(Method::GET, "/api/nope", None, false).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    for page in ["/", "/f/work/backups.md", "/search?q=x"] {
        let (code, headers, body) = s.raw(Method::GET, page, None, false).await;
        assert_eq!(code, StatusCode::OK, "{page}");
        assert_eq!(headers["content-type"], "text/html; charset=utf-8");
        assert_eq!(headers["cache-control"], "no-cache");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        let html = String::from_utf8(body).unwrap();
        assert!(html.contains(r#"<div id="app">"#), "{html}");
        // The page's style nonce is in the header and the page, and is this response's own.
        let nonce = csp
            .split("'nonce-")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap();
        assert!(html.contains(&format!(r#"content="{nonce}""#)), "{html}");
        let (_, again, _) = s.raw(Method::GET, page, None, false).await;
        assert!(
            !again["content-security-policy"]
                .to_str()
                .unwrap()
                .contains(nonce)
        );
        // The app's hashed bundle, cached for good; a name that is not one is a 404.
        let script = html
            .split("src=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string();
        let (code, headers, js) = s.raw(Method::GET, &script, None, false).await;
        assert_eq!(code, StatusCode::OK, "{script}");
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/javascript")
        );
        assert_eq!(
            headers["cache-control"],
            "public, max-age=31536000, immutable"
        );
        assert!(!js.is_empty());
    }
    assert_eq!(
        s.raw(Method::GET, "/assets/nope-123.js", None, false)
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.raw(Method::POST, "/somewhere", None, false).await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
    // A wrong method on a known route is 405.
    let (code, _) = s.call(Method::PUT, "/api/docs", None, true).await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
    let (_, headers, _) = s.raw(Method::GET, "/api/status", None, false).await;
    assert_eq!(headers["keep-alive"], "timeout=75");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_folders_crud() {
    let s = Serve::start(&[]).await;
    let (code, status) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(status["name"], "ragdown");
    assert_eq!(status["auth_required"], true);
    assert_eq!(status["settings"]["env"]["text_limit"], 2000);
    assert!(
        !status.to_string().contains(TOKEN),
        "status never shows the token"
    );

    let (code, list) = s.get("/api/folders").await;
    assert_eq!(code, StatusCode::OK);
    let names: Vec<&str> = list["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["home", "work"]);
    assert_eq!(list["folders"][1]["mcp"], true);
    assert_eq!(list["folders"][1]["mcp_path"], "/mcp/work");
    assert_eq!(list["folders"][1]["files"], 4);
    assert_eq!(list["folders"][0]["mcp"], false, "human-only by default");
    assert_eq!(list["loose_files"], json!(["loose.md"]));

    // Create.
    let (code, made) = s
        .call(
            Method::POST,
            "/api/folders",
            Some(json!({"name": "team", "title": "Team notes", "mcp": true})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["folder"]["title"], "Team notes");
    assert!(s.docs.path().join("team/.ragdown.json").exists());
    let (code, _) = s
        .call(
            Method::POST,
            "/api/folders",
            Some(json!({"name": "team"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT);
    for bad in [
        json!({"name": ".dot"}),
        json!({"name": "a/b"}),
        json!({}),
        json!({"name": "ok", "mcp": "yes"}),
    ] {
        let (code, body) = s
            .call(Method::POST, "/api/folders", Some(bad.clone()), true)
            .await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (code, _, _) = s.raw(Method::POST, "/api/folders", None, true).await;
    assert_eq!(
        code,
        StatusCode::BAD_REQUEST,
        "an empty body is {{}}: no name"
    );

    // Settings of a folder; unknown keys kept; bad hook refused.
    let (code, patched) = s
        .call(
            Method::PATCH,
            "/api/folders/work",
            Some(json!({"title": "Work", "hook": {"top_k": 2}})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{patched}");
    assert_eq!(patched["folder"]["hook"]["top_k"], 2);
    let saved = std::fs::read_to_string(s.docs.path().join("work/.ragdown.json")).unwrap();
    assert!(saved.contains("color"), "{saved}");
    let (code, _) = s
        .call(
            Method::PATCH,
            "/api/folders/work",
            Some(json!({"hook": {"min_ratio": 7}})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _) = s
        .call(
            Method::PATCH,
            "/api/folders/nope",
            Some(json!({"title": "x"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    // Rename keeps the documents (and re-syncs); a taken name is 409.
    let (code, _) = s
        .call(
            Method::PATCH,
            "/api/folders/home",
            Some(json!({"name": "work"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT);
    let (code, renamed) = s
        .call(
            Method::PATCH,
            "/api/folders/home",
            Some(json!({"name": "house"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["folder"]["files"], 1);
    let (code, docs) = s.get("/api/docs?folder=house").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(docs["docs"][0]["path"], "house/garden.md");
    let (code, _) = s.get("/api/docs?folder=home").await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    // Delete needs the exact confirm.
    let (code, _) = s
        .call(Method::DELETE, "/api/folders/team", None, true)
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _) = s
        .call(Method::DELETE, "/api/folders/team?confirm=Team", None, true)
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _) = s
        .call(Method::DELETE, "/api/folders/team?confirm=team", None, true)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert!(!s.docs.path().join("team").exists());
    let (code, _) = s
        .call(Method::DELETE, "/api/folders/team?confirm=team", None, true)
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    // Loose files.
    let (code, _) = s.call(Method::DELETE, "/api/loose", None, true).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    for other in ["work", "work/backups.md", "../x.md", "nope.md"] {
        let (code, _) = s
            .call(
                Method::DELETE,
                &format!("/api/loose?name={other}"),
                None,
                true,
            )
            .await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{other}");
    }
    let (code, _) = s
        .call(Method::DELETE, "/api/loose?name=loose.md", None, true)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert!(!s.docs.path().join("loose.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_search_links_and_files() {
    let s = Serve::start(&[]).await;
    let (code, docs) = s.get("/api/docs").await;
    assert_eq!(code, StatusCode::OK);
    let paths: Vec<&str> = docs["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"work/ops/pg.md") && paths.contains(&"home/garden.md"),
        "{paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("loose") || p.contains("leak") || p.contains(".obsidian"))
    );
    let (code, _) = s.get("/api/docs?folder=nope").await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    // Read.
    let (code, doc) = s.get("/api/doc?path=work/ops/pg.md").await;
    assert_eq!(code, StatusCode::OK, "{doc}");
    assert_eq!(doc["aliases"], json!(["Postgres Guide"]));
    assert_eq!(doc["tags"], json!(["db"]));
    let hash = doc["hash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 64);
    assert!(doc["text"].as_str().unwrap().contains("vacuum weekly"));
    assert_eq!(s.get("/api/doc").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        s.get("/api/doc?path=work/img/logo.png").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.get("/api/doc?path=loose.md").await.0,
        StatusCode::NOT_FOUND
    );

    // Upload: create, exists, overwrite, stale base_hash, CRLF kept.
    let up = |body: Value| s.call(Method::POST, "/api/doc", Some(body), true);
    let (code, made) = up(json!({"path": "work/new/a.md", "text": "# A\n\nfresh words\n"})).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["created"], true);
    let (code, _) = s.get("/api/doc?path=work/new/a.md").await;
    assert_eq!(code, StatusCode::OK, "indexed before the answer");
    let (code, _) = up(json!({"path": "work/new/a.md", "text": "x"})).await;
    assert_eq!(code, StatusCode::CONFLICT);
    let (code, over) =
        up(json!({"path": "work/new/a.md", "text": "# A\n\nnew\n", "overwrite": true})).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(over["created"], false);
    let (code, stale) =
        up(json!({"path": "work/ops/pg.md", "text": "# PG\n", "base_hash": "0".repeat(64)})).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(stale["code"], "changed");
    write(s.docs.path(), "work/crlf.md", "# C\r\n\r\nold\r\n");
    s.wait_synced(7).await;
    let (_, crlf) = s.get("/api/doc?path=work/crlf.md").await;
    let (code, _) =
        up(json!({"path": "work/crlf.md", "text": "# C\n\nnew\n", "base_hash": crlf["hash"]}))
            .await;
    assert_eq!(code, StatusCode::OK);
    let bytes = std::fs::read_to_string(s.docs.path().join("work/crlf.md")).unwrap();
    assert_eq!(bytes, "# C\r\n\r\nnew\r\n");
    for (body, want) in [
        (
            json!({"path": "loose2.md", "text": "x"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"path": "nope/a.md", "text": "x"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"path": "work/a.png", "text": "x"}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"path": "work/.obsidian/a.md", "text": "x"}),
            StatusCode::BAD_REQUEST,
        ),
        (json!({"path": "work/a.md"}), StatusCode::BAD_REQUEST),
    ] {
        let (code, msg) = up(body.clone()).await;
        assert_eq!(code, want, "{body}: {msg}");
    }
    assert_eq!(
        s.announce_body("/api/doc", 5 * 1024 * 1024),
        413,
        "over 4 MiB"
    );
    assert_eq!(
        s.announce_body("/api/folders", 2 * 1024 * 1024),
        413,
        "over 1 MiB"
    );
    let (code, _, _) = s.raw(Method::POST, "/api/doc", None, true).await;
    assert_eq!(
        code,
        StatusCode::BAD_REQUEST,
        "an empty body is {{}}: no path"
    );
    let bad_json = s
        .http
        .post(format!("{}/api/doc", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_json.status(), StatusCode::BAD_REQUEST);
    let not_json = s
        .http
        .post(format!("{}/api/doc", s.base))
        .bearer_auth(TOKEN)
        .body(r#"{"path": "work/plain.md", "text": "x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(
        not_json.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "a body needs Content-Type: application/json"
    );

    // Search: any folder, human-only included.
    let (code, hits) = s.get("/api/search?folder=home&q=tomatoes%20sun").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(hits["hits"][0]["path"], "home/garden.md");
    assert!(hits["hits"][0]["start_line"].as_u64().is_some());
    assert_eq!(
        s.get("/api/search?folder=work").await.0,
        StatusCode::BAD_REQUEST
    );
    // Without a folder: every folder, hits labelled with theirs.
    let (code, everywhere) = s.get("/api/search?q=tomatoes%20sun%20pg_restore").await;
    assert_eq!(code, StatusCode::OK, "{everywhere}");
    let paths: Vec<&str> = everywhere["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["path"].as_str())
        .collect();
    assert!(
        paths.contains(&"home/garden.md") && paths.contains(&"work/backups.md"),
        "{paths:?}"
    );
    assert!(everywhere.get("indexing").is_none(), "nothing is indexing");
    assert_eq!(
        s.get("/api/search?folder=nope&q=x").await.0,
        StatusCode::NOT_FOUND
    );
    let (_, many) = s.get("/api/search?folder=work&q=run&top_k=500").await;
    assert!(many["hits"].as_array().unwrap().len() <= 50);

    // Resolve, backlinks, move.
    let (code, r) = s
        .get("/api/resolve?from=work/links.md&link=pg%23Vacuum")
        .await;
    assert_eq!(code, StatusCode::OK, "{r}");
    assert_eq!(r["path"], "work/ops/pg.md");
    assert_eq!(r["anchor"], "Vacuum");
    assert_eq!(
        s.get("/api/resolve?from=work/links.md&link=nothing")
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let (code, b) = s.get("/api/backlinks?path=work/ops/pg.md").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(b["backlinks"][0]["path"], "work/links.md");
    assert_eq!(
        s.get("/api/backlinks?path=work/nope.md").await.0,
        StatusCode::NOT_FOUND
    );
    let (code, moved) = s
        .call(
            Method::POST,
            "/api/move",
            Some(json!({"from": "work/ops/pg.md", "to": "work/db/postgres.md"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{moved}");
    assert_eq!(moved["updated"], json!(["work/links.md"]));
    let links = std::fs::read_to_string(s.docs.path().join("work/links.md")).unwrap();
    assert!(links.contains("[pg](db/postgres.md)"), "{links}");
    let (code, _) = s
        .call(
            Method::POST,
            "/api/move",
            Some(json!({"from": "work/backups.md", "to": "home/backups.md"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        s.call(Method::GET, "/api/move", None, true).await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );

    // Raw files: bytes, headers, sandboxed.
    let (code, headers, bytes) = s
        .raw(Method::GET, "/api/file?path=work/img/logo.png", None, true)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(headers["content-type"], "image/png");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["content-security-policy"], "sandbox");
    assert_eq!(bytes, "\u{89}PNG fake".as_bytes());
    let (_, headers, _) = s
        .raw(Method::GET, "/api/file?path=work/links.md", None, true)
        .await;
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown")
    );
    // A large file is streamed (a sparse 256 MiB file: read whole, it would cost that much).
    let big = std::fs::File::create(s.docs.path().join("work/img/big.bin")).unwrap();
    big.set_len(256 << 20).unwrap();
    let response = s
        .http
        .get(format!("{}/api/file?path=work/img/big.bin", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.content_length(), Some(256 << 20));
    let mut stream = response;
    let mut received = 0usize;
    while let Some(chunk) = stream.chunk().await.unwrap() {
        received += chunk.len();
    }
    assert_eq!(received, 256 << 20);
    // A name longer than file systems allow: 400 with the reason, not a 500.
    let long = format!("work/{}.md", "n".repeat(5000));
    let (code, body) = s
        .call(
            Method::POST,
            "/api/doc",
            Some(json!({"path": long, "text": "# Long"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("255 bytes"),
        "{body}"
    );

    // Delete.
    let (code, _) = s
        .call(Method::DELETE, "/api/doc?path=work/new/a.md", None, true)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        s.get("/api/doc?path=work/new/a.md").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.call(Method::DELETE, "/api/doc?path=work/new/a.md", None, true)
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.call(
            Method::DELETE,
            "/api/doc?path=work/img/logo.png",
            None,
            true
        )
        .await
        .0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        s.call(Method::DELETE, "/api/doc", None, true).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn render_resolves_links_through_the_index_and_renders_inert() {
    let s = Serve::start(&[]).await;
    let view = concat!(
        "---\ntags: [view]\nowner: ops\n---\n",
        "# View\n\n[[Postgres Guide#Vacuum]] [[ops/pg|the guide]] [pg](ops/pg.md) [[nowhere]]\n\n",
        "![[img/logo.png]] ![logo](img/logo.png) ![[../img/logo.png]] ![[links]]\n\n",
        "## Hostile\n\n[x](javascript:alert(3))\n\n<script>alert(1)</script><img src=x onerror=alert(2)>\n\n",
        "![[../../../etc/passwd]] ![[.obsidian/app.md]]\n",
    );
    let (code, saved) = s
        .call(
            Method::POST,
            "/api/doc",
            Some(json!({"path": "work/view.md", "text": view})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{saved}");
    let (code, r) = s.get("/api/render?path=work/view.md").await;
    assert_eq!(code, StatusCode::OK, "{r}");
    let html = r["html"].as_str().unwrap();
    // Links resolve as the index resolves them: by alias, by path, relative.
    assert!(
        html.contains(r#"href="/f/work/ops/pg.md#vacuum""#),
        "{html}"
    );
    assert!(
        html.contains(r#"href="/f/work/ops/pg.md" rel="noopener noreferrer">the guide</a>"#),
        "{html}"
    );
    assert!(html.contains(r#"class="unresolved""#), "{html}");
    assert!(
        html.contains(r#"<img data-file="work/img/logo.png" alt="img/logo.png">"#),
        "{html}"
    );
    assert!(html.contains(r#"data-embed="work/links.md""#), "{html}");
    for bad in ["<script", "onerror", "javascript:"] {
        assert!(!html.contains(bad), "{bad}: {html}");
    }
    // Only files inside the folder, never a private one, are offered to the app.
    assert_eq!(html.matches("data-file=").count(), 2, "{html}");
    assert_eq!(r["path"], "work/view.md");
    assert_eq!(r["title"], "View");
    assert_eq!(r["hash"], saved["hash"]);
    assert_eq!(
        r["properties"],
        json!([{"key": "tags", "value": "view"}, {"key": "owner", "value": "ops"}])
    );
    assert_eq!(r["headings"][1]["anchor"], "hostile");
    assert_eq!(r["headings"][1]["line"], 11);
    // A search hit in that section cites lines inside the heading's range: the app opens the
    // hit at the deepest heading whose range holds its first line.
    let (_, found) = s.get("/api/search?folder=work&q=hostile").await;
    let hit = &found["hits"][0];
    assert_eq!(hit["path"], "work/view.md", "{found}");
    let line = hit["start_line"].as_u64().unwrap();
    let at = r["headings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["line"].as_u64().unwrap() <= line && line <= h["end_line"].as_u64().unwrap())
        .max_by_key(|h| h["level"].as_u64().unwrap())
        .unwrap();
    assert_eq!(at["anchor"], "hostile", "{found}");
    // A draft renders as if it were at its path, before it exists, and nothing is written.
    let (code, draft) = s
        .call(
            Method::POST,
            "/api/render",
            Some(json!({"path": "work/drafts/new.md", "text": "# New\n\nSee [[../ops/pg|pg]] <script>x</script>"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{draft}");
    let html = draft["html"].as_str().unwrap();
    assert!(html.contains(r#"href="/f/work/ops/pg.md""#), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(!s.docs.path().join("work/drafts").exists());
    let (code, _) = s
        .call(
            Method::POST,
            "/api/render",
            Some(json!({"path": "work/../../x.md", "text": "x"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        s.get("/api/render?path=work/none.md").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        s.call(Method::GET, "/api/render?path=work/view.md", None, false)
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_traversal_is_refused_on_every_path_route() {
    let s = Serve::start(&[]).await;
    let secret = "TOP SECRET";
    let escapes = [
        "work/../../etc/passwd",
        "work/%2e%2e/%2e%2e/etc/passwd",
        "work/%2E%2E/home/garden.md",
        "..%2fwork%2fbackups.md",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "work/leak.md",
        "work/linkdir/secret.md",
        "work/.obsidian/app.md",
    ];
    let outside_name = s.outside.path().join("secret.md");
    let absolute = outside_name.to_string_lossy().to_string();
    let mut cases: Vec<String> = escapes.iter().map(|e| e.to_string()).collect();
    cases.push(absolute.clone());
    for path in &cases {
        for route in [
            "/api/doc?path=",
            "/api/file?path=",
            "/api/backlinks?path=",
            "/api/render?path=",
            "/api/resolve?link=x&from=",
        ] {
            let (code, _, body) = s
                .raw(Method::GET, &format!("{route}{path}"), None, true)
                .await;
            let text = String::from_utf8_lossy(&body);
            assert!(
                code.is_client_error(),
                "{route}{path} answered {code}: {text}"
            );
            assert!(!text.contains(secret), "{route}{path} leaked: {text}");
        }
        let (code, _) = s
            .call(Method::DELETE, &format!("/api/doc?path={path}"), None, true)
            .await;
        assert!(code.is_client_error(), "DELETE {path}: {code}");
    }
    // In JSON bodies nothing is URL-decoded: `%2e%2e` there is a plain name, not an escape.
    let literal = [
        "work/../../etc/passwd",
        "work/../home/garden.md",
        "../outside.md",
        "/etc/passwd",
        "work/leak.md",
        "work/linkdir/secret.md",
        "work/.obsidian/app.md",
        absolute.as_str(),
    ];
    for path in literal {
        let (code, _) = s
            .call(
                Method::POST,
                "/api/doc",
                Some(json!({"path": path, "text": "x", "overwrite": true})),
                true,
            )
            .await;
        assert!(code.is_client_error(), "POST {path}: {code}");
        let (code, _) = s
            .call(
                Method::POST,
                "/api/move",
                Some(json!({"from": "work/backups.md", "to": path})),
                true,
            )
            .await;
        assert!(code.is_client_error(), "move to {path}: {code}");
    }
    assert_eq!(
        std::fs::read_to_string(&outside_name).unwrap(),
        "# Secret\n\nTOP SECRET outside text\n",
        "nothing outside was touched"
    );
    assert!(
        s.docs.path().join("work/backups.md").exists(),
        "no move happened"
    );
    // MCP scope paths.
    for path in [
        "/mcp/work/%2e%2e",
        "/mcp/%2e%2e/work",
        "/mcp/work/linkdir",
        "/mcp/work/.obsidian",
        "/mcp/work/backups.md",
        "/mcp/work/%zz",
    ] {
        // Sent as written: an HTTP client library would resolve `%2e%2e` itself.
        let (code, body) = s.raw_tcp("POST", path, "{}");
        assert_eq!(code, 404, "{path}: {body}");
        assert!(
            body.contains("Not found: no folder with MCP turned on at this path"),
            "{path}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_endpoints_over_streamable_http() {
    let s = Serve::start(&[]).await;
    let client = s.mcp("/mcp/work").await;
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("ragdown-work")
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.len(),
        ragdown_server::tools::in_folder().count(),
        "{:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let (err, text) = tool(&client, "ragdown_recall", json!({"query": "pg_restore"})).await;
    assert!(!err, "{text}");
    assert!(text.contains("backups.md:"), "{text}");
    assert!(
        !text.contains("work/backups.md"),
        "paths are relative to the folder: {text}"
    );
    assert!(
        !text.contains("garden"),
        "another folder's documents never show: {text}"
    );
    let (err, text) = tool(
        &client,
        "ragdown_read_doc",
        json!({"path": "../home/garden.md"}),
    )
    .await;
    assert!(err, "{text}");
    let (err, text) = tool(
        &client,
        "ragdown_write",
        json!({"path": "agent/w.md", "text": "# W\n\nwritten over http\n"}),
    )
    .await;
    assert!(!err, "{text}");
    let (code, _) = s.get("/api/doc?path=work/agent/w.md").await;
    assert_eq!(code, StatusCode::OK, "indexed before the tool answered");
    client.cancel().await.unwrap();

    // Human-only and missing folders answer the same 404; bare /mcp says to pick one.
    // A human-only folder and a missing one answer alike, and say how to turn MCP on.
    let mut answers = Vec::new();
    for path in ["/mcp/home", "/mcp/nope"] {
        // Sent as written: an HTTP client library would resolve `%2e%2e` itself.
        let (code, body) = s.raw_tcp("POST", path, "{}");
        assert_eq!(code, 404, "{path}: {body}");
        assert!(
            body.contains("Not found: no folder with MCP turned on at this path")
                && body.contains("{ \\\"mcp\\\": true } in its .ragdown.json"),
            "{path}: {body}"
        );
        answers.push(body);
    }
    assert_eq!(answers[0], answers[1]);
    let (code, body) = s.call(Method::POST, "/mcp", Some(json!({})), true).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let error = body["error"].as_str().unwrap();
    assert!(
        error.starts_with("Pick a folder: /mcp/<folder>")
            && error.contains("RAGDOWN_ROOT_MCP=true"),
        "{error}"
    );

    // Turning MCP on for a folder opens its endpoint at once.
    let (code, _) = s
        .call(
            Method::PATCH,
            "/api/folders/home",
            Some(json!({"mcp": true})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    let home = s.mcp("/mcp/home").await;
    let (err, text) = tool(&home, "ragdown_recall", json!({"query": "tomatoes"})).await;
    assert!(!err && text.contains("garden.md"), "{text}");
    home.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_refuses_writes_but_not_folder_settings() {
    let s = Serve::start(&[("RAGDOWN_READ_ONLY", "true")]).await;
    for (method, path, body) in [
        (
            Method::POST,
            "/api/doc",
            json!({"path": "work/x.md", "text": "x"}),
        ),
        (Method::DELETE, "/api/doc?path=work/backups.md", json!({})),
        (
            Method::POST,
            "/api/move",
            json!({"from": "work/backups.md", "to": "work/b.md"}),
        ),
        (Method::POST, "/api/folders", json!({"name": "x"})),
        (Method::DELETE, "/api/folders/home?confirm=home", json!({})),
        (Method::PATCH, "/api/folders/home", json!({"name": "house"})),
        (Method::DELETE, "/api/loose?name=loose.md", json!({})),
        (Method::PATCH, "/api/settings", json!({"text_limit": 10})),
    ] {
        let (code, msg) = s.call(method.clone(), path, Some(body), true).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{method} {path}: {msg}");
    }
    let (code, _) = s
        .call(
            Method::PATCH,
            "/api/folders/home",
            Some(json!({"title": "Home", "mcp": true})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "settings are not documents");
    assert!(s.docs.path().join("work/backups.md").exists());
    let client = s.mcp("/mcp/work").await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        !tools.iter().any(|t| t.name == "ragdown_write"),
        "write tools hidden"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_apply_at_once_and_the_query_log_sums_up() {
    let s = Serve::start(&[]).await;
    let patch = |body: Value| s.call(Method::PATCH, "/api/settings", Some(body), true);
    let (code, out) =
        patch(json!({"text_limit": 12, "query_log": true, "hook": {"top_k": 1}})).await;
    assert_eq!(code, StatusCode::OK, "{out}");
    assert_eq!(out["settings"]["text_limit"], 12);
    let file = s.docs.path().join(".ragdown-server.json");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("text_limit")
    );
    let (_, status) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(status["settings"]["text_limit"], 12);
    assert_eq!(status["settings"]["saved"]["text_limit"], 12);
    assert_eq!(status["settings"]["env"]["text_limit"], 2000);

    let client = s.mcp("/mcp/work").await;
    let (_, text) = tool(
        &client,
        "ragdown_recall",
        json!({"query": "pg_restore twice"}),
    )
    .await;
    assert!(
        !text.contains("Run pg_restore twice."),
        "clipped to 12 characters: {text}"
    );
    let (_, _) = tool(&client, "ragdown_read_doc", json!({"path": "backups.md"})).await;
    let (_, _) = tool(
        &client,
        "ragdown_recall",
        json!({"query": "qqqq zzzz unrelated"}),
    )
    .await;
    client.cancel().await.unwrap();
    let (code, _) = s.get("/api/search?folder=home&q=tomatoes").await;
    assert_eq!(code, StatusCode::OK);

    let (code, log) = s.get("/api/query-log").await;
    assert_eq!(code, StatusCode::OK, "{log}");
    assert_eq!(log["enabled"], true);
    assert_eq!(log["searches"]["recall"], 2, "{log}");
    assert_eq!(log["searches"]["web"], 1, "{log}");
    let read = &log["most_read"][0];
    assert_eq!(read["path"], "backups.md");
    assert_eq!(read["folder"], "work");
    assert_eq!(read["after_search"], 1);
    let (code, _) = s.call(Method::DELETE, "/api/query-log", None, true).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(s.get("/api/query-log").await.1["entries"], 0);

    for bad in [
        json!({"text_limit": -3}),
        json!({"watch": "sometimes"}),
        json!({"nope": 1}),
        json!({"embedder": "no-such-model"}),
    ] {
        let (code, body) = patch(bad.clone()).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    assert_eq!(
        s.get("/api/settings").await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let (code, _) = patch(json!({"text_limit": null, "query_log": null, "hook": null})).await;
    assert_eq!(code, StatusCode::OK);
    assert!(!file.exists(), "nothing saved: the file is gone");

    // A hand edit of the file (or another server sharing the docs dir) is followed without a
    // restart.
    std::fs::write(&file, r#"{"text_limit": 33}"#).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (_, status) = s.call(Method::GET, "/api/status", None, false).await;
        if status["settings"]["text_limit"] == 33 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the edit was not followed: {status}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[test]
fn serve_refuses_to_start_without_a_token() {
    let docs = tempfile::tempdir().unwrap();
    let out = harness::ragdown()
        .arg("serve")
        .env("RAGDOWN_DOCS_DIR", docs.path())
        .env_remove("RAGDOWN_TOKEN")
        .env_remove("SECURE_LOCAL_NET")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("RAGDOWN_TOKEN") && err.contains("openssl rand -hex 32"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_local_net_needs_no_token_and_sigterm_stops_cleanly() {
    let mut s = Serve::start(&[("SECURE_LOCAL_NET", "true"), ("RAGDOWN_TOKEN", "")]).await;
    let (code, _) = s.call(Method::GET, "/api/folders", None, false).await;
    assert_eq!(code, StatusCode::OK);
    let pid = s.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}: {}", s.log.lock().unwrap());
}

/// 50 MCP clients doing recall at once against one folder endpoint: no request may fail.
/// Runs 5 s in the suite; `RAGDOWN_LOAD_SECS=30 RAGDOWN_LOAD_EMBEDDER=minilm` is the measured
/// run (latencies are printed, not asserted: timing belongs to benchmarks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_recall_without_errors() {
    let secs: u64 = std::env::var("RAGDOWN_LOAD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let embedder = std::env::var("RAGDOWN_LOAD_EMBEDDER").unwrap_or_else(|_| "hash".into());
    let count: usize = std::env::var("RAGDOWN_LOAD_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let s = Arc::new(Serve::start(&[("RAGDOWN_EMBEDDER", &embedder)]).await);
    let queries = [
        "how do I restore a backup",
        "pg_restore",
        "vacuum schedule",
        "Postgres Guide",
        "lighthouse keeper",
    ];
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut clients = Vec::new();
    for i in 0..count {
        let s = s.clone();
        clients.push(tokio::spawn(async move {
            let client = s.mcp("/mcp/work").await;
            let (mut latencies, mut errors) = (Vec::new(), Vec::new());
            let mut n = i;
            while Instant::now() < deadline {
                let started = Instant::now();
                let (err, text) = tool(
                    &client,
                    "ragdown_recall",
                    json!({"query": queries[n % queries.len()], "top_k": 5}),
                )
                .await;
                latencies.push(started.elapsed());
                if err || !text.starts_with("[1]") {
                    errors.push(text);
                }
                n += 1;
            }
            client.cancel().await.unwrap();
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = Vec::new();
    // Fairness: how many answers each client got.
    let mut per_client = Vec::new();
    for c in clients {
        let (l, e) = c.await.unwrap();
        per_client.push(l.len());
        latencies.extend(l);
        errors.extend(e);
    }
    println!(
        "load: answers per client from {} to {}",
        per_client.iter().min().unwrap_or(&0),
        per_client.iter().max().unwrap_or(&0)
    );
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    println!(
        "load: {count} clients, {secs} s, {embedder}: {} recalls ({:.0}/s), p50 {:.1} ms, p95 {:.1} ms, {} errors",
        latencies.len(),
        latencies.len() as f64 / secs as f64,
        at(0.5).as_secs_f64() * 1000.0,
        at(0.95).as_secs_f64() * 1000.0,
        errors.len()
    );
    assert!(latencies.len() >= count, "every client got answers");
    assert!(
        errors.is_empty(),
        "{} failed, first: {:?}",
        errors.len(),
        errors.first()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subfolder_endpoints_narrow_the_folder() {
    let s = Serve::start(&[]).await;
    write(
        s.docs.path(),
        "work/sub/inner/more.md",
        "# More\n\nSee [[backups]] and [deep](../deep.md).\n\nThe keeper's lamp.\n",
    );
    s.wait_synced(6).await;
    let sub = s.mcp("/mcp/work/sub").await;
    let (err, text) = tool(
        &sub,
        "ragdown_recall",
        json!({"query": "keeper lighthouse lamp"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(
        text.contains("deep.md:") && text.contains("inner/more.md:"),
        "{text}"
    );
    assert!(
        !text.contains("sub/deep.md") && !text.contains("backups.md:"),
        "only the subfolder, relative: {text}"
    );

    let (_, stats) = tool(&sub, "ragdown_stats", json!({})).await;
    let stats: Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["files"], 2, "{stats}");
    let (_, list) = tool(&sub, "ragdown_list", json!({})).await;
    assert!(
        list.starts_with("documents: 2") && list.contains("\ndeep.md — Deep"),
        "{list}"
    );

    let (err, text) = tool(&sub, "ragdown_read_doc", json!({"path": "deep.md"})).await;
    assert!(!err && text.starts_with("deep.md:1-4 of 4"), "{text}");
    let (err, _) = tool(&sub, "ragdown_read_doc", json!({"path": "../backups.md"})).await;
    assert!(err, "a subfolder endpoint reaches only under it");
    let (err, text) = tool(&sub, "ragdown_read_doc", json!({"path": "backups"})).await;
    assert!(
        err,
        "a link target outside the subfolder is not found: {text}"
    );
    let (err, text) = tool(&sub, "ragdown_read_doc", json!({"path": "deep"})).await;
    assert!(!err && text.starts_with("deep.md:"), "{text}");

    let (err, text) = tool(
        &sub,
        "ragdown_remember",
        json!({"title": "Sub note", "content": "kept in the subfolder", "name": "kept"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(s.docs.path().join("work/sub/kept.md").exists(), "{text}");

    let (err, text) = tool(
        &sub,
        "ragdown_move",
        json!({"from": "deep.md", "to": "inner/deep.md"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(
        text.contains("inner/more.md"),
        "its link was rewritten, shown relative: {text}"
    );
    assert!(s.docs.path().join("work/sub/inner/deep.md").exists());
    let more = std::fs::read_to_string(s.docs.path().join("work/sub/inner/more.md")).unwrap();
    assert!(more.contains("[deep](deep.md)"), "{more}");
    sub.cancel().await.unwrap();

    // A missing subfolder, a file and a symlink are all the same 404.
    for path in [
        "/mcp/work/nope",
        "/mcp/work/backups.md",
        "/mcp/work/linkdir",
        "/mcp/work/sub/nope",
    ] {
        let (code, body) = s.raw_tcp("POST", path, "{}");
        assert_eq!(code, 404, "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_lists_exactly_the_tools_it_answers() {
    let root_on = ("RAGDOWN_ROOT_MCP", "true");
    let s = Serve::start(&[root_on]).await;
    let folder_tools = harness::listed_tools(&s.mcp("/mcp/work").await).await;
    let root_tools = harness::listed_tools(&s.mcp("/mcp").await).await;
    let table = ragdown_server::tools::definitions();
    let in_folder = ragdown_server::tools::in_folder().count();
    assert_eq!(folder_tools.len(), in_folder, "{folder_tools:?}");
    assert_eq!(root_tools.len(), table.len(), "{root_tools:?}");
    assert!(
        in_folder < table.len(),
        "the root's own tools are in the table"
    );
    for (path, every) in [("/mcp/work", &folder_tools), ("/mcp", &root_tools)] {
        harness::walk_tool_table(&s.mcp(path).await, every, |_, _| true).await;
    }
    let read_only = Serve::start(&[root_on, ("RAGDOWN_READ_ONLY", "true")]).await;
    for (path, every) in [("/mcp/work", &folder_tools), ("/mcp", &root_tools)] {
        harness::walk_tool_table(&read_only.mcp(path).await, every, |_, writes| !writes).await;
    }
    drop(read_only);
    let hidden = ["ragdown_recall", "ragdown_move", "ragdown_folders"];
    let disabled = Serve::start(&[
        root_on,
        (
            "RAGDOWN_DISABLED_TOOLS",
            "ragdown_recall, ragdown_move,ragdown_folders",
        ),
    ])
    .await;
    for (path, every) in [("/mcp/work", &folder_tools), ("/mcp", &root_tools)] {
        harness::walk_tool_table(&disabled.mcp(path).await, every, |name, _| {
            !hidden.contains(&name)
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_endpoint_serves_every_mcp_folder() {
    let s = Serve::start(&[("RAGDOWN_ROOT_MCP", "true")]).await;
    write(s.docs.path(), "team/.ragdown.json", r#"{"mcp": true}"#);
    write(
        s.docs.path(),
        "team/restore.md",
        "# Team restore\n\nThe team runs pg_restore on Fridays.\n",
    );
    s.wait_synced(6).await;
    let root = s.mcp("/mcp").await;
    let info = root.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("ragdown")
    );
    let tools = root.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"ragdown_folders") && names.contains(&"ragdown_create_folder"),
        "{names:?}"
    );
    assert_eq!(names.len(), 15);
    let read = tools.iter().find(|t| t.name == "ragdown_read_doc").unwrap();
    let required = read.input_schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("folder")), "{required:?}");
    // Every tool a schema lists answers as its schema says: ragdown_ingest writes into one
    // folder, so it says folder is required and, without one, says to pass it.
    let ingest = tools.iter().find(|t| t.name == "ragdown_ingest").unwrap();
    let required = ingest.input_schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("folder")), "{required:?}");
    let (err, text) = tool(
        &root,
        "ragdown_ingest",
        json!({"content": "Tide tables", "format": "text", "source": "https://example.test/tides"}),
    )
    .await;
    assert!(err && text.contains("needs a folder"), "{text}");

    let (_, folders) = tool(&root, "ragdown_folders", json!({})).await;
    assert!(
        folders.contains("work — work") && folders.contains("team"),
        "{folders}"
    );
    assert!(
        !folders.contains("home"),
        "a human-only folder is not there: {folders}"
    );

    let (err, text) = tool(&root, "ragdown_recall", json!({"query": "pg_restore"})).await;
    assert!(!err, "{text}");
    assert!(
        text.contains("[work] backups.md:") && text.contains("[team] restore.md:"),
        "{text}"
    );
    assert!(!text.contains("garden"), "{text}");
    let (_, json_hits) = tool(
        &root,
        "ragdown_recall",
        json!({"query": "pg_restore", "format": "json"}),
    )
    .await;
    let v: Value = serde_json::from_str(&json_hits).unwrap();
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["folder"] == "team" && h["path"] == "restore.md"),
        "{v}"
    );
    let (_, text) = tool(
        &root,
        "ragdown_recall",
        json!({"query": "pg_restore", "folder": "team"}),
    )
    .await;
    assert!(
        text.starts_with("[1] restore.md:") && !text.contains("[work]"),
        "{text}"
    );

    let (err, text) = tool(&root, "ragdown_read_doc", json!({"path": "backups.md"})).await;
    assert!(err && text.contains("needs a folder"), "{text}");
    let (err, text) = tool(
        &root,
        "ragdown_read_doc",
        json!({"folder": "work", "path": "backups.md"}),
    )
    .await;
    assert!(!err && text.starts_with("backups.md:1-8"), "{text}");
    let (err, missing) = tool(
        &root,
        "ragdown_read_doc",
        json!({"folder": "nope", "path": "a.md"}),
    )
    .await;
    let (err2, human) = tool(
        &root,
        "ragdown_read_doc",
        json!({"folder": "home", "path": "garden.md"}),
    )
    .await;
    assert!(err && err2, "{missing} / {human}");
    assert_eq!(
        missing.replace("nope", "X"),
        human.replace("home", "X"),
        "a human-only folder answers as a missing one"
    );

    let (_, list) = tool(&root, "ragdown_list", json!({})).await;
    assert!(
        list.starts_with("documents: 5") && list.contains("[team] restore.md"),
        "{list}"
    );
    let (_, stats) = tool(&root, "ragdown_stats", json!({})).await;
    assert_eq!(
        serde_json::from_str::<Value>(&stats).unwrap()["files"],
        5,
        "{stats}"
    );
    let (_, context) = tool(
        &root,
        "ragdown_context",
        json!({"prompt": "how does the team run pg_restore on Fridays", "min_score": 0.01}),
    )
    .await;
    assert!(
        context.contains("source=\"ragdown\"") && context.contains("[team] restore.md"),
        "{context}"
    );

    let (err, made) = tool(
        &root,
        "ragdown_create_folder",
        json!({"name": "agents", "title": "Agent notes"}),
    )
    .await;
    assert!(!err, "{made}");
    let config = std::fs::read_to_string(s.docs.path().join("agents/.ragdown.json")).unwrap();
    assert!(
        config.contains("\"created_by\": \"ragdown_create_folder\"")
            && config.contains("\"mcp\": true"),
        "{config}"
    );
    let (err, _) = tool(&root, "ragdown_create_folder", json!({"name": "agents"})).await;
    assert!(err, "never overwrites");
    let (err, text) = tool(
        &root,
        "ragdown_remember",
        json!({"folder": "agents", "title": "First", "content": "hello from the root", "name": "first"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(
        s.docs.path().join("agents/notes/first.md").exists(),
        "{text}"
    );
    root.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_reads_and_only_the_primary_changes_settings() {
    let s = Serve::start(&[]).await;
    let second = s.also(&[]);
    second.wait_synced(5).await;
    let (_, status) = second.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(status["role"], "reader", "{status}");
    let (code, body) = second
        .call(
            Method::PATCH,
            "/api/settings",
            Some(json!({"text_limit": 5})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{body}");
    // A write through the reader is synced by the primary and seen by both.
    let (code, made) = second
        .call(
            Method::POST,
            "/api/doc",
            Some(json!({"path": "work/from-reader.md", "text": "# From the reader\n"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(
        second.get("/api/doc?path=work/from-reader.md").await.0,
        StatusCode::OK
    );
    assert_eq!(
        s.get("/api/doc?path=work/from-reader.md").await.0,
        StatusCode::OK
    );
}

/// Switching the embedder loads the new one first, then rebuilds every folder with it.
/// Needs the test model (scripts/fetch-test-model.sh; scripts/test.sh provides it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_the_embedder_rebuilds_with_the_new_model() {
    let s = Serve::start(&[]).await;
    let (_, before) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(before["embedder"], "hash-384");
    let (code, body) = s
        .call(
            Method::PATCH,
            "/api/settings",
            Some(json!({"embedder": "minilm"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, status) = s.call(Method::GET, "/api/status", None, false).await;
        let switched = status["embedder"].as_str().is_some_and(|e| e != "hash-384");
        if switched && status["files"] == 5 && status["syncing"] == false {
            break;
        }
        assert!(Instant::now() < deadline, "never rebuilt: {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, hits) = s
        .get("/api/search?folder=work&q=how%20do%20I%20restore%20a%20backup")
        .await;
    assert_eq!(hits["hits"][0]["path"], "work/backups.md", "{hits}");
    let saved = std::fs::read_to_string(s.docs.path().join(".ragdown-server.json")).unwrap();
    assert!(saved.contains("minilm"), "{saved}");
}

/// The port answers before the model has loaded: status says `ready: false`, other routes 503.
/// (The "model" here is an OpenAI-compatible endpoint that never answers its first request.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_answers_while_the_model_loads() {
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", stalled.local_addr().unwrap());
    let s = Arc::new(Serve::spawn(
        (
            Arc::new(tempfile::tempdir().unwrap()),
            Arc::new(tempfile::tempdir().unwrap()),
            Arc::new(tempfile::tempdir().unwrap()),
        ),
        &[
            ("RAGDOWN_EMBEDDER", "openai:stalled"),
            ("RAGDOWN_EMBEDDING_URL", &url),
        ],
    ));
    let (code, status) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(status["ready"], false, "{status}");
    let (code, body) = s.get("/api/folders").await;
    assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("loading"),
        "{body}"
    );
    drop(stalled);
}

/// Whether the server closes a keep-alive connection left idle for `idle` after one request.
fn closed_after_idle(base: &str, idle: Duration) -> bool {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(stream, "GET /api/status HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let n = stream.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // Drain whatever else of the response came, then stay idle.
    while stream.read(&mut buf).is_ok_and(|n| n > 0) {}
    std::thread::sleep(idle);
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => panic!("unexpected bytes on an idle connection"),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => true,
        Err(_) => false, // timed out: still open
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_connections_close_after_the_timeout() {
    let quick = Serve::start(&[("HTTP_KEEP_ALIVE_TIMEOUT_MS", "300")]).await;
    let (_, headers, _) = quick.raw(Method::GET, "/api/status", None, false).await;
    assert_eq!(headers["keep-alive"], "timeout=1");
    let base = quick.base.clone();
    let closed =
        tokio::task::spawn_blocking(move || closed_after_idle(&base, Duration::from_millis(1200)));
    assert!(closed.await.unwrap(), "idle past 300 ms: closed");
    let default = Serve::start(&[]).await;
    let base = default.base.clone();
    let closed =
        tokio::task::spawn_blocking(move || closed_after_idle(&base, Duration::from_millis(1200)));
    assert!(
        !closed.await.unwrap(),
        "idle 1.2 s under the default 75 s: still open"
    );
}

/// A model that no longer loads leaves every folder answering keyword searches from its index.
/// Needs the test model (scripts/fetch-test-model.sh; scripts/test.sh provides it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_falls_back_to_keyword_search_when_the_model_no_longer_loads() {
    let first = Serve::start(&[("RAGDOWN_EMBEDDER", "minilm")]).await;
    let dirs = (
        first.docs.clone(),
        first.outside.clone(),
        first.data.clone(),
    );
    drop(first);
    let broken = Serve::spawn(
        dirs,
        &[
            ("RAGDOWN_EMBEDDER", "minilm"),
            ("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so"),
            ("RAGDOWN_ORT_URL", "http://127.0.0.1:9"),
        ],
    );
    broken.wait_synced(5).await;
    let (_, status) = broken.call(Method::GET, "/api/status", None, false).await;
    let search = status["search"].as_str().unwrap_or_default();
    assert!(search.starts_with("keyword (BM25) only"), "{status}");
    assert_eq!(status["embedder"], "all-minilm-l6-v2-q8", "{status}");
    let (code, hits) = broken.get("/api/search?folder=work&q=backup").await;
    assert_eq!(code, StatusCode::OK, "{hits}");
    assert_eq!(hits["hits"][0]["path"], "work/backups.md", "{hits}");
}

/// Two writers of one document at once, many rounds, over real HTTP: through `POST /api/doc`
/// with the same `base_hash`, through MCP `ragdown_edit` with the same `base_hash`, and through
/// MCP without one. A change is never lost silently: either both survive, or the loser gets the
/// conflict and the file holds the winner's change.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_of_one_document_never_lose_a_change() {
    let serve = Serve::start(&[]).await;
    let file = serve.docs.path().join("work/race.md");
    // The version a client read: the SHA-256 of the bytes on disk (what GET /api/doc says).
    let hash_of = |_: &Serve| {
        let bytes = std::fs::read(&file).unwrap();
        async move { ragdown_server::format::full_hash(&bytes) }
    };
    let fresh = "# Race\n\nline A: zero\n\nline B: zero\n";
    std::fs::write(&file, fresh).unwrap();

    // Uploads with the same base_hash: at most one lands.
    for round in 0..20 {
        std::fs::write(&file, fresh).unwrap();
        let base = hash_of(&serve).await;
        let upload = |text: String| {
            serve.call(
                Method::POST,
                "/api/doc",
                Some(json!({"path": "work/race.md", "text": text, "base_hash": base})),
                true,
            )
        };
        let (a, b) = tokio::join!(
            upload(format!("# Race\n\nupload one {round}\n")),
            upload(format!("# Race\n\nupload two {round}\n"))
        );
        let on_disk = std::fs::read_to_string(&file).unwrap();
        let won = [&a, &b].iter().filter(|r| r.0 == StatusCode::OK).count();
        assert_eq!(
            won, 1,
            "round {round}: exactly one upload lands: {a:?} {b:?}"
        );
        let lost = if a.0 == StatusCode::OK { &b } else { &a };
        assert_eq!(lost.0, StatusCode::CONFLICT, "round {round}: {lost:?}");
        assert_eq!(lost.1["code"], "changed", "round {round}: {lost:?}");
        let which = if a.0 == StatusCode::OK { "one" } else { "two" };
        assert!(
            on_disk.contains(&format!("upload {which} {round}")),
            "round {round}: the winner's text is on disk: {on_disk}"
        );
    }

    let client = serve.mcp("/mcp/work").await;
    let edit = |old: &'static str, new: String, base: Option<String>| {
        let mut args = json!({
            "path": "race.md",
            "edits": [{"old_text": old, "new_text": new}],
        });
        if let Some(b) = base {
            args["base_hash"] = json!(b);
        }
        tool(&client, "ragdown_edit", args)
    };
    for round in 0..20 {
        std::fs::write(&file, fresh).unwrap();
        // With a base_hash every other round, without one the rest.
        let base = if round % 2 == 0 {
            Some(hash_of(&serve).await)
        } else {
            None
        };
        let (a_line, b_line) = (format!("line A: {round}"), format!("line B: {round}"));
        let (a, b) = tokio::join!(
            edit("line A: zero", a_line.clone(), base.clone()),
            edit("line B: zero", b_line.clone(), base.clone())
        );
        let on_disk = std::fs::read_to_string(&file).unwrap();
        let has_a = on_disk.contains(&a_line);
        let has_b = on_disk.contains(&b_line);
        match (a.0, b.0) {
            (false, false) => assert!(has_a && has_b, "round {round}: both kept: {on_disk}"),
            (true, false) | (false, true) => {
                assert!(
                    base.is_some(),
                    "round {round}: without a hash both apply: {a:?} {b:?}"
                );
                let (loser, winner_kept) = if a.0 { (&a, has_b) } else { (&b, has_a) };
                assert!(
                    loser.1.contains("changed on disk"),
                    "round {round}: {loser:?}"
                );
                assert!(
                    winner_kept,
                    "round {round}: the winner's edit is on disk: {on_disk}"
                );
            }
            (true, true) => panic!("round {round}: both failed: {a:?} {b:?}"),
        }
        if base.is_none() {
            assert!(
                has_a && has_b,
                "round {round}: no hash, both edits kept: {on_disk}"
            );
        }
    }
    client.cancel().await.unwrap();
}

/// One request over a plain socket with the headers given (Host among them): (status, body).
fn request_with(base: &str, head: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let code = answer[9..12].parse().unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (code, body)
}

/// A web page on another site cannot write (nor read) through a server with no token, and a
/// rebound host name reaches neither /api nor /mcp; the server's own origin, addresses,
/// localhost and the names listed are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_pages_and_rebound_hosts_are_refused() {
    let s = Serve::start(&[
        ("SECURE_LOCAL_NET", "true"),
        ("RAGDOWN_TOKEN", ""),
        ("RAGDOWN_ALLOWED_HOSTS", "kb.example.test"),
        ("RAGDOWN_ALLOWED_ORIGINS", "http://ui.example.test:5173"),
    ])
    .await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let upload = r##"{"path": "work/evil.md", "text": "# Evil\n"}"##;
    // The cross-site form post of the report: text/plain from a foreign origin.
    let (code, body) = request_with(
        &s.base,
        &format!(
            "POST /api/doc HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nContent-Type: text/plain"
        ),
        upload,
    );
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("RAGDOWN_ALLOWED_ORIGINS"), "{body}");
    // The same without Origin (a non-browser client) still needs JSON.
    let (code, body) = request_with(
        &s.base,
        &format!("POST /api/doc HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain"),
        upload,
    );
    assert_eq!(code, 415, "{body}");
    for (method, path, payload) in [
        (
            "POST",
            "/api/move",
            r#"{"from": "work/backups.md", "to": "work/x.md"}"#,
        ),
        ("POST", "/api/folders", r#"{"name": "evil"}"#),
        ("PATCH", "/api/settings", r#"{"text_limit": 5}"#),
        ("DELETE", "/api/doc?path=work/backups.md", ""),
        ("GET", "/api/docs?folder=work", ""),
    ] {
        for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
            let (code, body) = request_with(
                &s.base,
                &format!(
                    "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\nContent-Type: application/json"
                ),
                payload,
            );
            assert_eq!(code, 403, "{method} {path} from {origin}: {body}");
        }
    }
    assert!(!s.docs.path().join("work/evil.md").exists());
    assert!(!s.docs.path().join("evil").exists());
    assert!(s.docs.path().join("work/backups.md").exists());
    // DNS rebinding: a foreign name for this address, on /mcp and /api alike.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for (path, payload) in [("/mcp/work", init), ("/api/folders", "")] {
        let method = if payload.is_empty() { "GET" } else { "POST" };
        let (code, body) = request_with(
            &s.base,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: evil.example:80\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            ),
            payload,
        );
        assert_eq!(code, 403, "{path}: {body}");
        assert!(body.contains("RAGDOWN_ALLOWED_HOSTS"), "{body}");
    }
    // What is allowed: the own origin, localhost, a listed name, a listed origin.
    for (host, origin) in [
        (addr.clone(), Some(format!("http://{addr}"))),
        (
            format!("localhost:{}", addr.rsplit(':').next().unwrap()),
            None,
        ),
        ("kb.example.test".to_string(), None),
        (
            addr.clone(),
            Some("http://ui.example.test:5173".to_string()),
        ),
    ] {
        let origin = origin
            .map(|o| format!("\r\nOrigin: {o}"))
            .unwrap_or_default();
        let (code, body) = request_with(
            &s.base,
            &format!(
                "POST /mcp/work HTTP/1.1\r\nHost: {host}{origin}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            ),
            init,
        );
        assert_eq!(code, 200, "{host} {origin}: {body}");
    }
    let (code, body) = request_with(
        &s.base,
        &format!(
            "POST /api/folders HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nContent-Type: application/json; charset=utf-8"
        ),
        r#"{"name": "mine"}"#,
    );
    assert_eq!(code, 201, "the server's own page may write: {body}");
    // A body that is not JSON-RPC is a JSON-RPC error, not a bare 415.
    for (payload, want) in [("{not json", -32700), (r#"{"hello": 1}"#, -32600)] {
        let (code, body) = request_with(
            &s.base,
            &format!(
                "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            ),
            payload,
        );
        assert_eq!(code, 400, "{payload}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], want, "{body}");
        assert_eq!(v["jsonrpc"], "2.0");
    }
    // Params that do not fit a method ragdown serves: -32602, not "method not found"; a
    // method it does not serve is still -32601.
    for (payload, want) in [
        (r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#, -32602),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}"#,
            -32601,
        ),
    ] {
        let (_, body) = request_with(
            &s.base,
            &format!(
                "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
            ),
            payload,
        );
        let json = body
            .lines()
            .find_map(|l| {
                l.strip_prefix("data:")
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
            })
            .unwrap_or(&body);
        let v: Value = serde_json::from_str(json).unwrap_or_else(|_| panic!("{payload}: {body}"));
        assert_eq!(v["error"]["code"], want, "{payload}: {body}");
        assert_eq!(v["id"], 7, "{body}");
    }
}

/// Loopback only unless RAGDOWN_BIND says otherwise, and the log says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_binds_loopback_by_default_and_says_so() {
    let s = Serve::start(&[]).await;
    let log = s.log.lock().unwrap().clone();
    assert!(log.contains("listening on http://127.0.0.1:"), "{log}");
    assert!(log.contains("RAGDOWN_BIND=0.0.0.0"), "{log}");
    let all = Serve::start(&[("RAGDOWN_BIND", "0.0.0.0")]).await;
    let log = all.log.lock().unwrap().clone();
    assert!(log.contains("listening on http://0.0.0.0:"), "{log}");
    assert!(log.contains("other machines can connect"), "{log}");
}

/// Idle connections past the cap cannot lock out a new client, the process never runs out of
/// descriptors, and a body that trickles in is cut off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_floods_and_trickling_bodies_do_not_starve_the_server() {
    let s = Serve::start(&[
        ("RAGDOWN_MAX_CONNECTIONS", "40"),
        ("HTTP_BODY_TIMEOUT_MS", "700"),
    ])
    .await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut idle = Vec::new();
    for _ in 0..150 {
        idle.push(std::net::TcpStream::connect(&addr).unwrap());
    }
    let started = Instant::now();
    let base = s.base.clone();
    let (code, body) = tokio::task::spawn_blocking(move || {
        request_with(&base, "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1", "")
    })
    .await
    .unwrap();
    assert_eq!(code, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "status answered in {:?} behind 150 idle connections",
        started.elapsed()
    );
    // The oldest idle ones were closed by the server to make room.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let closed = idle
        .iter_mut()
        .filter(|c| {
            let c: &std::net::TcpStream = c;
            use std::io::Read;
            c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            // Closed, or answered (a 503 for one that arrived while others were still
            // closing) and closed: either way it no longer holds a place.
            match (&mut { c }).read(&mut [0u8; 16]) {
                Ok(read) => read <= 16,
                Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            }
        })
        .count();
    assert!(closed >= 100, "{closed} of 150 idle connections closed");
    drop(idle);

    // A body announced as 100 bytes that sends 10 and stalls.
    use std::io::{Read, Write};
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        slow,
        "POST /api/folders HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\": "
    )
    .unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("HTTP_BODY_TIMEOUT_MS"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let log = s.log.lock().unwrap().clone();
    assert!(!log.contains("Too many open files"), "{log}");
}

/// Under a small descriptor limit (`ulimit -n 256`, hard too, so it cannot be raised), 600 idle
/// connections neither starve a new client nor run the server out of descriptors: the
/// connection cap follows from the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_follows_the_descriptor_limit() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    write(docs.path(), "work/a.md", "# A\n\nalpha\n");
    let (mut child, base, log) = harness::spawn_serve_limited(docs.path(), data.path(), 256);
    let addr = base.trim_start_matches("http://").to_string();
    let result = tokio::task::spawn_blocking(move || {
        let idle: Vec<_> = (0..600)
            .map(|_| std::net::TcpStream::connect(&addr).unwrap())
            .collect();
        let started = Instant::now();
        let answer = request_with(&base, "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1", "");
        drop(idle);
        (answer, started.elapsed())
    })
    .await
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let ((code, body), took) = result;
    assert_eq!(code, 200, "{body}");
    assert!(took < Duration::from_secs(5), "status took {took:?}");
    let log = log.lock().unwrap().clone();
    assert!(!log.contains("Too many open files"), "{log}");
}

/// An MCP client that connects the moment the port answers, while the model still loads (a
/// slow one here), is answered once it has loaded instead of refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_requests_wait_for_the_model_while_it_loads() {
    let docs = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fixture(docs.path(), outside.path());
    let url = harness::slow_embedding_service(Duration::from_millis(1500));
    let s = Serve::spawn(
        (
            Arc::new(docs),
            Arc::new(outside),
            Arc::new(tempfile::tempdir().unwrap()),
        ),
        &[
            ("RAGDOWN_EMBEDDER", "openai:slow"),
            ("RAGDOWN_EMBEDDING_URL", &url),
        ],
    );
    let (code, status) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(status["ready"], false, "still loading: {status}");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (code, body) = s.raw_tcp("POST", "/mcp/work", init);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("ragdown-work"), "{body}");
}

/// `RAGDOWN_DOCS_DIR` is the folder for `stdio` but the directory of folders for `serve`: the
/// start-up log names the Markdown left at its top, and one request makes a folder of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loose_files_are_named_at_start_up_and_become_a_folder_in_one_step() {
    let s = Serve::start(&[]).await;
    let log = s.log.lock().unwrap().clone();
    assert!(
        log.contains("1 Markdown file at the top of")
            && log.contains("is not in a folder, so not indexed: loose.md.")
            && log.contains("RAGDOWN_DOCS_DIR is the directory of folders"),
        "{log}"
    );
    write(s.docs.path(), "loose-b.md", "# B\n\nSee [[loose]].\n");
    // Nothing moves when a file would be replaced.
    write(s.docs.path(), "home/loose.md", "# Home's own\n");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/loose",
            Some(json!({"folder": "home"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("home/loose.md exists already"),
        "{body}"
    );
    assert!(s.docs.path().join("loose.md").is_file() && s.docs.path().join("loose-b.md").is_file());
    let (code, _) = s
        .call(Method::POST, "/api/loose", Some(json!({})), true)
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/loose",
            Some(json!({"folder": "inbox"})),
            false,
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);

    let (code, body) = s
        .call(
            Method::POST,
            "/api/loose",
            Some(json!({"folder": "inbox"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert_eq!(body["moved"], json!(["inbox/loose-b.md", "inbox/loose.md"]));
    assert_eq!(body["folder"]["name"], "inbox");
    let (_, list) = s.get("/api/folders").await;
    assert_eq!(list["loose_files"], json!([]));
    // Indexed, and the link between them still resolves.
    let (code, backlinks) = s.get("/api/backlinks?path=inbox/loose.md").await;
    assert_eq!(code, StatusCode::OK, "{backlinks}");
    assert!(
        backlinks.to_string().contains("inbox/loose-b.md"),
        "{backlinks}"
    );
    let (code, _) = s
        .call(
            Method::POST,
            "/api/loose",
            Some(json!({"folder": "inbox"})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

/// The hook's main gate (`RAGDOWN_HOOK_MIN_EVIDENCE`, which the README and `ragdown eval` tell
/// people to tune) is set where every other hook setting is: the server's settings and a
/// folder's, over HTTP, and it takes effect at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_gate_is_set_where_settings_are_set() {
    let s = Serve::start(&[("RAGDOWN_HOOK_MIN_EVIDENCE", "0.4")]).await;
    // No name written as code: one that few sections hold would pin its section past any gate.
    let prompt = json!({"prompt": "run the restore twice after the nightly snapshots"});
    let (_, status) = s.call(Method::GET, "/api/status", None, false).await;
    assert_eq!(status["settings"]["env"]["hook"]["min_evidence"], 0.4);

    let (code, out) = s
        .call(
            Method::PATCH,
            "/api/settings",
            Some(json!({"hook": {"min_evidence": 50}})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{out}");
    assert_eq!(out["settings"]["hook"]["min_evidence"], 50.0);
    assert_eq!(out["settings"]["saved"]["hook"]["min_evidence"], 50.0);
    let client = s.mcp("/mcp/work").await;
    let (_, text) = tool(&client, "ragdown_context", prompt.clone()).await;
    assert!(!text.contains("backups.md"), "gated out: {text}");

    let (code, out) = s
        .call(
            Method::PATCH,
            "/api/folders/work",
            Some(json!({"hook": {"min_evidence": 0}})),
            true,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{out}");
    assert_eq!(out["folder"]["hook"]["min_evidence"], 0.0);
    let (_, text) = tool(&client, "ragdown_context", prompt).await;
    assert!(text.contains("backups.md"), "the folder's own gate: {text}");
    client.cancel().await.unwrap();

    for bad in [json!({"min_evidence": -1}), json!({"min_evidence": "high"})] {
        let (code, body) = s
            .call(
                Method::PATCH,
                "/api/settings",
                Some(json!({ "hook": bad })),
                true,
            )
            .await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.to_string().contains("hook.min_evidence"), "{body}");
    }
}

/// A code name pins its section only where few sections hold it. The root endpoint searches
/// every folder at once, so it counts the sections of them all: `pg_restore`, held by one
/// section of `work` and by four of `team`, pins in `work` and at the root pins nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_name_is_rare_over_every_folder_the_root_searches() {
    let s = Serve::start(&[("RAGDOWN_ROOT_MCP", "true")]).await;
    write(s.docs.path(), "team/.ragdown.json", r#"{"mcp": true}"#);
    write(
        s.docs.path(),
        "team/restores.md",
        "# Restores\n\n## Monday\n\nMonday runs pg_restore.\n\n## Tuesday\n\nTuesday runs \
         pg_restore.\n\n## Wednesday\n\nWednesday runs pg_restore.\n\n## Thursday\n\n\
         Thursday runs pg_restore.\n",
    );
    s.wait_synced(6).await;
    // A cosine floor no section reaches: only a pinned section gets through.
    let prompt =
        json!({"prompt": "run pg_restore twice after the nightly snapshots", "min_score": 0.99});

    let work = s.mcp("/mcp/work").await;
    let (err, text) = tool(&work, "ragdown_context", prompt.clone()).await;
    assert!(!err && text.contains("backups.md"), "rare in work: {text}");
    work.cancel().await.unwrap();

    let root = s.mcp("/mcp").await;
    let (err, text) = tool(&root, "ragdown_context", prompt).await;
    assert!(!err, "{text}");
    assert!(
        text.is_empty(),
        "five sections of the root hold pg_restore, so it pins none: {text}"
    );
    root.cancel().await.unwrap();
}

/// What an OAuth-aware MCP client (the Inspector) meets: a 401 that names the bearer scheme
/// (RFC 6750) and OAuth discovery answered with JSON 404s, not the web app's page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_aware_clients_get_a_bearer_challenge_and_json_404s() {
    let s = Serve::start(&[]).await;
    for (method, path) in [(Method::POST, "/mcp/work"), (Method::GET, "/api/folders")] {
        let (code, headers, _) = s.raw(method, path, Some(json!({})), false).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{path}");
        let challenge = headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(challenge.starts_with("Bearer"), "{path}: {challenge:?}");
    }
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp/work",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        for auth in [false, true] {
            let (code, headers, body) = s.raw(Method::GET, path, None, auth).await;
            assert_eq!(code, StatusCode::NOT_FOUND, "{path}");
            assert!(
                headers["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with("application/json"),
                "{path}"
            );
            let body: Value = serde_json::from_slice(&body).unwrap();
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .contains("Authorization: Bearer"),
                "{body}"
            );
        }
    }
}

/// The four ways to search — the recall tool on a folder's endpoint, the root endpoint's
/// recall over every folder, the web UI's `/api/search` and `ragdown query` — are one path:
/// for the same folder and query they find the same sections with the same scores, and each
/// search is written to the query log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_search_path_finds_the_same_hits_and_is_logged() {
    let s = Serve::start(&[("RAGDOWN_ROOT_MCP", "true"), ("RAGDOWN_QUERY_LOG", "true")]).await;
    let query = "restore the nightly snapshots and vacuum";
    // (folder-relative path, first line, last line, fused score) of each hit, in order.
    let found = |hits: &Value, prefix: &str| -> Vec<(String, u64, u64, f64)> {
        hits.as_array()
            .unwrap_or_else(|| panic!("no hits: {hits}"))
            .iter()
            .map(|h| {
                let path = h["path"].as_str().unwrap();
                (
                    path.strip_prefix(prefix).unwrap_or(path).to_string(),
                    h["line_start"].as_u64().unwrap(),
                    h["line_end"].as_u64().unwrap(),
                    h["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let recall = json!({"query": query, "format": "json", "top_k": 5});
    let (err, text) = tool(&s.mcp("/mcp/work").await, "ragdown_recall", recall.clone()).await;
    assert!(!err, "{text}");
    let folder_endpoint = found(&serde_json::from_str::<Value>(&text).unwrap()["hits"], "");
    assert!(folder_endpoint.len() >= 2, "{text}");

    let (err, text) = tool(&s.mcp("/mcp").await, "ragdown_recall", recall).await;
    assert!(!err, "{text}");
    let root = serde_json::from_str::<Value>(&text).unwrap();
    assert!(
        root["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["folder"] == "work"),
        "only folder work has MCP on: {root}"
    );
    assert_eq!(found(&root["hits"], ""), folder_endpoint, "root /mcp");

    let (code, web) = s
        .get("/api/search?folder=work&top_k=5&q=restore%20the%20nightly%20snapshots%20and%20vacuum")
        .await;
    assert_eq!(code, StatusCode::OK, "{web}");
    assert_eq!(found(&web["hits"], "work/"), folder_endpoint, "/api/search");

    // The CLI reads the same index as a reader of the running server.
    let folder_data = s.data.path().join("folders/work");
    let cli = harness::json_output(
        harness::ragdown_in(&folder_data)
            .env("RAGDOWN_QUERY_LOG", "true")
            .args(["query", "--json", "--top-k", "5"])
            .arg(s.docs.path().join("work"))
            .arg(query),
    );
    assert_eq!(found(&cli["hits"], ""), folder_endpoint, "ragdown query");

    // The server logged its three (the root's recall as the folder's), the CLI its one.
    let (_, usage) = s.get("/api/query-log").await;
    assert_eq!(usage["searches"]["recall"], 2, "{usage}");
    assert_eq!(usage["searches"]["web"], 1, "{usage}");
    let cli_log = std::fs::read_to_string(folder_data.join("query-log.jsonl")).unwrap();
    let line: Value = serde_json::from_str(cli_log.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&line["kind"], &line["query"]),
        (&json!("recall"), &json!(query))
    );
    assert_eq!(
        line["hits"].as_array().unwrap().len(),
        folder_endpoint.len()
    );
}
