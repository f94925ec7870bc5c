//! A preset's weights in a side file that ONNX Runtime maps instead of copying. A hub model
//! arrives as one `model.onnx` with every weight inline: each session build parses the whole
//! protobuf and copies every weight into fresh memory (fp32 MiniLM, 90 MB: ~150 ms of a
//! one-shot re-sync's ~280). Once per model, this module writes the same graph as
//! [`GRAPH`] with each large weight's bytes moved to [`DATA`], page-aligned, so ONNX Runtime
//! maps them from the page cache (fresh process, Python, median: fp32 load 131-152 -> 17-22 ms,
//! serving build 155-192 -> 54 ms and peak RSS 186 -> 127 MB; q8 44-53 -> 12-24 ms).
//!
//! It moves bytes, and folds one pattern an unoptimised session would otherwise recompute on
//! every pass (int8 weights behind `Cast` + `Mul`, see [`fold`]); no other operator, shape or
//! weight value changes, and vectors are bit-identical (checked on fp32, q8 and the test
//! model). It never fails a load: a model it cannot read or a folder it cannot write keeps
//! using `model.onnx`. It writes only inside a preset's own folder, never into a model
//! directory a user named, and removes what a killed split left there.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use prost::encoding::{WireType, decode_key, decode_varint, encode_key, encode_varint};

mod fold;

/// The graph, its weights replaced by references into [`DATA`].
pub const GRAPH: &str = "model.external.onnx";
/// The weights' bytes.
pub const DATA: &str = "model.external.data";
/// Which `model.onnx` (length and modification time) the two files were made from, so a
/// replaced model is split again rather than served stale weights.
const STAMP: &str = "model.external.stamp";
/// Bumped when the layout of the files, or what they hold, changes (2: folded dequantisation).
const LAYOUT: u32 = 2;
/// Temporary files start so, to be told apart from anything else in the folder.
const TEMPORARY: &str = ".model.external.";
/// A temporary file older than this was left by a split that was killed (a live split of a
/// 90 MB model takes well under a second); the next split removes it.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Weights smaller than this stay inline: moving them saves nothing (ONNX's own tools use
/// the same threshold).
const MIN_MOVED: usize = 1024;
/// A weight at least a page long starts on a page, which ONNX Runtime needs to map it rather
/// than read it; smaller ones start on 64 bytes, aligned for any element type and SIMD load.
const PAGE: u64 = 4096;
const SMALL_ALIGN: u64 = 64;

// Field numbers in onnx.proto.
const MODEL_IR_VERSION: u32 = 1;
const MODEL_GRAPH: u32 = 7;
const GRAPH_INITIALIZER: u32 = 5;
const TENSOR_RAW_DATA: u32 = 9;
const TENSOR_EXTERNAL_DATA: u32 = 13;
const TENSOR_DATA_LOCATION: u32 = 14;
const ENTRY_KEY: u32 = 1;
const ENTRY_VALUE: u32 = 2;
const LOCATION_EXTERNAL: u64 = 1;

#[derive(Debug, thiserror::Error)]
enum SplitError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not an ONNX protobuf: {0}")]
    Malformed(String),
}

/// The model file a session should load from the preset folder `dir`: [`GRAPH`] when it is
/// (or can now be made) current, else `model.onnx`.
pub fn model_for(dir: &Path) -> PathBuf {
    let original = dir.join("model.onnx");
    let Some(stamp) = stamp_of(&original) else {
        return original;
    };
    let graph = dir.join(GRAPH);
    let current = fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == stamp)
        && graph.is_file()
        && dir.join(DATA).is_file();
    if current {
        return graph;
    }
    match split(&original, dir, &stamp) {
        Ok(true) => graph,
        Ok(false) => original,
        Err(e) => {
            tracing::info!(
                "{}: keeping the weights inline ({e}); each model load copies them",
                original.display()
            );
            original
        }
    }
}

