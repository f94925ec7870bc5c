//! Weights stored as int8 and turned back into floats by the graph itself, folded once into
//! the floats they compute. Some exports keep a weight as an int8 initializer behind
//! `Cast(to float)` and `Mul(scale)` (weight-only quantisation): an optimised session folds
//! that pair at build time, but the unoptimised session a one-shot command builds (see
//! [`crate::lazy::Build::Quick`]) runs it on every forward pass, re-creating every weight as
//! fresh fp32 memory (the offline test model: 22 M weights, ~180 MB written and page-faulted
//! per pass, ~30 ms of a ~225 ms one-edit re-sync). Folding it into the split files once makes
//! both sessions read ready floats from the mapped [`super::DATA`].
//!
//! Each folded value is `(w as f32) * scale`, the one IEEE multiplication the `Mul` node
//! performs, so vectors are bit-identical. It folds only what it can prove is that pair and
//! nothing else: standard-domain nodes, initializers with raw bytes that no graph input can
//! override, a `Cast` output read by that `Mul` alone, a scale that broadcasts to the weight's
//! shape, and no subgraph anywhere (a subgraph could read a name unseen here). Anything else
//! is left as it is, which is always correct.

use std::collections::{HashMap, HashSet};

use prost::encoding::{WireType, encode_key, encode_varint};

use super::{Field, GRAPH_INITIALIZER, SplitError, TENSOR_RAW_DATA, fields, put_bytes};

// Field numbers in onnx.proto.
pub(super) const GRAPH_NODE: u32 = 1;
const GRAPH_INPUT: u32 = 11;
const GRAPH_OUTPUT: u32 = 12;
const VALUE_INFO_NAME: u32 = 1;
const NODE_INPUT: u32 = 1;
const NODE_OUTPUT: u32 = 2;
const NODE_OP_TYPE: u32 = 4;
const NODE_ATTRIBUTE: u32 = 5;
const NODE_DOMAIN: u32 = 7;
const ATTRIBUTE_NAME: u32 = 1;
const ATTRIBUTE_INT: u32 = 3;
const ATTRIBUTE_GRAPH: u32 = 6;
const ATTRIBUTE_GRAPHS: u32 = 11;
const TENSOR_DIMS: u32 = 1;
const TENSOR_DATA_TYPE: u32 = 2;
const TENSOR_NAME: u32 = 8;
// TensorProto.DataType.
const FLOAT: u64 = 1;
const UINT8: u64 = 2;
const INT8: u64 = 3;

/// What the rewrite changes in one graph: nodes left out (by their position among the
/// graph's nodes), initializers left out (by name) and the folded initializers to add
/// (encoded `TensorProto`s, their bytes inline for the rewrite to move).
#[derive(Default)]
pub(super) struct Folding<'a> {
    pub removed_nodes: HashSet<usize>,
    pub dropped: HashSet<&'a [u8]>,
    pub added: Vec<Vec<u8>>,
}

struct Node<'a> {
    inputs: Vec<&'a [u8]>,
    outputs: Vec<&'a [u8]>,
    op: &'a [u8],
    standard: bool,
    /// The `to` attribute (a `Cast`'s target type).
    to: Option<u64>,
}

struct Initializer<'a> {
    data_type: u64,
    dims: Vec<u64>,
    raw: Option<&'a [u8]>,
}

