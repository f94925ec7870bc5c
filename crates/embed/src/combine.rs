//! Query embeddings asked for at the same time, run as one forward pass. On a small machine a
//! query's forward pass is the queue every search stands in: a hundred clients searching at
//! once each waited for the ninety-nine before them, one pass at a time. Here whoever finds no
//! pass running takes the oldest waiting queries (up to a batch, its own among them or not),
//! runs them together and hands each its vector; the rest wait. First come, first served: a
//! query is never overtaken by one that arrived later, so a busy client cannot starve others.
//! It knows nothing of models: the caller passes the function that embeds a batch.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex};

use crate::{EmbedError, Result};

pub struct Combiner {
    state: Mutex<State>,
    answered: Condvar,
    /// Most queries in one pass.
    batch: usize,
}

#[derive(Default)]
struct State {
    next_id: u64,
    waiting: VecDeque<(u64, String)>,
    answers: HashMap<u64, std::result::Result<Vec<f32>, String>>,
    running: bool,
}

impl Combiner {
    pub fn new(batch: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            answered: Condvar::new(),
            batch: batch.max(1),
        }
    }

    /// Embeds `text` together with whatever other queries are waiting, through `run` (which
    /// embeds a batch, in order).
    pub fn embed(
        &self,
        text: &str,
        run: impl Fn(&[&str]) -> Result<Vec<Vec<f32>>>,
    ) -> Result<Vec<f32>> {
        let poisoned = || EmbedError::Inference("a previous query embedding panicked".into());
        let mut state = self.state.lock().map_err(|_| poisoned())?;
        state.next_id += 1;
        let id = state.next_id;
        state.waiting.push_back((id, text.to_string()));
        loop {
            if let Some(answer) = state.answers.remove(&id) {
                return answer.map_err(EmbedError::Inference);
            }
            if state.running {
                state = self.answered.wait(state).map_err(|_| poisoned())?;
                continue;
            }
            state.running = true;
            let take = state.waiting.len().min(self.batch);
            let taken: Vec<(u64, String)> = state.waiting.drain(..take).collect();
            drop(state);
            let texts: Vec<&str> = taken.iter().map(|(_, t)| t.as_str()).collect();
            // A panic inside `run` must not leave the others waiting for ever.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&texts)))
                .unwrap_or_else(|_| Err(EmbedError::Inference("the model panicked".into())));
            state = self.state.lock().map_err(|_| poisoned())?;
            match outcome {
                Ok(vectors) if vectors.len() == taken.len() => {
                    for ((qid, _), v) in taken.into_iter().zip(vectors) {
                        state.answers.insert(qid, Ok(v));
                    }
                }
                Ok(_) => {
                    for (qid, _) in taken {
                        state
                            .answers
                            .insert(qid, Err("the model returned too few vectors".into()));
                    }
                }
                Err(e) => {
                    let why = e.to_string();
                    for (qid, _) in taken {
                        state.answers.insert(qid, Err(why.clone()));
                    }
                }
            }
            state.running = false;
            self.answered.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn concurrent_queries_share_passes_and_each_gets_its_own_vector() {
        let combiner = Arc::new(Combiner::new(16));
        let passes = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..40)
            .map(|i| {
                let (combiner, passes) = (combiner.clone(), passes.clone());
                std::thread::spawn(move || {
                    let text = "x".repeat(i + 1);
                    combiner
                        .embed(&text, |texts| {
                            passes.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(30));
                            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
                        })
                        .unwrap()
                })
            })
            .collect();
        for (i, t) in threads.into_iter().enumerate() {
            assert_eq!(t.join().unwrap(), vec![(i + 1) as f32]);
        }
        let passes = passes.load(Ordering::SeqCst);
        assert!((3..40).contains(&passes), "{passes} passes for 40 queries");
    }

    #[test]
    fn a_failed_pass_fails_its_queries_and_the_next_one_runs() {
        let combiner = Combiner::new(4);
        let e = combiner
            .embed("a", |_| Err(EmbedError::Inference("boom".into())))
            .unwrap_err();
        assert!(e.to_string().contains("boom"));
        let e = combiner
            .embed("a", |_| panic!("inside the model"))
            .unwrap_err();
        assert!(e.to_string().contains("panicked"));
        assert_eq!(
            combiner
                .embed("abc", |t| Ok(vec![vec![t[0].len() as f32]]))
                .unwrap(),
            vec![3.0]
        );
    }
}
