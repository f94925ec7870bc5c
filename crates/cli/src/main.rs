//! The `ragdown` binary: command-line parsing, logging to stderr, and the subcommands. Turns
//! flags and variables into [`settings::Settings`] once, then calls the library crates; holds
//! no retrieval or storage logic of its own.

mod bench;
mod bench_pgvector;
mod bench_system;
mod bench_vectors;
mod commands;
mod eval;
mod local_rag;
mod progress;
mod settings;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ragdown",
    version,
    about = "A local knowledge base of Markdown for AI agents and people"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Index (or re-sync) a directory of Markdown.
    Index {
        /// The folder of documents.
        dir: PathBuf,
    },
    /// Search a directory's index (synced first, so it works on a fresh directory).
    Query {
        /// The folder of documents.
        dir: PathBuf,
        /// What to search for, in words or with identifiers.
        question: String,
        /// How many hits to print.
        #[arg(long, default_value_t = 8)]
        top_k: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Only documents with this tag (nested tags match).
        #[arg(long)]
        tag: Option<String>,
        /// Only documents under this folder.
        #[arg(long)]
        path_prefix: Option<String>,
    },
    /// Move a docs dir's index from its data dir into the PostgreSQL database
    /// RAGDOWN_DATABASE_URL names, without embedding anything again.
    Migrate {
        /// The folder of documents whose index moves.
        dir: PathBuf,
        /// Where to: `postgres` (the only other store).
        #[arg(long, value_parser = ["postgres"])]
        to: String,
    },
    /// What an index holds.
    Status {
        /// The folder of documents.
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Retrieval quality and speed on a corpus with known answers.
    Bench(bench::BenchArgs),
    /// Whole-process speed and memory: first index, re-syncs, CLI query, MCP server start-up,
    /// warm search and RSS, and the exact scan over a million vectors.
    BenchSystem(bench_system::SystemArgs),
    /// How well search and the hook answer your own questions (see the README for the format).
    Eval(eval::EvalArgs),
    /// Download the model RAGDOWN_EMBEDDER names and ONNX Runtime now (when missing) and check
    /// that they load and embed: for container images and machines that will be offline.
    Model,
    /// Serve RAGDOWN_DOCS_DIR as one folder over MCP on stdin/stdout.
    Stdio,
    /// Serve every folder of RAGDOWN_DOCS_DIR over HTTP: MCP endpoints and the /api.
    Serve,
    /// Bring the index of one or more docs dirs up to date.
    Sync {
        /// A docs dir. Default: RAGDOWN_DOCS_DIR, else the current dir.
        dir: Option<PathBuf>,
        /// Another docs dir (repeatable). Default: RAGDOWN_DOCS_DIR, else the current dir.
        #[arg(long = "docs-dir")]
        docs_dirs: Vec<PathBuf>,
        /// Print JSON (the shapes the MCP tools and `/api` use) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Index documents (files or directories) inside a docs dir and report what they hold.
    Ingest {
        /// Files or directories to index (inside a docs dir).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// A docs dir the paths lie in (repeatable). Default: RAGDOWN_DOCS_DIR, else the current dir.
        #[arg(long = "docs-dir")]
        docs_dirs: Vec<PathBuf>,
        /// Print JSON (the shapes the MCP tools and `/api` use) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The indexed documents of one or more docs dirs.
    List {
        /// A docs dir. Default: RAGDOWN_DOCS_DIR, else the current dir.
        dir: Option<PathBuf>,
        /// Another docs dir (repeatable). Default: RAGDOWN_DOCS_DIR, else the current dir.
        #[arg(long = "docs-dir")]
        docs_dirs: Vec<PathBuf>,
        /// Print JSON (the shapes the MCP tools and `/api` use) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A document's text (converted formats as indexed), whole or by lines.
    Read {
        /// The docs dir.
        dir: PathBuf,
        /// The document, relative to the docs dir.
        path: String,
        /// START:END (1-based, inclusive), e.g. 10:20.
        #[arg(long)]
        lines: Option<String>,
        /// Also this many whole sections before.
        #[arg(long, default_value_t = 0)]
        before: usize,
        /// Also this many whole sections after.
        #[arg(long, default_value_t = 0)]
        after: usize,
        /// Print JSON (the shapes the MCP tools and `/api` use) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete a document (the file) and drop it from the index.
    Delete {
        /// The docs dir.
        dir: PathBuf,
        /// The document, relative to the docs dir.
        path: String,
        /// Print JSON (the shapes the MCP tools and `/api` use) instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// A positional DIR and repeated `--docs-dir`s, as one list.
fn all_dirs(dir: Option<PathBuf>, mut more: Vec<PathBuf>) -> Vec<PathBuf> {
    if let Some(d) = dir {
        more.insert(0, d);
    }
    more
}

/// Makes glibc's allocator give freed memory back to the system. Its default trim threshold
/// grows with the largest block freed (up to 32 MB per heap), so the buffers of a start-up
/// sync and a model load stay resident for good; and each thread that allocates may get an
/// arena of its own. Measured on synth30-dev (`ragdown stdio`, 10 searches): steady RSS 225
/// -> 158 MB, peak 277 -> 266 MB, search p50 unchanged.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; it is called first thing in main,
    // before any other thread exists, and an unknown or refused value is simply ignored.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_freed_memory() {}

/// A command that prints and exits ends quietly when its reader goes away (`ragdown query …
/// | head -c 1`), as other Unix tools do, instead of panicking on the broken pipe: the
/// default action of SIGPIPE, which Rust's runtime ignores, is put back. Servers keep it
/// ignored, so a client that hangs up is an error on its connection, not the end of them.
#[cfg(unix)]
fn quiet_on_closed_pipe() {
    // SAFETY: `signal` with SIG_DFL only sets the disposition of SIGPIPE; it is called from
    // the main thread before the command runs, and needs nothing else to hold.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_pipe() {}

fn main() {
    return_freed_memory();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a redirected log stays plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RAGDOWN_LOG")
                // html5ever warns about every odd namespace in a converted page: noise.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,html5ever=error")),
        )
        .init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("ragdown: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let mut settings = settings::Settings::from_env()?;
    // Commands that answer and exit build a model needed for a few texts quickly; servers,
    // benchmarks and evaluations optimise it for the many they embed.
    settings.embedder.one_shot = !matches!(
        cli.command,
        Command::Stdio
            | Command::Serve
            | Command::Bench(_)
            | Command::BenchSystem(_)
            | Command::Eval(_)
    );
    if !matches!(cli.command, Command::Stdio | Command::Serve) {
        quiet_on_closed_pipe();
    }
    match cli.command {
        Command::Index { dir } => commands::index(&settings, &dir),
        Command::Query {
            dir,
            question,
            top_k,
            json,
            tag,
            path_prefix,
        } => commands::query(
            &settings,
            &dir,
            &question,
            commands::QueryFlags {
                top_k,
                json,
                tag,
                path_prefix,
            },
        ),
        Command::Status { dir, json } => commands::status(&settings, &dir, json),
        Command::Migrate { dir, to: _ } => commands::migrate(&settings, &dir),
        Command::Bench(args) => bench::run(&settings, &args),
        Command::BenchSystem(args) => bench_system::run(&args),
        Command::Eval(args) => eval::run(&settings, &args),
        Command::Model => commands::model(&settings),
        Command::Stdio => commands::stdio(&settings),
        Command::Serve => commands::serve(&settings),
        Command::Sync {
            dir,
            docs_dirs,
            json,
        } => local_rag::sync(&settings, &all_dirs(dir, docs_dirs), json),
        Command::Ingest {
            paths,
            docs_dirs,
            json,
        } => local_rag::ingest(&settings, &paths, &docs_dirs, json),
        Command::List {
            dir,
            docs_dirs,
            json,
        } => local_rag::list(&settings, &all_dirs(dir, docs_dirs), json),
        Command::Read {
            dir,
            path,
            lines,
            before,
            after,
            json,
        } => local_rag::read(
            &settings,
            &dir,
            &path,
            lines.as_deref(),
            (before, after),
            json,
        ),
        Command::Delete { dir, path, json } => local_rag::delete(&settings, &dir, &path, json),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag and argument a user can see says what it is for in `--help`.
    #[test]
    fn every_visible_argument_has_help() {
        fn undocumented(command: &clap::Command, path: &str, out: &mut Vec<String>) {
            let path = format!("{path} {}", command.get_name());
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !arg.is_hide_set() && !builtin && arg.get_help().is_none() {
                    out.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                undocumented(sub, &path, out);
            }
        }
        let mut missing = Vec::new();
        undocumented(&super::Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }
}