/// Plans the folds in `graph` (a `GraphProto`'s bytes); an empty plan when there is nothing
/// it can prove safe to fold.
pub(super) fn plan(graph: &[u8]) -> Result<Folding<'_>, SplitError> {
    let mut nodes = Vec::new();
    let mut initializers = HashMap::new();
    // Names the caller can feed or read: never folded away.
    let mut boundary: HashSet<&[u8]> = HashSet::new();
    for part in fields(graph) {
        let part = part?;
        match part.number {
            GRAPH_NODE => match node(part.payload)? {
                Some(node) => nodes.push(node),
                None => return Ok(Folding::default()),
            },
            GRAPH_INITIALIZER => {
                let (name, initializer) = initializer(part.payload)?;
                initializers.insert(name, initializer);
            }
            GRAPH_INPUT | GRAPH_OUTPUT => {
                for f in fields(part.payload) {
                    let f = f?;
                    if f.number == VALUE_INFO_NAME {
                        boundary.insert(f.payload);
                    }
                }
            }
            _ => {}
        }
    }
    // How many times each name is read, and by which node (when once).
    let mut reads: HashMap<&[u8], usize> = HashMap::new();
    let mut reader: HashMap<&[u8], usize> = HashMap::new();
    for (at, node) in nodes.iter().enumerate() {
        for &input in node.inputs.iter().filter(|i| !i.is_empty()) {
            *reads.entry(input).or_default() += 1;
            reader.insert(input, at);
        }
    }
    let mut folding = Folding::default();
    let mut touched = Vec::new();
    for (at, cast) in nodes.iter().enumerate() {
        let ([weight_name], [cast_out]) = (&cast.inputs[..], &cast.outputs[..]) else {
            continue;
        };
        if !(cast.standard && cast.op == b"Cast" && cast.to == Some(FLOAT))
            || reads.get(cast_out) != Some(&1)
            || boundary.contains(cast_out)
            || boundary.contains(weight_name)
        {
            continue;
        }
        let Some(weight) = initializers.get(weight_name) else {
            continue;
        };
        let Some(&mul_at) = reader.get(cast_out) else {
            continue;
        };
        let mul = &nodes[mul_at];
        let ([a, b], [product]) = (&mul.inputs[..], &mul.outputs[..]) else {
            continue;
        };
        let scale_name = if a == cast_out { b } else { a };
        if !(mul.standard && mul.op == b"Mul")
            || scale_name == cast_out
            || boundary.contains(scale_name)
            || boundary.contains(product)
            || folding.removed_nodes.contains(&mul_at)
        {
            continue;
        }
        let Some(scale) = initializers.get(scale_name) else {
            continue;
        };
        let Some(floats) = folded(weight, scale) else {
            continue;
        };
        folding.added.push(tensor(product, &weight.dims, &floats));
        folding.removed_nodes.extend([at, mul_at]);
        for name in [*weight_name, *scale_name] {
            if let Some(count) = reads.get_mut(name) {
                *count -= 1;
            }
            touched.push(name);
        }
    }
    // A weight or scale nothing reads any more goes; one still read elsewhere stays.
    folding.dropped = touched
        .into_iter()
        .filter(|name| reads.get(name) == Some(&0))
        .collect();
    Ok(folding)
}

/// The name of the initializer in `tensor` (a `TensorProto`'s bytes).
pub(super) fn tensor_name(tensor: &[u8]) -> Result<&[u8], SplitError> {
    let mut name: &[u8] = &[];
    for f in fields(tensor) {
        let f = f?;
        if f.number == TENSOR_NAME {
            name = f.payload;
        }
    }
    Ok(name)
}

/// A node's names and type; `None` when it holds a subgraph.
fn node(bytes: &[u8]) -> Result<Option<Node<'_>>, SplitError> {
    let mut node = Node {
        inputs: Vec::new(),
        outputs: Vec::new(),
        op: &[],
        standard: true,
        to: None,
    };
    for f in fields(bytes) {
        let f = f?;
        match f.number {
            NODE_INPUT => node.inputs.push(f.payload),
            NODE_OUTPUT => node.outputs.push(f.payload),
            NODE_OP_TYPE => node.op = f.payload,
            NODE_DOMAIN => node.standard = f.payload.is_empty() || f.payload == b"ai.onnx",
            NODE_ATTRIBUTE => {
                let mut is_to = false;
                let mut value = None;
                for a in fields(f.payload) {
                    let a = a?;
                    match a.number {
                        ATTRIBUTE_GRAPH | ATTRIBUTE_GRAPHS => return Ok(None),
                        ATTRIBUTE_NAME => is_to = a.payload == b"to",
                        ATTRIBUTE_INT => value = Some(a.varint),
                        _ => {}
                    }
                }
                if is_to {
                    node.to = value;
                }
            }
            _ => {}
        }
    }
    Ok(Some(node))
}

fn initializer(bytes: &[u8]) -> Result<(&[u8], Initializer<'_>), SplitError> {
    let mut name: &[u8] = &[];
    let mut found = Initializer {
        data_type: 0,
        dims: Vec::new(),
        raw: None,
    };
    for f in fields(bytes) {
        let f: Field = f?;
        match f.number {
            TENSOR_NAME => name = f.payload,
            TENSOR_DATA_TYPE => found.data_type = f.varint,
            // Repeated int64: one varint per field, or packed into one payload.
            TENSOR_DIMS if f.wire == WireType::Varint => found.dims.push(f.varint),
            TENSOR_DIMS => {
                let mut packed = f.payload;
                while !packed.is_empty() {
                    let dim = prost::encoding::decode_varint(&mut packed)
                        .map_err(|e| SplitError::Malformed(e.to_string()))?;
                    found.dims.push(dim);
                }
            }
            TENSOR_RAW_DATA => found.raw = Some(f.payload),
            _ => {}
        }
    }
    Ok((name, found))
}

