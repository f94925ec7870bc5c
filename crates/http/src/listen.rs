//! The accept loop: connections under a cap (the oldest asked to close past it), idle
//! keep-alive timeouts, and a graceful shutdown on SIGTERM/SIGINT.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{AppState, router};

/// How long a new connection may take to send its first request's headers.
pub const FIRST_HEADERS: Duration = Duration::from_secs(10);

/// Serves until `state.shutdown` is cancelled or SIGTERM/SIGINT arrives; in-flight requests
/// finish first (for up to 30 s), then every folder is closed (its index consistent: writes are
/// transactional). An idle keep-alive connection is closed after `HTTP_KEEP_ALIVE_TIMEOUT_MS`
/// without a new request (hyper's header-read timeout starts when the connection goes idle).
///
/// At most `max_connections` stay open: a new connection past the cap closes the oldest one
/// that is not answering a request — idle, or still sending its headers — at once, and only
/// when every open connection is answering asks the oldest to close after its answer. So a
/// flood of idle or slow-header connections cannot lock out a client that sends a whole
/// request, nor run the process out of descriptors; a few connections past the cap while all
/// are answering get a 503. A connection must also send its first request's headers within
/// [`FIRST_HEADERS`]: one that opens and trickles is closed long before the keep-alive timeout.
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
                let Some((id, close, state_of)) = admitted else {
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
                let service = connections::Tracked {
                    app: app.clone(),
                    state: state_of.clone(),
                };
                let connection = http1.serve_connection(TokioIo::new(stream), service);
                let open = open.clone();
                tracker.spawn(async move {
                    let mut connection = std::pin::pin!(connection);
                    let first_headers = async {
                        tokio::time::sleep(FIRST_HEADERS).await;
                        if state_of.requests() > 0 {
                            std::future::pending::<()>().await;
                        }
                    };
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        // Never sent a whole request: dropped.
                        _ = first_headers => {}
                        _ = close.cancelled() => {
                            // Answering: closes after the answer. Idle or still sending its
                            // headers: dropped now.
                            if state_of.answering() {
                                connection.as_mut().graceful_shutdown();
                                let _ = connection.await;
                            }
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use tokio::io::AsyncWriteExt;
    use tokio_util::sync::CancellationToken;

    /// What one connection is doing: requests begun and answered so far.
    #[derive(Default)]
    pub struct ConnectionState {
        begun: AtomicU64,
        answered: AtomicU64,
    }

    impl ConnectionState {
        /// Requests whose headers arrived whole.
        pub fn requests(&self) -> u64 {
            self.begun.load(Ordering::Acquire)
        }
        /// Whether a request is being answered now (not idle, not still sending headers).
        pub fn answering(&self) -> bool {
            self.begun.load(Ordering::Acquire) > self.answered.load(Ordering::Acquire)
        }
    }

    /// The router as one connection's service, keeping its [`ConnectionState`].
    #[derive(Clone)]
    pub struct Tracked {
        pub app: axum::Router,
        pub state: Arc<ConnectionState>,
    }

    impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Tracked {
        type Response = axum::response::Response;
        type Error = std::convert::Infallible;
        type Future = std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
        >;

        fn call(&self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
            let state = self.state.clone();
            state.begun.fetch_add(1, Ordering::AcqRel);
            let mut app = self.app.clone();
            Box::pin(async move {
                let answer =
                    tower_service::Service::call(&mut app, request.map(axum::body::Body::new))
                        .await;
                state.answered.fetch_add(1, Ordering::AcqRel);
                answer
            })
        }
    }

    /// One open connection: its id, its close signal and its state.
    type Entry = (u64, CancellationToken, Arc<ConnectionState>);

    #[derive(Default)]
    pub struct Open {
        next_id: u64,
        /// Not yet asked to close, oldest first.
        serving: VecDeque<Entry>,
        /// Asked to close, still finishing an answer.
        closing: usize,
    }

    impl Open {
        /// Admits a new connection (its id, close signal and state). When `cap` are open it
        /// first closes the oldest connection that is not answering (it is dropped at once),
        /// or, when all are, asks the oldest to close after its answer; `None` when those
        /// asked are still answering past `overflow`.
        pub fn admit(
            &mut self,
            cap: usize,
            overflow: usize,
            all: &CancellationToken,
        ) -> Option<Entry> {
            if self.serving.len() + self.closing >= cap {
                // Closing connections still hold their descriptors until their tasks end.
                if self.closing >= overflow {
                    return None;
                }
                // The oldest that is not answering (dropped at once), else the oldest (closed
                // after its answer).
                let at = self
                    .serving
                    .iter()
                    .position(|(_, _, s)| !s.answering())
                    .unwrap_or(0);
                if let Some((_, token, _)) = self.serving.remove(at) {
                    token.cancel();
                    self.closing += 1;
                }
            }
            self.next_id += 1;
            let close = all.child_token();
            let state = Arc::new(ConnectionState::default());
            self.serving
                .push_back((self.next_id, close.clone(), state.clone()));
            Some((self.next_id, close, state))
        }

        pub fn closed(&mut self, id: u64) {
            match self.serving.iter().position(|(i, _, _)| *i == id) {
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

        fn answering(state: &ConnectionState) {
            state.begun.fetch_add(1, Ordering::AcqRel);
        }

        #[test]
        fn past_the_cap_a_quiet_connection_goes_first() {
            let all = CancellationToken::new();
            let mut open = Open::default();
            let first = open.admit(3, 1, &all).unwrap();
            let second = open.admit(3, 1, &all).unwrap();
            let third = open.admit(3, 1, &all).unwrap();
            // The first answers a request; the second is still sending its headers.
            answering(&first.2);
            let fourth = open.admit(3, 1, &all).unwrap();
            assert!(!first.1.is_cancelled(), "an answering connection is kept");
            assert!(second.1.is_cancelled(), "the oldest quiet one is closed");
            assert!(!third.1.is_cancelled() && !fourth.1.is_cancelled());
            open.closed(second.0);
            // Everyone answers: the oldest is asked to close after its answer, and one past
            // the cap is all the overflow allows.
            answering(&third.2);
            answering(&fourth.2);
            let fifth = open.admit(3, 1, &all).unwrap();
            assert!(first.1.is_cancelled());
            answering(&fifth.2);
            assert!(open.admit(3, 1, &all).is_none());
            open.closed(first.0);
            let sixth = open.admit(3, 1, &all).unwrap();
            assert!(third.1.is_cancelled());
            for id in [third.0, fourth.0, fifth.0, sixth.0] {
                open.closed(id);
            }
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