/// Marks the split files of `dir` stale, so the next [`model_for`] writes them again.
pub fn forget(dir: &Path) {
    if let Err(e) = fs::remove_file(dir.join(STAMP))
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("{}: {e}", dir.join(STAMP).display());
    }
}

fn stamp_of(model: &Path) -> Option<String> {
    let meta = fs::metadata(model).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "layout {LAYOUT}, {} bytes, modified {}",
        meta.len(),
        modified.as_nanos()
    ))
}

/// Writes [`DATA`], then [`GRAPH`], then the stamp, each through a temporary file renamed into
/// place: a reader sees either the old pair or the new one, and two processes splitting at once
/// write the same bytes. Returns false when no weight was worth moving.
fn split(original: &Path, dir: &Path, stamp: &str) -> Result<bool, SplitError> {
    let model = fs::read(original)?;
    // Readable by whoever could read the original (a temporary file starts owner-only).
    let permissions = fs::metadata(original)?.permissions();
    remove_abandoned(dir);
    let data_file = temporary(dir)?;
    let mut data = DataWriter {
        out: BufWriter::new(data_file.as_file()),
        len: 0,
        moved: 0,
    };
    let graph = rewrite(&model, &mut data)?;
    if data.moved == 0 {
        return Ok(false);
    }
    data.out.flush()?;
    drop(data);
    let place = |file: tempfile::NamedTempFile, name: &str| -> Result<(), SplitError> {
        file.as_file().set_permissions(permissions.clone())?;
        // On disk before its name is: a crash never leaves a named file with missing bytes.
        file.as_file().sync_all()?;
        file.persist(dir.join(name))
            .map_err(|e| SplitError::Io(e.error))?;
        Ok(())
    };
    let written = |bytes: &[u8]| -> Result<tempfile::NamedTempFile, SplitError> {
        let mut file = temporary(dir)?;
        file.write_all(bytes)?;
        Ok(file)
    };
    place(data_file, DATA)?;
    place(written(&graph)?, GRAPH)?;
    place(written(stamp.as_bytes())?, STAMP)?;
    Ok(true)
}

fn temporary(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new().prefix(TEMPORARY).tempfile_in(dir)
}

/// Removes temporary files a killed split left (each as large as the weights).
fn remove_abandoned(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let abandoned = entry.file_name().to_string_lossy().starts_with(TEMPORARY)
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > ABANDONED_AFTER);
        if abandoned {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Appends weights to [`DATA`] at aligned offsets.
struct DataWriter<'a> {
    out: BufWriter<&'a fs::File>,
    len: u64,
    moved: usize,
}

impl DataWriter<'_> {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let align = if bytes.len() as u64 >= PAGE {
            PAGE
        } else {
            SMALL_ALIGN
        };
        let padding = self.len.next_multiple_of(align) - self.len;
        // At most a page of zeros.
        self.out.write_all(&vec![0; padding as usize])?;
        let offset = self.len + padding;
        self.out.write_all(bytes)?;
        self.len = offset + bytes.len() as u64;
        self.moved += 1;
        Ok(offset)
    }
}

/// One field of a protobuf message: its number, its whole encoding (key included) and, for
/// a length-delimited field, its payload; for a varint, its value.
struct Field<'a> {
    number: u32,
    wire: WireType,
    encoded: &'a [u8],
    payload: &'a [u8],
    varint: u64,
}

fn fields(mut message: &[u8]) -> impl Iterator<Item = Result<Field<'_>, SplitError>> {
    std::iter::from_fn(move || {
        if message.is_empty() {
            return None;
        }
        let field = next_field(&mut message);
        if field.is_err() {
            // Stop after the first error: the rest cannot be framed.
            message = &[];
        }
        Some(field)
    })
}

