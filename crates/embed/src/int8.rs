//! Vectors held in memory as int8 with one scale each: a quarter of f32's bytes, so a search's
//! exact scan streams a quarter of the memory (it is bound by memory bandwidth, not arithmetic)
//! and a million 384-dimension sections take 388 MB instead of 1.5 GB.
//!
//! Each vector is scaled so its largest component is ±127 and rounded; a cosine against an f32
//! query is then `scale · Σ query[i] · stored[i]`. The rounding error of one component is at
//! most half a step, so the cosine of unit vectors moves by about `max|x| / 127 / √12` (≈ 5e-4
//! for MiniLM's vectors); tested below against the f32 cosine. The query stays f32: only the
//! stored side is rounded.
//!
//! Owns the encoding and its dot product; knows nothing of where vectors are kept.

/// One stored vector: its int8 components and the factor that turns them back into floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Int8Vector<'a> {
    pub values: &'a [i8],
    pub scale: f32,
}

impl Int8Vector<'_> {
    /// The dot product with an f32 vector; the cosine when both are unit length.
    pub fn dot(&self, query: &[f32]) -> f32 {
        self.scale * dot_i8(query, self.values)
    }

    /// The components as floats again (within half a step of what was stored).
    pub fn to_f32(&self) -> Vec<f32> {
        self.values
            .iter()
            .map(|&x| f32::from(x) * self.scale)
            .collect()
    }
}

/// An int8 vector that owns its components: a stored vector on its way into a snapshot,
/// rounded as soon as it is read so the f32 form is never held for the whole cache.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OwnedInt8 {
    pub values: Vec<i8>,
    pub scale: f32,
}

impl OwnedInt8 {
    /// `vector` rounded as [`quantize`] rounds it.
    pub fn new(vector: &[f32]) -> Self {
        let mut values = Vec::with_capacity(vector.len());
        let scale = quantize(vector, &mut values);
        Self { values, scale }
    }

    /// A vector stored as little-endian f32 bytes (the records' encoding), rounded.
    pub fn from_le_bytes(bytes: &[u8]) -> Self {
        let floats: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Self::new(&floats)
    }
}

/// Appends `vector` rounded to int8 to `out` and returns its scale. A zero vector stores zeros
/// with scale 0.
pub fn quantize(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = largest_magnitude(vector);
    if max == 0.0 || !max.is_finite() {
        out.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = max / 127.0;
    let inverse = 127.0 / max;
    // `x · inverse` lies in [-127, 127] by the choice of scale. Rounding half away from zero
    // by adding ±0.5 and letting the cast truncate (and saturate) vectorises, where
    // `f32::round` is a call per component: opening an index quantises every stored vector,
    // and `round` was a fifth of a no-change re-sync.
    out.extend(vector.iter().map(|x| {
        let y = x * inverse;
        (y + 0.5f32.copysign(y)) as i8
    }));
    scale
}

/// `max |x|` over sixteen lanes (one running maximum would be a scalar chain).
fn largest_magnitude(vector: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = vector.chunks_exact(16);
    let tail = chunks.remainder().iter().fold(0f32, |m, x| m.max(x.abs()));
    for chunk in chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(x.abs());
        }
    }
    lanes.iter().fold(tail, |m, &x| m.max(x))
}

/// `Σ query[i] · stored[i]` (unscaled), through [`crate::dot`]'s lanes: on x86-64 with AVX2
/// and FMA they compile to 8-wide sign-extends, conversions and fused multiply-adds.
pub fn dot_i8(query: &[f32], stored: &[i8]) -> f32 {
    crate::vector::dot_with(query, stored)
}

/// A query prepared for scanning many int8 vectors: its components as i16 (scaled so the
/// largest is ±[`QUERY_MAX`]), so each product of a scan is an exact integer and AVX2 does
/// sixteen of them per instruction (`vpmaddwd`) instead of eight float multiply-adds after
/// two conversions. Rounding the query to 15 bits moves a cosine by about 1e-5, far below the
/// stored side's rounding.
#[derive(Debug, Clone)]
pub struct ScanQuery {
    values: Vec<i16>,
    scale: f32,
    /// The f32 query, for the portable path and for dimensions past [`MAX_EXACT_DIM`].
    floats: Vec<f32>,
}

/// The largest query component after scaling. With stored components within ±127, a sum of
/// `d` products is within `d · 127 · 16383`, which fits an i32 for `d` up to [`MAX_EXACT_DIM`].
const QUERY_MAX: f32 = 16383.0;
/// Longer vectors than this are scored through the f32 path (no model comes near it).
const MAX_EXACT_DIM: usize = 1 << 16;

impl ScanQuery {
    pub fn new(query: &[f32]) -> Self {
        let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 && max.is_finite() {
            max / QUERY_MAX
        } else {
            0.0
        };
        let values = query
            .iter()
            .map(|x| {
                if scale == 0.0 {
                    0
                } else {
                    // Within ±QUERY_MAX by the choice of scale; the clamp guards the rounding.
                    (x / scale).round().clamp(-QUERY_MAX, QUERY_MAX) as i16
                }
            })
            .collect();
        Self {
            values,
            scale,
            floats: query.to_vec(),
        }
    }

    /// The dot product with a stored vector; its cosine when both are unit length.
    pub fn dot(&self, stored: &[i8], stored_scale: f32) -> f32 {
        #[cfg(target_arch = "x86_64")]
        {
            if self.values.len() <= MAX_EXACT_DIM && std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU was just checked to have the feature the function enables.
                let sum = unsafe { dot_i16_i8_avx2(&self.values, stored) };
                return sum as f32 * self.scale * stored_scale;
            }
        }
        stored_scale * dot_i8(&self.floats, stored)
    }
}

