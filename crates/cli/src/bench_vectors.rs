//! The synthetic vectors `ragdown bench --system` measures the vector stores on (in memory
//! and PostgreSQL + pgvector): random unit vectors and their exact nearest neighbours.

/// The synthetic vectors' dimension and the results each query asks for.
pub(crate) const DIM: usize = 384;
pub(crate) const TOP: usize = 10;

/// Random unit vectors of [`DIM`] dimensions (the hardest case for an approximate index: no
/// clusters), 20 random queries and each query's exact top-[`TOP`] in f32 (chunk ids are
/// positions + 1).
pub(crate) struct Synthetic {
    pub vectors: Vec<f32>,
    pub queries: Vec<Vec<f32>>,
    pub exact: Vec<Vec<i64>>,
}

impl Synthetic {
    pub(crate) fn new(count: usize) -> Self {
        // A small xorshift: reproducible vectors without a random-number dependency.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut vectors = vec![0f32; count * DIM];
        for v in vectors.chunks_mut(DIM) {
            v.iter_mut().for_each(|x| *x = next());
            ragdown_embed::normalize(v);
        }
        let queries: Vec<Vec<f32>> = (0..20)
            .map(|_| {
                let mut query: Vec<f32> = (0..DIM).map(|_| next()).collect();
                ragdown_embed::normalize(&mut query);
                query
            })
            .collect();
        let exact = queries
            .iter()
            .map(|query| {
                let mut scored: Vec<(i64, f32)> = vectors
                    .chunks_exact(DIM)
                    .enumerate()
                    .map(|(i, v)| (i as i64 + 1, ragdown_embed::dot(query, v)))
                    .collect();
                if scored.len() > TOP {
                    scored.select_nth_unstable_by(TOP, |a, b| b.1.total_cmp(&a.1));
                    scored.truncate(TOP);
                }
                scored.into_iter().map(|(id, _)| id).collect()
            })
            .collect();
        Self {
            vectors,
            queries,
            exact,
        }
    }
}