/// Reads the field at the start of `message` and advances past it.
fn next_field<'a>(message: &mut &'a [u8]) -> Result<Field<'a>, SplitError> {
    let malformed = |e: prost::DecodeError| SplitError::Malformed(e.to_string());
    let whole: &'a [u8] = message;
    let mut cursor: &'a [u8] = whole;
    let (number, wire) = decode_key(&mut cursor).map_err(malformed)?;
    let cut_short = || SplitError::Malformed(format!("field {number} is cut short"));
    let (mut payload, mut varint): (&'a [u8], u64) = (&[], 0);
    let rest: &'a [u8] = match wire {
        WireType::Varint => {
            varint = decode_varint(&mut cursor).map_err(malformed)?;
            cursor
        }
        WireType::SixtyFourBit => cursor.get(8..).ok_or_else(cut_short)?,
        WireType::ThirtyTwoBit => cursor.get(4..).ok_or_else(cut_short)?,
        WireType::LengthDelimited => {
            let len = usize::try_from(decode_varint(&mut cursor).map_err(malformed)?)
                .map_err(|_| cut_short())?;
            payload = cursor.get(..len).ok_or_else(cut_short)?;
            &cursor[len..]
        }
        WireType::StartGroup | WireType::EndGroup => {
            return Err(SplitError::Malformed(format!(
                "field {number} is a group, which ONNX does not use"
            )));
        }
    };
    *message = rest;
    Ok(Field {
        number,
        wire,
        encoded: &whole[..whole.len() - rest.len()],
        payload,
        varint,
    })
}

fn put_bytes(number: u32, payload: &[u8], out: &mut Vec<u8>) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// The model with its graph's weight dequantisation folded ([`fold`]) and its large
/// initializers moved to `data`; every other byte is kept.
fn rewrite(model: &[u8], data: &mut DataWriter) -> Result<Vec<u8>, SplitError> {
    let mut out = Vec::with_capacity(model.len() / 8);
    // Before IR version 4 every initializer had to be a graph input too, which a folded one
    // is not: such a model keeps its casts.
    let mut ir_version = 0;
    for field in fields(model) {
        let field = field?;
        if field.number == MODEL_IR_VERSION {
            ir_version = field.varint;
        }
    }
    for field in fields(model) {
        let field = field?;
        if field.number == MODEL_GRAPH && !field.payload.is_empty() {
            let folding = if ir_version >= 4 {
                fold::plan(field.payload)?
            } else {
                fold::Folding::default()
            };
            let mut graph = Vec::new();
            let mut node_at = 0;
            for part in fields(field.payload) {
                let part = part?;
                match part.number {
                    fold::GRAPH_NODE => {
                        if !folding.removed_nodes.contains(&node_at) {
                            graph.extend_from_slice(part.encoded);
                        }
                        node_at += 1;
                    }
                    GRAPH_INITIALIZER if !part.payload.is_empty() => {
                        if !folding.dropped.contains(fold::tensor_name(part.payload)?) {
                            let moved = move_tensor(part.payload, data)?;
                            put_bytes(GRAPH_INITIALIZER, &moved, &mut graph);
                        }
                    }
                    _ => graph.extend_from_slice(part.encoded),
                }
            }
            for tensor in &folding.added {
                put_bytes(GRAPH_INITIALIZER, &move_tensor(tensor, data)?, &mut graph);
            }
            put_bytes(MODEL_GRAPH, &graph, &mut out);
        } else {
            out.extend_from_slice(field.encoded);
        }
    }
    Ok(out)
}

