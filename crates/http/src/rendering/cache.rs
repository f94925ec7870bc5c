//! What was rendered recently ([`RenderCache`]): a document is rendered once per version of
//! its bytes and of the folder's documents. Plain data; the routes are the parent module's.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Mutex;

use ragdown_render::Rendered;

/// Documents rendered recently, at most this many.
const RENDERED_KEPT: usize = 32;

/// What decides a document's rendered HTML: the folder, its bytes, and which documents its
/// links can name (the folder's document count and newest document id move when one is
/// added, removed or renamed).
#[derive(Hash, PartialEq, Eq)]
pub(crate) struct RenderKey {
    pub(crate) dir: PathBuf,
    pub(crate) rel: String,
    pub(crate) hash: String,
    pub(crate) documents: usize,
    pub(crate) newest: i64,
}

/// Recently rendered documents, so a view of an unchanged document costs a lookup.
pub struct RenderCache(Mutex<lru::LruCache<RenderKey, Rendered>>);

impl Default for RenderCache {
    fn default() -> Self {
        // RENDERED_KEPT is a non-zero constant.
        let size = NonZeroUsize::new(RENDERED_KEPT).unwrap_or(NonZeroUsize::MIN);
        Self(Mutex::new(lru::LruCache::new(size)))
    }
}

impl RenderCache {
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut lru::LruCache<RenderKey, Rendered>) -> T,
    ) -> T {
        let mut cache = match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut cache)
    }
}