/// `weight × scale` as the `Mul` node computes it, or `None` unless the weight is int8/uint8
/// raw bytes, the scale fp32 raw bytes, both as long as their shapes say, and the scale
/// broadcasts to the weight's shape (numpy rules, so the product keeps the weight's shape).
fn folded(weight: &Initializer, scale: &Initializer) -> Option<Vec<f32>> {
    let (weight_raw, scale_raw) = (weight.raw?, scale.raw?);
    let count = |dims: &[u64]| {
        dims.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
    };
    let (n, scales) = (count(&weight.dims)?, count(&scale.dims)?);
    let widen: fn(u8) -> f32 = match weight.data_type {
        INT8 => |b| f32::from(b as i8),
        UINT8 => f32::from,
        _ => return None,
    };
    if scale.data_type != FLOAT
        || weight_raw.len() != n
        || scale_raw.len() != scales.checked_mul(4)?
        || scale.dims.len() > weight.dims.len()
    {
        return None;
    }
    let scale_values: Vec<f32> = scale_raw
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    // Each weight axis's step through the scale: 0 where the scale is broadcast along it.
    let rank = weight.dims.len();
    let offset = rank - scale.dims.len();
    let mut steps = vec![0usize; rank];
    let mut step = 1usize;
    for axis in (0..rank).rev() {
        let Some(scale_axis) = axis.checked_sub(offset) else {
            break;
        };
        let d = scale.dims[scale_axis];
        if d == weight.dims[axis] {
            steps[axis] = step;
        } else if d != 1 {
            return None;
        }
        step *= usize::try_from(d).ok()?;
    }
    let dims: Vec<usize> = weight
        .dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let mut index = vec![0usize; rank];
    let mut at = 0usize;
    let mut out = Vec::with_capacity(n);
    for &w in weight_raw {
        out.push(widen(w) * scale_values[at]);
        // Advance the multi-index like an odometer, moving the scale position with it.
        for axis in (0..rank).rev() {
            index[axis] += 1;
            at += steps[axis];
            if index[axis] < dims[axis] {
                break;
            }
            at -= steps[axis] * dims[axis];
            index[axis] = 0;
        }
    }
    Some(out)
}

