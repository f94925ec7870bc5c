//! Which walked files a sync must read: those without a record, of another size or
//! modification time than their record, or converted by an older converter.

use crate::DocumentRecord;
use crate::walk::FileEntry;

/// What the hash of a document this converter version converted starts with; made once,
/// since every sync asks it of every converted file.
pub(crate) fn converted_hash_prefix() -> &'static str {
    static PREFIX: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("c{}:", ragdown_convert::CONVERTER_VERSION));
    &PREFIX
}

/// Whether a file on disk may differ from its record (none yet, or another size or
/// modification time) or was converted by an older converter: a sync reads and hashes
/// exactly these.
pub(crate) fn may_have_changed(file: &FileEntry, record: Option<&DocumentRecord>) -> bool {
    record.is_none_or(|d| {
        d.size != file.size
            || d.mtime_ns != file.mtime_ns
            || (ragdown_convert::Format::from_path(&file.path).is_some()
                && !d.hash.starts_with(converted_hash_prefix()))
    })
}