/// A tensor whose `raw_data` (when large and not already external) is replaced by a
/// reference to where [`DataWriter::append`] put it.
fn move_tensor(tensor: &[u8], data: &mut DataWriter) -> Result<Vec<u8>, SplitError> {
    let parts = fields(tensor).collect::<Result<Vec<_>, _>>()?;
    let already_external = parts.iter().any(|f| {
        f.number == TENSOR_EXTERNAL_DATA
            || (f.number == TENSOR_DATA_LOCATION && f.varint == LOCATION_EXTERNAL)
    });
    // Protobuf keeps the last of a repeated singular field.
    let raw = parts
        .iter()
        .rfind(|f| f.number == TENSOR_RAW_DATA)
        .map(|f| f.payload);
    let Some(raw) = raw.filter(|r| r.len() >= MIN_MOVED && !already_external) else {
        return Ok(tensor.to_vec());
    };
    let offset = data.append(raw)?;
    let mut out = Vec::with_capacity(128);
    for part in parts.iter().filter(|f| f.number != TENSOR_RAW_DATA) {
        out.extend_from_slice(part.encoded);
    }
    for (key, value) in [
        ("location", DATA.to_string()),
        ("offset", offset.to_string()),
        ("length", raw.len().to_string()),
    ] {
        let mut entry = Vec::new();
        put_bytes(ENTRY_KEY, key.as_bytes(), &mut entry);
        put_bytes(ENTRY_VALUE, value.as_bytes(), &mut entry);
        put_bytes(TENSOR_EXTERNAL_DATA, &entry, &mut out);
    }
    encode_key(TENSOR_DATA_LOCATION, WireType::Varint, &mut out);
    encode_varint(LOCATION_EXTERNAL, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        encode_key(1, WireType::Varint, &mut t); // dims
        encode_varint(raw.len() as u64, &mut t);
        encode_key(2, WireType::Varint, &mut t); // data_type uint8
        encode_varint(2, &mut t);
        put_bytes(8, name.as_bytes(), &mut t);
        put_bytes(TENSOR_RAW_DATA, raw, &mut t);
        t
    }

    fn model(tensors: &[Vec<u8>]) -> Vec<u8> {
        let mut graph = Vec::new();
        put_bytes(2, b"g", &mut graph); // graph name
        for t in tensors {
            put_bytes(GRAPH_INITIALIZER, t, &mut graph);
        }
        let mut m = Vec::new();
        encode_key(1, WireType::Varint, &mut m); // ir_version
        encode_varint(8, &mut m);
        put_bytes(MODEL_GRAPH, &graph, &mut m);
        put_bytes(2, b"producer", &mut m);
        m
    }

    /// An initializer read back: its external entries, its data location, whether it still
    /// has inline bytes.
    type Reference = (Vec<(String, String)>, u64, bool);

    fn references(model: &[u8]) -> Vec<Reference> {
        let graph = fields(model)
            .map(Result::unwrap)
            .find(|f| f.number == MODEL_GRAPH)
            .unwrap()
            .payload;
        fields(graph)
            .map(Result::unwrap)
            .filter(|f| f.number == GRAPH_INITIALIZER)
            .map(|t| {
                let (mut entries, mut location, mut inline) = (Vec::new(), 0, false);
                for f in fields(t.payload).map(Result::unwrap) {
                    match f.number {
                        TENSOR_EXTERNAL_DATA => {
                            let kv: Vec<_> = fields(f.payload)
                                .map(|e| String::from_utf8(e.unwrap().payload.to_vec()).unwrap())
                                .collect();
                            entries.push((kv[0].clone(), kv[1].clone()));
                        }
                        TENSOR_DATA_LOCATION => location = f.varint,
                        TENSOR_RAW_DATA => inline = true,
                        _ => {}
                    }
                }
                (entries, location, inline)
            })
            .collect()
    }

    #[test]
    fn moves_large_weights_aligned_and_keeps_small_ones_inline() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let other: Vec<u8> = (0..1500u32).map(|i| (i % 13) as u8).collect();
        let original = model(&[
            tensor("big", &big),
            tensor("small", b"tiny"),
            tensor("b", &other),
        ]);
        fs::write(dir.path().join("model.onnx"), &original).unwrap();

        let chosen = model_for(dir.path());
        assert_eq!(chosen, dir.path().join(GRAPH));
        let rewritten = fs::read(&chosen).unwrap();
        assert!(rewritten.len() < original.len() - 6000);
        let refs = references(&rewritten);
        assert_eq!(refs.len(), 3);
        assert_eq!(refs[1], (vec![], 0, true), "a small weight stays inline");
        let data = fs::read(dir.path().join(DATA)).unwrap();
        for ((entries, location, inline), bytes) in [(&refs[0], &big), (&refs[2], &other)] {
            assert_eq!((*location, *inline), (LOCATION_EXTERNAL, false));
            assert_eq!(entries[0], ("location".into(), DATA.into()));
            let offset: usize = entries[1].1.parse().unwrap();
            let length: usize = entries[2].1.parse().unwrap();
            assert_eq!(&data[offset..offset + length], &bytes[..]);
            let align = if length >= 4096 { 4096 } else { 64 };
            assert_eq!(offset % align, 0, "{entries:?}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |name: &str| {
                fs::metadata(dir.path().join(name))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777
            };
            assert_eq!(
                mode(DATA),
                mode("model.onnx"),
                "as readable as the original"
            );
            assert_eq!(mode(GRAPH), mode("model.onnx"));
        }
        // Everything but the initializers' data is kept, byte for byte.
        assert!(rewritten.ends_with(&original[original.len() - 10..]));

        // Current files are reused; a replaced model is split again.
        let before = fs::metadata(dir.path().join(DATA))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(model_for(dir.path()), dir.path().join(GRAPH));
        assert_eq!(
            fs::metadata(dir.path().join(DATA))
                .unwrap()
                .modified()
                .unwrap(),
            before
        );
        let replaced = model(&[tensor("big", &other)]);
        fs::write(dir.path().join("model.onnx"), &replaced).unwrap();
        model_for(dir.path());
        let data = fs::read(dir.path().join(DATA)).unwrap();
        assert_eq!(&data[..other.len()], &other[..]);
        assert_eq!(
            references(&fs::read(dir.path().join(GRAPH)).unwrap()).len(),
            1
        );
    }

    #[test]
    fn a_model_with_nothing_to_move_or_not_onnx_is_used_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("model.onnx"),
            model(&[tensor("small", b"tiny")]),
        )
        .unwrap();
        assert_eq!(model_for(dir.path()), dir.path().join("model.onnx"));
        assert!(!dir.path().join(GRAPH).exists());

        fs::write(dir.path().join("model.onnx"), b"\x0a\xff\xff\xff\xff\x0f").unwrap();
        assert_eq!(model_for(dir.path()), dir.path().join("model.onnx"));
        assert!(!dir.path().join(DATA).exists());
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_killed_splits_leftovers_go_and_a_running_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = vec![7; 3000];
        fs::write(dir.path().join("model.onnx"), model(&[tensor("w", &big)])).unwrap();
        let old = dir.path().join(format!("{TEMPORARY}abandoned"));
        let young = dir.path().join(format!("{TEMPORARY}running"));
        let other = dir.path().join(".tmp-not-ours");
        for file in [&old, &young, &other] {
            fs::write(file, b"partial").unwrap();
        }
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        for file in [&old, &other] {
            fs::File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(two_hours_ago)
                .unwrap();
        }
        assert_eq!(model_for(dir.path()), dir.path().join(GRAPH));
        assert!(!old.exists(), "an abandoned temporary file is removed");
        assert!(young.exists(), "a split still running keeps its file");
        assert!(other.exists(), "another program's file is not touched");
    }

    #[test]
    fn already_external_weights_are_left_alone() {
        let mut t = tensor("w", &[0; 2048]);
        encode_key(TENSOR_DATA_LOCATION, WireType::Varint, &mut t);
        encode_varint(LOCATION_EXTERNAL, &mut t);
        let dir = tempfile::tempdir().unwrap();
        let file = fs::File::create(dir.path().join("d")).unwrap();
        let mut data = DataWriter {
            out: BufWriter::new(&file),
            len: 0,
            moved: 0,
        };
        assert_eq!(move_tensor(&t, &mut data).unwrap(), t);
        assert_eq!(data.moved, 0);
    }
}