/// An fp32 initializer named `name`, its values inline.
fn tensor(name: &[u8], dims: &[u64], values: &[f32]) -> Vec<u8> {
    let mut t = Vec::with_capacity(values.len() * 4 + 64);
    for &d in dims {
        encode_key(TENSOR_DIMS, WireType::Varint, &mut t);
        encode_varint(d, &mut t);
    }
    encode_key(TENSOR_DATA_TYPE, WireType::Varint, &mut t);
    encode_varint(FLOAT, &mut t);
    put_bytes(TENSOR_NAME, name, &mut t);
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    put_bytes(TENSOR_RAW_DATA, &raw, &mut t);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(inputs: &[&str], outputs: &[&str], op: &str, to: Option<u64>) -> Vec<u8> {
        let mut n = Vec::new();
        for i in inputs {
            put_bytes(NODE_INPUT, i.as_bytes(), &mut n);
        }
        for o in outputs {
            put_bytes(NODE_OUTPUT, o.as_bytes(), &mut n);
        }
        put_bytes(NODE_OP_TYPE, op.as_bytes(), &mut n);
        if let Some(to) = to {
            let mut a = Vec::new();
            put_bytes(ATTRIBUTE_NAME, b"to", &mut a);
            encode_key(ATTRIBUTE_INT, WireType::Varint, &mut a);
            encode_varint(to, &mut a);
            put_bytes(NODE_ATTRIBUTE, &a, &mut n);
        }
        n
    }

    fn cast(input: &str, output: &str) -> Vec<u8> {
        node(&[input], &[output], "Cast", Some(FLOAT))
    }

    fn initializer(name: &str, data_type: u64, dims: &[u64], raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        // Packed dims, as some writers emit them.
        let mut packed = Vec::new();
        for &d in dims {
            encode_varint(d, &mut packed);
        }
        put_bytes(TENSOR_DIMS, &packed, &mut t);
        encode_key(TENSOR_DATA_TYPE, WireType::Varint, &mut t);
        encode_varint(data_type, &mut t);
        put_bytes(TENSOR_NAME, name.as_bytes(), &mut t);
        put_bytes(TENSOR_RAW_DATA, raw, &mut t);
        t
    }

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn graph(nodes: &[Vec<u8>], initializers: &[Vec<u8>], inputs: &[&str]) -> Vec<u8> {
        let mut g = Vec::new();
        for n in nodes {
            put_bytes(GRAPH_NODE, n, &mut g);
        }
        for t in initializers {
            put_bytes(GRAPH_INITIALIZER, t, &mut g);
        }
        for name in inputs.iter().chain(&["out"]) {
            let mut v = Vec::new();
            put_bytes(VALUE_INFO_NAME, name.as_bytes(), &mut v);
            let number = if *name == "out" {
                GRAPH_OUTPUT
            } else {
                GRAPH_INPUT
            };
            put_bytes(number, &v, &mut g);
        }
        g
    }

    /// The weights and scales of the tests: `w` int8 [2, 3] with a per-row scale, `u` uint8
    /// [2, 3] with a per-column scale written as Mul's first operand.
    fn weights() -> Vec<Vec<u8>> {
        let w: Vec<u8> = [-128i8, -1, 0, 1, 2, 127]
            .iter()
            .map(|&v| v as u8)
            .collect();
        vec![
            initializer("w", INT8, &[2, 3], &w),
            initializer("w_scale", FLOAT, &[2, 1], &floats(&[0.5, 0.1])),
            initializer("u", UINT8, &[2, 3], &[0, 1, 2, 200, 254, 255]),
            initializer("u_scale", FLOAT, &[3], &floats(&[1.0, 0.3, 0.7])),
        ]
    }

    fn added(folding: &Folding) -> Vec<(Vec<u8>, Vec<u64>, Vec<f32>)> {
        folding
            .added
            .iter()
            .map(|t| {
                let (name, found) = super::initializer(t).unwrap();
                assert_eq!(found.data_type, FLOAT);
                let values = found
                    .raw
                    .unwrap()
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                (name.to_vec(), found.dims, values)
            })
            .collect()
    }

    #[test]
    fn an_int8_weight_behind_cast_and_mul_becomes_the_floats_it_computes() {
        let g = graph(
            &[
                cast("w", "w_f"),
                node(&["w_f", "w_scale"], &["w_deq"], "Mul", None),
                cast("u", "u_f"),
                node(&["u_scale", "u_f"], &["u_deq"], "Mul", None),
                node(&["x", "w_deq"], &["h"], "MatMul", None),
                node(&["h", "u_deq"], &["out"], "MatMul", None),
            ],
            &weights(),
            &["x"],
        );
        let folding = plan(&g).unwrap();
        assert_eq!(folding.removed_nodes, HashSet::from([0, 1, 2, 3]));
        let dropped: HashSet<&[u8]> = HashSet::from([&b"w"[..], b"w_scale", b"u", b"u_scale"]);
        assert_eq!(folding.dropped, dropped);
        let w_row = |v: [f32; 3], s: f32| v.map(|x| x * s);
        let [a, b] = [
            w_row([-128.0, -1.0, 0.0], 0.5),
            w_row([1.0, 2.0, 127.0], 0.1),
        ];
        assert_eq!(
            added(&folding),
            vec![
                (
                    b"w_deq".to_vec(),
                    vec![2, 3],
                    [a.as_slice(), b.as_slice()].concat()
                ),
                (
                    b"u_deq".to_vec(),
                    vec![2, 3],
                    vec![0.0, 0.3, 2.0 * 0.7, 200.0, 254.0 * 0.3, 255.0 * 0.7]
                ),
            ]
        );
    }

    /// Runs the whole rewrite over a model of IR `version` holding `graph`: the nodes left,
    /// and the data file's bytes.
    fn rewritten(version: u64, graph: &[u8]) -> (usize, Vec<u8>) {
        let mut model = Vec::new();
        encode_key(1, WireType::Varint, &mut model);
        encode_varint(version, &mut model);
        put_bytes(7, graph, &mut model);
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("data")).unwrap();
        let mut data = super::super::DataWriter {
            out: std::io::BufWriter::new(&file),
            len: 0,
            moved: 0,
        };
        let out = super::super::rewrite(&model, &mut data).unwrap();
        std::io::Write::flush(&mut data.out).unwrap();
        drop(data);
        let graph = fields(&out)
            .map(Result::unwrap)
            .find(|f| f.number == 7)
            .unwrap()
            .payload;
        let nodes = fields(graph)
            .map(Result::unwrap)
            .filter(|f| f.number == GRAPH_NODE)
            .count();
        (nodes, std::fs::read(dir.path().join("data")).unwrap())
    }

    #[test]
    fn the_split_writes_the_folded_floats_and_an_old_ir_keeps_its_casts() {
        // 2 × 600 int8 weights, so the folded floats (4,800 bytes) are moved to the data file.
        let w: Vec<u8> = (0..1200u32).map(|i| (i % 200) as u8).collect();
        let nodes = [
            cast("w", "w_f"),
            node(&["w_f", "w_scale"], &["w_deq"], "Mul", None),
            node(&["x", "w_deq"], &["out"], "MatMul", None),
        ];
        let g = graph(
            &nodes,
            &[
                initializer("w", INT8, &[2, 600], &w),
                initializer("w_scale", FLOAT, &[2, 1], &floats(&[0.5, 0.25])),
            ],
            &["x"],
        );
        let (left, data) = rewritten(8, &g);
        assert_eq!(left, 1, "only the MatMul is left");
        let expected: Vec<u8> = w
            .iter()
            .enumerate()
            .flat_map(|(i, &q)| {
                let scale = if i < 600 { 0.5 } else { 0.25 };
                (f32::from(q as i8) * scale).to_le_bytes()
            })
            .collect();
        assert_eq!(
            data, expected,
            "the folded floats, page-aligned at offset 0"
        );
        let (left, data) = rewritten(3, &g);
        assert_eq!(
            left, 3,
            "IR 3 needs every initializer among the inputs: nothing folds"
        );
        assert_eq!(data, w, "the int8 weight is moved as it is");
    }

    #[test]
    fn anything_short_of_the_exact_pattern_is_left_alone() {
        let folds = |nodes: &[Vec<u8>], inputs: &[&str]| {
            let g = graph(nodes, &weights(), inputs);
            let folding = plan(&g).unwrap();
            (folding.removed_nodes.len(), folding.added.len())
        };
        let mul = node(&["w_f", "w_scale"], &["w_deq"], "Mul", None);
        let reader = node(&["x", "w_deq"], &["out"], "MatMul", None);
        assert_eq!(
            folds(&[cast("w", "w_f"), mul.clone(), reader.clone()], &["x"]),
            (2, 1)
        );
        // The cast's floats are also read elsewhere.
        let second = node(&["w_f"], &["y"], "Relu", None);
        assert_eq!(
            folds(
                &[cast("w", "w_f"), mul.clone(), second, reader.clone()],
                &["x"]
            ),
            (0, 0)
        );
        // A caller may feed its own scale (or weight).
        assert_eq!(
            folds(
                &[cast("w", "w_f"), mul.clone(), reader.clone()],
                &["x", "w_scale"]
            ),
            (0, 0)
        );
        assert_eq!(
            folds(
                &[cast("w", "w_f"), mul.clone(), reader.clone()],
                &["x", "w"]
            ),
            (0, 0)
        );
        // A cast to another type, or a scale that does not broadcast to the weight's shape.
        let to_double = node(&["w"], &["w_f"], "Cast", Some(11));
        assert_eq!(
            folds(&[to_double, mul.clone(), reader.clone()], &["x"]),
            (0, 0)
        );
        let by_u = node(&["w_f", "u_scale"], &["w_deq"], "Mul", None);
        assert_eq!(
            folds(&[cast("w", "w_f"), by_u, reader.clone()], &["x"]),
            (2, 1)
        );
        let by_rows_of_three = node(&["w_f", "w_scale"], &["w_deq"], "Mul", None);
        let mismatched = graph(
            &[cast("w", "w_f"), by_rows_of_three, reader.clone()],
            &[
                weights()[0].clone(),
                initializer("w_scale", FLOAT, &[3, 1], &floats(&[1.0, 2.0, 3.0])),
            ],
            &["x"],
        );
        assert!(plan(&mismatched).unwrap().added.is_empty());
        // A subgraph could read any name: nothing is folded anywhere.
        let mut with_branch = node(&["c"], &["out2"], "If", None);
        let mut attribute = Vec::new();
        put_bytes(ATTRIBUTE_NAME, b"then_branch", &mut attribute);
        put_bytes(ATTRIBUTE_GRAPH, &graph(&[], &[], &[]), &mut attribute);
        put_bytes(NODE_ATTRIBUTE, &attribute, &mut with_branch);
        assert_eq!(
            folds(&[cast("w", "w_f"), mul, reader, with_branch], &["x"]),
            (0, 0)
        );
    }
}
