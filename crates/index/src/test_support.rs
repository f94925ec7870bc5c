//! Helpers for tests of crates that run PostgreSQL-backed indexes (feature `test-support`,
//! and this crate's own tests): a door to the test cluster that can be shut, so a test can
//! take the database away from one process and give it back. Never part of a release build.

use std::sync::{Arc, Mutex};

/// A TCP door to the test cluster's unix socket that can be shut: every connection through it
/// is cut and new ones are refused until it opens again — the database going away and back.
pub struct CuttableDoor {
    port: u16,
    /// The cluster's URL without its `host=` (the user, the database name).
    rest: String,
    open: Arc<std::sync::atomic::AtomicBool>,
    streams: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl CuttableDoor {
    /// A door to the cluster whose unix-socket URL (`host=<dir> …`) is `url`.
    pub fn to(url: &str) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = url
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("host="))
            .expect("the test URL names its socket directory")
            .to_string();
        let socket_port = url
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("port="))
            .unwrap_or("5432")
            .to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let streams: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let (is_open, kept) = (open.clone(), streams.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if !is_open.load(Ordering::SeqCst) {
                    continue;
                }
                let server = std::os::unix::net::UnixStream::connect(format!(
                    "{dir}/.s.PGSQL.{socket_port}"
                ))
                .unwrap();
                kept.lock().unwrap().push(client.try_clone().unwrap());
                let (mut c1, mut s1) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c1, &mut s1);
                    // The client side is gone: end the database session too.
                    let _ = s1.shutdown(std::net::Shutdown::Both);
                });
                let (mut c2, mut s2) = (client, server);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s2, &mut c2);
                    let _ = c2.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        let rest = url
            .split_whitespace()
            .filter(|kv| !kv.starts_with("host=") && !kv.starts_with("port="))
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            port,
            rest,
            open,
            streams,
        }
    }

    /// The URL that reaches the cluster through the door.
    pub fn url(&self) -> String {
        format!("host=127.0.0.1 port={} {}", self.port, self.rest)
    }

    /// Shuts the door (every connection through it cut, new ones refused) or opens it.
    pub fn set_open(&self, open: bool) {
        self.open.store(open, std::sync::atomic::Ordering::SeqCst);
        if !open {
            for s in self.streams.lock().unwrap().drain(..) {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}
