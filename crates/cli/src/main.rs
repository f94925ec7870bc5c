//! The `ragdown` binary: command-line parsing, logging to stderr, and the subcommands. Turns
//! flags and variables into [`settings::Settings`] once, then calls the library crates; holds
//! no retrieval or storage logic of its own.

mod bench;
mod commands;
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
    Index { dir: PathBuf },
    /// Search a directory's index (synced first, so it works on a fresh directory).
    Query {
        dir: PathBuf,
        question: String,
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
    /// What an index holds.
    Status {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Retrieval quality and speed on a corpus with known answers.
    Bench(bench::BenchArgs),
    /// Serve RAGDOWN_DOCS_DIR as one folder over MCP on stdin/stdout.
    Stdio,
    /// Serve every folder of RAGDOWN_DOCS_DIR over HTTP: MCP endpoints and the /api.
    Serve,
}

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RAGDOWN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("ragdown: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let settings = settings::Settings::from_env()?;
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
        Command::Bench(args) => bench::run(&settings, &args),
        Command::Stdio => commands::stdio(&settings),
        Command::Serve => commands::serve(&settings),
    }
}
