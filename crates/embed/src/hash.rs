//! Feature hashing: each lowercase word adds ±1 to one of `dim` buckets. Deterministic, instant,
//! meaningless beyond shared words — for unit tests only, never for retrieval quality.

use sha2::{Digest, Sha256};

use crate::{Embedder, Result, TextKind, normalize};

pub struct HashEmbedder {
    dim: usize,
    id: String,
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            id: format!("hash-{dim}"),
        }
    }

    fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for word in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
        {
            let digest = Sha256::digest(word.to_lowercase().as_bytes());
            let bucket = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]) as usize
                % self.dim;
            let sign = if digest[4] & 1 == 0 { 1.0 } else { -1.0 };
            v[bucket] += sign;
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn min_score(&self) -> f32 {
        0.1
    }
    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dot;

    #[test]
    fn shared_words_score_higher() {
        let e = HashEmbedder::new(384);
        let v = e
            .embed(
                &["restore the backup", "restore backup", "weather in paris"],
                TextKind::Document,
            )
            .unwrap();
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
    }
}
