//! The hook's session memory ([`Sessions`]): which sections each session was already given,
//! so `ragdown_context` never repeats one. An LRU of sessions; nothing else.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;

/// Session id → chunks injected, and the sessions from least to most recently used.
type SessionTable = (HashMap<String, HashSet<i64>>, VecDeque<String>);

/// Per-session memory of the chunks already injected: an LRU of at most `max` sessions.
pub struct Sessions {
    max: usize,
    inner: Mutex<SessionTable>,
}

impl Sessions {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            inner: Mutex::new((HashMap::new(), VecDeque::new())),
        }
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut (HashMap<String, HashSet<i64>>, VecDeque<String>)) -> T,
    ) -> T {
        let mut guard = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    pub fn forget(&self, key: &str) {
        self.with(|(map, order)| {
            map.remove(key);
            order.retain(|k| k != key);
        });
    }

    /// The chunks this session has seen (touching it as most recently used).
    pub fn seen(&self, key: &str) -> HashSet<i64> {
        self.with(|(map, order)| {
            if map.contains_key(key) {
                order.retain(|k| k != key);
                order.push_back(key.to_string());
            }
            map.get(key).cloned().unwrap_or_default()
        })
    }

    pub fn remember(&self, key: &str, ids: impl IntoIterator<Item = i64>) {
        let max = self.max;
        self.with(|(map, order)| {
            if !map.contains_key(key) {
                while map.len() >= max {
                    match order.pop_front() {
                        Some(oldest) => {
                            map.remove(&oldest);
                        }
                        None => break,
                    }
                }
                order.push_back(key.to_string());
            }
            map.entry(key.to_string()).or_default().extend(ids);
        });
    }
}
