//! Progress bars on stderr (indicatif): model downloads, and a sync followed by polling the
//! index's status. Hidden automatically when stderr is not a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use ragdown_index::{Index, SyncReport};

/// Download progress for `ragdown_embed::download`.
pub struct DownloadBar(ProgressBar);

impl DownloadBar {
    pub fn new() -> Self {
        Self(ProgressBar::hidden())
    }
}

impl ragdown_embed::download::Progress for DownloadBar {
    fn start(&self, what: &str, total: Option<u64>) {
        self.0
            .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        self.0.set_length(total.unwrap_or(0));
        self.0.set_position(0);
        self.0.set_style(
            ProgressStyle::with_template("downloading {msg} {bar:30} {bytes}/{total_bytes} {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        self.0.set_message(what.to_string());
    }
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// How often a sync's progress is printed as a plain line when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Runs a sync while showing its progress on stderr: a bar of the share done (by the bytes of
/// the files to index, counted before any is read and moving as a large file's sections are
/// embedded) with files read and sections indexed beside it on a terminal; otherwise, for a
/// sync that lasts, a line every few seconds. A sync with nothing to do shows nothing.
pub fn sync_with_bar(index: &Index) -> ragdown_index::Result<SyncReport> {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = if terminal {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("indexing {bar:30} {percent}% {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // The poller waits on this channel between looks, so the end of a sync (often a few
    // milliseconds) wakes it at once instead of after its next tick.
    let (finished, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let poller = scope.spawn(move || {
            let started = std::time::Instant::now();
            let mut last_line = started;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                wait.recv_timeout(Duration::from_millis(100))
            {
                if let Some(p) = index.sync_progress() {
                    bar.set_length(p.bytes_total);
                    bar.set_position(p.bytes_done);
                    bar.set_message(format!(
                        "{} of {} files read, {} sections indexed",
                        p.files_done, p.files_total, p.sections_done
                    ));
                    if !terminal && last_line.elapsed() >= LINE_EVERY {
                        eprintln!(
                            "ragdown: {} ({} s)",
                            p.describe(),
                            started.elapsed().as_secs()
                        );
                        last_line = std::time::Instant::now();
                    }
                }
            }
            bar
        });
        let result = index.sync();
        drop(finished);
        if let Ok(bar) = poller.join() {
            bar.finish_and_clear();
        }
        result
    })
}
