//! The accept loop: connections under a cap (the oldest asked to close past it), idle
//! keep-alive timeouts, and a graceful shutdown on SIGTERM/SIGINT.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{AppState, router};

/// Serves until `state.shutdown` is cancelled or SIGTERM/SIGINT arrives; in-flight requests
/// finish first (for up to 30 s), then every folder is closed (its index consistent: writes are
/// transactional). An idle keep-alive connection is closed after `HTTP_KEEP_ALIVE_TIMEOUT_MS`
/// without a new request (hyper's header-read timeout starts when the connection goes idle).
///
/// At most `max_connections` stay open: a new connection past the cap asks the oldest open one
/// to close (at once when it is idle, after its answer when a request is running), so a flood
/// of idle connections cannot lock out new clients or run the process out of descriptors; a
/// few connections past the cap in which requests are still running are answered 503 and
/// closed.
pub async fn serve(state: AppState, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let shutdown = state.shutdown.clone();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("[ragdown] shutting down: finishing requests in flight");
            shutdown.cancel();
        }
    });
    let app = router(state.clone());
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.keep_alive(true);
    if state.config.keep_alive_ms > 0 {
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_millis(state.config.keep_alive_ms));
    }
    let cap = state.config.max_connections.max(1);
    // Connections asked to close but not yet closed: past this many, wait for them, then
    // refuse. (`max_connections` leaves room for these below the descriptor limit.)
    let overflow = cap / 8 + 4;
    let mut accept_warned: Option<std::time::Instant> = None;
    let open = Arc::new(Mutex::new(connections::Open::default()));
    let tracker = tokio_util::task::TaskTracker::new();
    // Every connection's close signal is a child of this one: shutdown closes them all.
    let closing_all = CancellationToken::new();
    let mut warned = false;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait rather than spin, and
                        // say so once a minute, not once per attempt.
                        if accept_warned.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                            tracing::warn!("[http] accepting a connection: {e}");
                            accept_warned = Some(std::time::Instant::now());
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let mut admitted = None;
                // Connections asked to close need a moment to do so under a burst.
                for _ in 0..20 {
                    admitted = match open.lock() {
                        Ok(mut o) => o.admit(cap, overflow, &closing_all),
                        Err(_) => None,
                    };
                    if admitted.is_some() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let Some((id, close)) = admitted else {
                    if !warned {
                        tracing::warn!(
                            "[http] {cap} connections are open (RAGDOWN_MAX_CONNECTIONS): refusing new ones until some close"
                        );
                        warned = true;
                    }
                    tracker.spawn(connections::refuse(stream));
                    continue;
                };
                warned = false;
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let connection = http1.serve_connection(TokioIo::new(stream), service);
                let open = open.clone();
                tracker.spawn(async move {
                    let mut connection = std::pin::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = close.cancelled() => {
                            // Idle: closes now; answering: closes after the answer.
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                    if let Ok(mut o) = open.lock() {
                        o.closed(id);
                    }
                });
            }
            _ = shutdown.cancelled() => break,
        }
    }
    drop(listener);
    closing_all.cancel();
    tracker.close();
    if tokio::time::timeout(Duration::from_secs(30), tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("[ragdown] requests still running after 30 s: closing anyway");
    }
    let closing = state.clone();
    let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    Ok(())
}

mod connections {
    //! The open connections, oldest first, each with the signal that asks it to close.

    use std::collections::VecDeque;

    use tokio::io::AsyncWriteExt;
    use tokio_util::sync::CancellationToken;

    #[derive(Default)]
    pub struct Open {
        next_id: u64,
        /// Not yet asked to close, oldest first.
        serving: VecDeque<(u64, CancellationToken)>,
        /// Asked to close, still finishing an answer.
        closing: usize,
    }

    impl Open {
        /// Admits a new connection (its id and close signal), first asking the oldest to close
        /// when `cap` are open; `None` when even those asked are still busy past `overflow`.
        pub fn admit(
            &mut self,
            cap: usize,
            overflow: usize,
            all: &CancellationToken,
        ) -> Option<(u64, CancellationToken)> {
            if self.serving.len() + self.closing >= cap {
                if self.closing >= overflow {
                    return None;
                }
                if let Some((_, oldest)) = self.serving.pop_front() {
                    oldest.cancel();
                    self.closing += 1;
                }
            }
            self.next_id += 1;
            let close = all.child_token();
            self.serving.push_back((self.next_id, close.clone()));
            Some((self.next_id, close))
        }

        pub fn closed(&mut self, id: u64) {
            match self.serving.iter().position(|(i, _)| *i == id) {
                Some(at) => {
                    self.serving.remove(at);
                }
                None => self.closing = self.closing.saturating_sub(1),
            }
        }
    }

    /// Answers 503 on a connection that cannot be served, and closes it.
    pub async fn refuse(mut stream: tokio::net::TcpStream) {
        let body = r#"{"error":"too many connections are open: try again in a moment"}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), async {
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        })
        .await;
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_oldest_is_asked_to_close_past_the_cap() {
            let all = CancellationToken::new();
            let mut open = Open::default();
            let first = open.admit(2, 1, &all).unwrap();
            let second = open.admit(2, 1, &all).unwrap();
            assert!(!first.1.is_cancelled());
            let third = open.admit(2, 1, &all).unwrap();
            assert!(first.1.is_cancelled(), "the oldest is asked to close");
            assert!(!second.1.is_cancelled() && !third.1.is_cancelled());
            // The first is still answering: one past the cap is all the overflow allows.
            assert!(open.admit(2, 1, &all).is_none());
            open.closed(first.0);
            let fourth = open.admit(2, 1, &all).unwrap();
            assert!(second.1.is_cancelled());
            open.closed(second.0);
            open.closed(third.0);
            open.closed(fourth.0);
            assert_eq!(open.serving.len() + open.closing, 0);
            all.cancel();
            assert!(open.admit(2, 1, &all).unwrap().1.is_cancelled());
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
