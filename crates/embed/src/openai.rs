//! Any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, LM Studio, vLLM…):
//! `POST <url>/embeddings {model, input}` in batches of [`BATCH`], answers matched to inputs by
//! `index`, vectors L2-normalised. The dimension is probed once at start.

use std::time::Duration;

use serde::Deserialize;

use crate::{EmbedError, Embedder, Result, TextKind, normalize};

/// Inputs per request.
pub const BATCH: usize = 64;

pub struct OpenAiEmbedder {
    agent: ureq::Agent,
    url: String,
    model: String,
    key: Option<String>,
    id: String,
    dim: usize,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    /// Connects and probes the dimension with one request.
    pub fn connect(model: &str, base_url: &str, key: Option<&str>) -> Result<Self> {
        let agent = crate::download::agent(Some(Duration::from_secs(60)));
        let mut embedder = Self {
            agent,
            url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            model: model.to_string(),
            key: key.map(str::to_string),
            id: String::new(),
            dim: 0,
        };
        let probe = embedder.request(&["dimension probe"])?;
        embedder.dim = probe.first().map_or(0, Vec::len);
        embedder.id = format!("openai:{model}@{}", embedder.dim);
        Ok(embedder)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let body = serde_json::json!({ "model": self.model, "input": texts });
        let mut response = request
            .send_json(&body)
            .map_err(|e| EmbedError::Remote(format!("{}: {e}", self.url)))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.body_mut().read_to_string().unwrap_or_default();
            return Err(EmbedError::Remote(format!(
                "{} answered {status}: {}",
                self.url,
                text.chars().take(300).collect::<String>()
            )));
        }
        let answer: Answer = response
            .body_mut()
            .read_json()
            .map_err(|e| EmbedError::Remote(format!("{}: unreadable answer: {e}", self.url)))?;
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for item in answer.data {
            if let Some(slot) = out.get_mut(item.index) {
                let mut v = item.embedding;
                normalize(&mut v);
                *slot = Some(v);
            }
        }
        out.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| {
            EmbedError::Remote(format!(
                "{} did not return one embedding per input",
                self.url
            ))
        })
    }
}

impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn min_score(&self) -> f32 {
        // Unmeasured models get upstream's conservative default.
        0.8
    }
    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let vectors = self.request(batch)?;
            if vectors.iter().any(|v| v.len() != self.dim) && self.dim != 0 {
                return Err(EmbedError::Remote(
                    "the service changed its vector size".into(),
                ));
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A tiny OpenAI-compatible stub: embeds each input as [len, 1, 0] in reverse index order,
    /// and records the Authorization header it saw.
    fn stub(requests: usize) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.unwrap();
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path_ok = line.starts_with("POST /v1/embeddings ");
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    let lower = header.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if lower.starts_with("authorization:") {
                        seen2.lock().unwrap().push(header.trim().to_string());
                    }
                    if header == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).unwrap();
                let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let inputs = request["input"].as_array().unwrap();
                let data: Vec<_> = inputs
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, t)| serde_json::json!({"index": i, "embedding": [t.as_str().unwrap().len() as f32, 1.0, 0.0]}))
                    .collect();
                let answer = serde_json::json!({ "data": data }).to_string();
                let status = if path_ok { "200 OK" } else { "404 Not Found" };
                write!(stream, "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}", answer.len()).unwrap();
            }
        });
        (format!("http://{addr}/v1"), seen)
    }

    #[test]
    fn embeds_in_order_normalised_with_key() {
        let (url, seen) = stub(2);
        let e = OpenAiEmbedder::connect("m", &url, Some("sk-test")).unwrap();
        assert_eq!(e.dim(), 3);
        assert_eq!(e.id(), "openai:m@3");
        let v = e.embed(&["a", "abc"], TextKind::Document).unwrap();
        assert!((v[0][0] - 1.0 / 2f32.sqrt()).abs() < 1e-6);
        assert!((v[1][0] - 3.0 / 10f32.sqrt()).abs() < 1e-6);
        assert_eq!(
            seen.lock().unwrap()[0].to_ascii_lowercase(),
            "authorization: bearer sk-test"
        );
    }

    #[test]
    fn errors_are_clear() {
        let (url, _) = stub(1);
        let err = OpenAiEmbedder::connect("m", &url.replace("/v1", "/wrong"), None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("404"), "{err}");
    }
}