/// `Σ query[i] · stored[i]` in exact integers, 32 components a step: each half of the step
/// sign-extends 16 stored bytes to i16 and multiplies them with the query's 16, adding pairs
/// into eight i32 lanes (`vpmaddwd`); two accumulators keep the two halves independent.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i16_i8_avx2(query: &[i16], stored: &[i8]) -> i32 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_shuffle_epi32,
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
        _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
    };
    let n = query.len().min(stored.len());
    let (query, stored) = (&query[..n], &stored[..n]);
    let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let steps = n / 32;
    for step in 0..steps {
        let at = step * 32;
        // SAFETY: `at + 32 <= n`, so both 16-byte loads of `stored` and both 32-byte loads of
        // `query` (16 i16 each) lie inside the slices; the loads are unaligned ones.
        let (s0, s1, q0, q1) = unsafe {
            (
                _mm_loadu_si128(stored.as_ptr().add(at).cast::<__m128i>()),
                _mm_loadu_si128(stored.as_ptr().add(at + 16).cast::<__m128i>()),
                _mm256_loadu_si256(query.as_ptr().add(at).cast::<__m256i>()),
                _mm256_loadu_si256(query.as_ptr().add(at + 16).cast::<__m256i>()),
            )
        };
        low = _mm256_add_epi32(low, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s0), q0));
        high = _mm256_add_epi32(high, _mm256_madd_epi16(_mm256_cvtepi8_epi16(s1), q1));
    }
    let both = _mm256_add_epi32(low, high);
    let quad = _mm_add_epi32(
        _mm256_castsi256_si128(both),
        _mm256_extracti128_si256::<1>(both),
    );
    let pair = _mm_add_epi32(quad, _mm_shuffle_epi32::<0b01_00_11_10>(quad));
    let one = _mm_add_epi32(pair, _mm_shuffle_epi32::<0b00_00_00_01>(pair));
    let tail: i32 = query[steps * 32..]
        .iter()
        .zip(&stored[steps * 32..])
        .map(|(&q, &s)| i32::from(q) * i32::from(s))
        .sum();
    _mm_cvtsi128_si32(one) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reproducible unit vectors from a small xorshift.
    fn unit_vectors(count: usize, dim: usize, mut state: u64) -> Vec<Vec<f32>> {
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        (0..count)
            .map(|_| {
                let mut v: Vec<f32> = (0..dim).map(|_| next()).collect();
                crate::normalize(&mut v);
                v
            })
            .collect()
    }

    #[test]
    fn the_int8_cosine_stays_within_a_thousandth_of_the_f32_one() {
        let dim = 384;
        let stored = unit_vectors(200, dim, 0x9E37_79B9_7F4A_7C15);
        let queries = unit_vectors(20, dim, 0x2545_F491_4F6C_DD1D);
        let mut worst = 0f32;
        for v in &stored {
            let mut values = Vec::new();
            let scale = quantize(v, &mut values);
            assert_eq!(values.len(), dim);
            let int8 = Int8Vector {
                values: &values,
                scale,
            };
            for q in &queries {
                worst = worst.max((int8.dot(q) - crate::dot(q, v)).abs());
            }
        }
        assert!(worst < 1e-3, "int8 cosine off by {worst}");
        assert!(worst > 0.0, "rounding should show somewhere");
    }

    #[test]
    fn the_largest_component_is_kept_exactly_and_odd_lengths_count_their_tail() {
        let v = [0.5f32, -0.25, 0.125, 0.0, -0.5];
        let mut values = Vec::new();
        let scale = quantize(&v, &mut values);
        assert_eq!(values, [127, -64, 32, 0, -127]);
        let back = Int8Vector {
            values: &values,
            scale,
        }
        .to_f32();
        assert_eq!(back[0], 0.5);
        assert_eq!(back[4], -0.5);
        // 17 components: sixteen lanes and a tail of one.
        let long: Vec<f32> = (0..17).map(|i| i as f32).collect();
        let mut values = Vec::new();
        let scale = quantize(&long, &mut values);
        let ones = vec![1f32; 17];
        let sum: f32 = long.iter().sum();
        let got = Int8Vector {
            values: &values,
            scale,
        }
        .dot(&ones);
        assert!((got - sum).abs() < 0.5, "{got} vs {sum}");
    }

    #[test]
    fn a_prepared_query_scores_like_the_float_query() {
        // 384 (whole steps) and 391 (a tail), against the f32 cosine of the stored floats.
        for dim in [384, 391, 7] {
            let stored = unit_vectors(50, dim, 0x9E37_79B9_7F4A_7C15);
            for q in unit_vectors(5, dim, 0x2545_F491_4F6C_DD1D) {
                let prepared = ScanQuery::new(&q);
                for v in &stored {
                    let mut values = Vec::new();
                    let scale = quantize(v, &mut values);
                    let float = Int8Vector {
                        values: &values,
                        scale,
                    }
                    .dot(&q);
                    let got = prepared.dot(&values, scale);
                    assert!((got - float).abs() < 1e-4, "{dim}: {got} vs {float}");
                }
            }
        }
        assert_eq!(ScanQuery::new(&[0.0; 4]).dot(&[1, 2, 3, 4], 1.0), 0.0);
    }

    #[test]
    fn a_zero_vector_stores_zeros_and_scores_zero() {
        let mut values = Vec::new();
        assert_eq!(quantize(&[0.0; 8], &mut values), 0.0);
        assert_eq!(values, [0; 8]);
        assert_eq!(
            Int8Vector {
                values: &values,
                scale: 0.0
            }
            .dot(&[1.0; 8]),
            0.0
        );
    }
}
