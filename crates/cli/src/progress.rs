//! Progress bars on stderr (indicatif): model downloads, and a sync followed by polling the
//! index's status. Hidden automatically when stderr is not a terminal.

use std::sync::atomic::Ordering;
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

/// Runs a sync while drawing files done / total.
pub fn sync_with_bar(index: &Index) -> ragdown_index::Result<SyncReport> {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("indexing {bar:30} {pos}/{len} files {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let poller = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let status = index.status();
                bar.set_length(status.files_total.load(Ordering::Relaxed) as u64);
                bar.set_position(status.files_done.load(Ordering::Relaxed) as u64);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let result = index.sync();
        done.store(true, Ordering::Relaxed);
        let _ = poller.join();
        bar.finish_and_clear();
        result
    })
}
