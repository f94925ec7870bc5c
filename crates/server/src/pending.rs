//! A folder's MCP server while its engine is still being made — the embedding model loading,
//! or downloading on first start. `initialize` and `tools/list` answer at once (a client's
//! start-up timeout never sees the download); a tool call waits for the engine, up to a limit,
//! then runs, or answers with why the engine could not be made (no ONNX Runtime, no model).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::answers::Answer;
use crate::mcp::{ToolHost, instructions};
use crate::tools::{self, Definition};
use crate::{Engine, ServerSettings, ToolError};

enum State {
    Loading,
    Ready(Arc<Engine>),
    Failed(String),
}

pub struct PendingEngine {
    name: String,
    settings: ServerSettings,
    state: Mutex<State>,
    changed: Condvar,
    /// How long a tool call waits for the engine before answering that it is still loading.
    wait: Duration,
}

impl PendingEngine {
    pub fn new(name: String, settings: ServerSettings, wait: Duration) -> Self {
        Self {
            name,
            settings,
            state: Mutex::new(State::Loading),
            changed: Condvar::new(),
            wait,
        }
    }

    fn set(&self, state: State) {
        if let Ok(mut s) = self.state.lock() {
            *s = state;
        }
        self.changed.notify_all();
    }

    /// The engine is made: calls run on it from now on.
    pub fn ready(&self, engine: Arc<Engine>) {
        self.set(State::Ready(engine));
    }

    /// The engine cannot be made: every call answers with `why`.
    pub fn failed(&self, why: String) {
        self.set(State::Failed(why));
    }

    /// The engine, waiting for it up to the limit.
    fn engine(&self) -> Result<Arc<Engine>, ToolError> {
        let deadline = Instant::now() + self.wait;
        let poisoned = || ToolError::internal("the engine lock was poisoned: restart ragdown");
        let mut state = self.state.lock().map_err(|_| poisoned())?;
        loop {
            match &*state {
                State::Ready(engine) => return Ok(engine.clone()),
                State::Failed(why) => {
                    return Err(ToolError::internal(format!(
                        "ragdown could not start its index: {why}"
                    )));
                }
                State::Loading => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ToolError::internal(
                    "the embedding model is still loading (the first start downloads it): try again in a minute",
                ));
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .map_err(|_| poisoned())?
                .0;
        }
    }
}

impl ToolHost for PendingEngine {
    fn server_name(&self) -> String {
        format!("ragdown-{}", self.name)
    }

    fn instructions(&self) -> String {
        instructions(&self.name)
    }

    fn definitions(&self) -> Vec<Definition> {
        tools::in_folder()
            .filter(|d| tools::enabled_by(&self.settings, d))
            .cloned()
            .collect()
    }

    fn call(&self, name: &str, args: serde_json::Value) -> Result<Answer, ToolError> {
        let engine = self.engine()?;
        tools::run(&engine, name, args)
    }

    fn resources(&self) -> Result<Vec<crate::resources::DocResource>, ToolError> {
        crate::resources::of_engine(&*self.engine()?)
    }

    fn read_resource(&self, uri: &str) -> Result<String, ToolError> {
        crate::resources::read(&*self.engine()?, uri)
    }

    fn resource_templates(&self) -> Vec<(String, String)> {
        vec![(
            crate::resources::template(&self.name),
            format!("A document of {}", self.name),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_wait_then_answer_why() {
        let pending = Arc::new(PendingEngine::new(
            "notes".into(),
            ServerSettings::default(),
            Duration::from_millis(50),
        ));
        assert_eq!(pending.definitions().len(), tools::in_folder().count());
        let err = pending
            .call("ragdown_stats", serde_json::json!({}))
            .unwrap_err();
        assert!(err.message.contains("still loading"), "{}", err.message);
        let waiting = {
            let p = pending.clone();
            std::thread::spawn(move || p.engine().err().map(|e| e.message))
        };
        pending.failed("no ONNX Runtime library (set ORT_DYLIB_PATH)".into());
        let msg = waiting.join().unwrap().unwrap();
        assert!(msg.contains("ORT_DYLIB_PATH"), "{msg}");
    }
}
