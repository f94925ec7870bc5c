//! The source tree's shape, checked: no file of a crate imports, through any chain, a file
//! that imports it back (ARCHITECTURE.md: "no import circle between files inside a crate"),
//! and no production file in `server/` or `http/` grows past 800 lines. A circle makes a
//! newcomer read every file in it to change one; these checks name the files instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate: none has a circle between its files.
const WITHOUT_CIRCLES: &[&str] = &[
    "markdown", "embed", "index", "search", "server", "http", "convert", "render", "cli",
];
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `src` as its module path (`api::search`; the crate root is "").
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
            parts.clear();
        }
        out.insert(parts.join("::"), std::fs::read_to_string(path).unwrap());
    }
    out
}

/// The code of a file that ships: comments and the `#[cfg(test)] mod tests` at the end left out.
fn production_code(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Which module each name the crate root re-exports comes from (`pub use state::{AppState}`).
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let braces = regex::Regex::new(r"pub use ([a-z_]+)::\{([^}]*)\}").unwrap();
    let single = regex::Regex::new(r"pub use ([a-z_]+)::([A-Za-z_]+);").unwrap();
    for c in braces.captures_iter(root) {
        for name in c[2].split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.rsplit(" as ").next().unwrap_or(name);
            names.insert(name.to_string(), c[1].to_string());
        }
    }
    for c in single.captures_iter(root) {
        names.insert(c[2].to_string(), c[1].to_string());
    }
    names
}

/// Module → the modules of the same crate it names (`crate::x::…`, `use crate::{x, …}`,
/// `super::…`), each through the longest module path that exists.
fn imports(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let names = reexports(&production_code(&files[""]));
    let path = regex::Regex::new(r"crate::([A-Za-z_][A-Za-z0-9_:]*)").unwrap();
    let group = regex::Regex::new(r"(?s)use crate::\{([^}]*)\}").unwrap();
    let above = regex::Regex::new(r"super::").unwrap();
    let resolve = |parts: &[&str]| -> Option<String> {
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("::"))
            .find(|m| files.contains_key(m))
            .or_else(|| names.get(parts[0]).cloned())
    };
    let mut graph = BTreeMap::new();
    for (module, text) in files {
        let code = production_code(text);
        let mut to = BTreeSet::new();
        for c in path.captures_iter(&code) {
            let parts: Vec<&str> = c[1].split("::").filter(|p| !p.is_empty()).collect();
            to.extend(resolve(&parts));
        }
        for c in group.captures_iter(&code) {
            for item in c[1].split(',') {
                let parts: Vec<&str> = item.trim().split("::").collect();
                to.extend(resolve(&parts));
            }
        }
        if above.is_match(&code) {
            to.insert(module.rsplit_once("::").map_or("", |(p, _)| p).to_string());
        }
        // The crate root declares every module: its edges are not imports.
        to.remove("");
        to.remove(module);
        graph.insert(module.clone(), to);
    }
    graph.insert(String::new(), BTreeSet::new());
    graph
}

/// A circle through `start`, if any: the modules on it in order.
fn circle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, trail)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                return Some(trail.clone());
            }
            if seen.insert(next.clone()) {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let mut circles = Vec::new();
    for krate in WITHOUT_CIRCLES {
        let files = modules(&workspace().join("crates").join(krate).join("src"));
        assert!(files.len() > 1, "{krate} has no files?");
        let graph = imports(&files);
        for module in graph.keys() {
            if let Some(circle) = circle_through(&graph, module) {
                circles.push(format!("{krate}: {}", circle.join(" → ")));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// The check above finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let files: BTreeMap<String, String> = [
        ("", "pub use b::Thing;"),
        ("a", "use crate::Thing;"),
        ("b", "use crate::c::helper;"),
        ("c", "// use crate::a is only a comment\nuse crate::{a::X};"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    let graph = imports(&files);
    assert_eq!(circle_through(&graph, "a").unwrap(), ["a", "b", "c"]);
    let mut broken = files.clone();
    broken.insert("c".into(), "// use crate::a::X;".into());
    assert!(circle_through(&imports(&broken), "a").is_none());
}

#[test]
fn no_production_file_in_server_or_http_is_over_800_lines() {
    let mut long = Vec::new();
    for krate in ["server", "http"] {
        for (module, text) in modules(&workspace().join("crates").join(krate).join("src")) {
            let lines = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default()
                .lines()
                .count();
            if lines > 800 && !module.ends_with("tests") {
                long.push(format!("{krate}::{module}: {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "{long:?}");
}
