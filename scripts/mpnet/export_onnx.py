#!/usr/bin/env python3
"""Writes sentence-transformers all-mpnet-base-v2 (or any MPNet encoder checkpoint in
safetensors) as an fp32 ONNX graph, with numpy and onnx alone (no torch).

The graph is the encoder of Hugging Face's `MPNetModel`, which is what the checkpoint was
trained as:
  - embeddings: word + absolute position, no token types; positions count the real tokens
    from padding_idx + 1 (padding keeps padding_idx), then LayerNorm;
  - a T5-style relative position bias (bidirectional buckets over |i - j|, exact below 8,
    logarithmic up to 128), the same for every layer, added to the attention scores;
  - post-LN transformer layers with exact (erf) GELU.

Inputs `input_ids` and `attention_mask` (int64 [batch, seq]); output `last_hidden_state`
(float32 [batch, seq, hidden]). ragdown mean-pools and normalises it.

usage: export_onnx.py CHECKPOINT_DIR OUT_DIR
  writes OUT_DIR/model.onnx, and copies tokenizer.json and config.json beside it.
"""
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

# MPNetEmbeddings.padding_idx; the bucket count and reach are MPNetEncoder's.
PADDING_IDX = 1
BUCKETS = 32
REACH = 128


def bucket_of(offset):
    """The relative-attention bucket of `offset` = key position - query position, in float32
    as the checkpoint's training code computed it (its truncation decides the edges)."""
    offset = np.asarray(offset, dtype=np.int64)
    half = BUCKETS // 2
    exact = half // 2
    base = np.where(offset > 0, half, 0)
    distance = np.abs(offset)
    scaled = np.log(np.maximum(distance, 1).astype(np.float32) / np.float32(exact))
    scaled = scaled / np.float32(math.log(REACH / exact)) * np.float32(half - exact)
    far = np.minimum(exact + scaled.astype(np.int64), half - 1)
    return base + np.where(distance < exact, distance, far)


class Graph:
    """Nodes and initializers of one ONNX graph, with fresh names for intermediate values."""

    def __init__(self):
        self.nodes, self.weights, self.count = [], [], 0

    def const(self, name, value, dtype=np.float32):
        self.weights.append(numpy_helper.from_array(np.array(value, dtype=dtype, order="C"), name))
        return name

    def op(self, kind, *inputs, **attrs):
        self.count += 1
        out = f"{kind.lower()}{self.count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out


def export(checkpoint: Path, out: Path):
    config = json.loads((checkpoint / "config.json").read_text())
    tensors = load_file(str(checkpoint / "model.safetensors"))
    tensors = {k.removeprefix("mpnet."): v.astype(np.float32) for k, v in tensors.items()}
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    layers, eps = config["num_hidden_layers"], config.get("layer_norm_eps", 1e-12)
    positions = config["max_position_embeddings"]
    if config.get("hidden_act", "gelu") != "gelu" or config.get("pad_token_id", PADDING_IDX) != PADDING_IDX:
        sys.exit("not an MPNet checkpoint this exporter knows (gelu activation, padding id 1)")
    head_dim = hidden // heads
    g = Graph()

    def linear(x, name):
        weight = g.const(f"{name}.wt", tensors[f"{name}.weight"].T)
        return g.op("Add", g.op("MatMul", x, weight), g.const(f"{name}.b", tensors[f"{name}.bias"]))

    def norm(x, name):
        return g.op("LayerNormalization", x, g.const(f"{name}.w", tensors[f"{name}.weight"]),
                    g.const(f"{name}.b", tensors[f"{name}.bias"]), axis=-1, epsilon=eps)

    # Positions from the mask: real tokens count 2, 3, …; padding stays at PADDING_IDX.
    mask = "attention_mask"
    counted = g.op("Mul", g.op("CumSum", mask, g.const("axis1", 1, np.int64)), mask)
    position_ids = g.op("Add", counted, g.const("padding_idx", PADDING_IDX, np.int64))
    words = g.op("Gather", g.const("word_table", tensors["embeddings.word_embeddings.weight"]), "input_ids")
    places = g.op("Gather", g.const("position_table", tensors["embeddings.position_embeddings.weight"]), position_ids)
    x = norm(g.op("Add", words, places), "embeddings.LayerNorm")

    # The relative bias for every pair of positions the model can hold, [heads, P, P], cut
    # to the batch's length: it depends on positions alone, so it is made here once.
    span = positions - PADDING_IDX - 1
    grid = np.arange(span)
    table = tensors["encoder.relative_attention_bias.weight"][bucket_of(grid[None, :] - grid[:, None])]
    full_bias = g.const("relative_bias", np.transpose(table, (2, 0, 1)))
    length = g.op("Unsqueeze", g.op("Gather", g.op("Shape", "input_ids"), g.const("one", 1, np.int64), axis=0),
                  g.const("axis0", [0], np.int64))
    zero = g.const("zero", [0], np.int64)
    bias = g.op("Slice", full_bias, zero, length, g.const("slice_axis1", [1], np.int64))
    bias = g.op("Slice", bias, zero, length, g.const("slice_axis2", [2], np.int64))
    # Padding keys: a large negative score, so softmax gives them no weight.
    padding = g.op("Sub", g.const("one_f", 1.0), g.op("Cast", mask, to=TensorProto.FLOAT))
    padding = g.op("Mul", g.op("Unsqueeze", padding, g.const("axes12", [1, 2], np.int64)),
                   g.const("neg", np.finfo(np.float32).min))
    bias = g.op("Add", bias, padding)  # [batch, heads, seq, seq]

    split_shape = g.const("split_shape", [0, 0, heads, head_dim], np.int64)
    merge_shape = g.const("merge_shape", [0, 0, hidden], np.int64)
    scale = g.const("scale", 1.0 / math.sqrt(head_dim))
    inv_sqrt2, half, one = g.const("inv_sqrt2", 1.0 / math.sqrt(2.0)), g.const("half", 0.5), "one_f"

    def split(t):
        return g.op("Transpose", g.op("Reshape", t, split_shape), perm=[0, 2, 1, 3])

    for i in range(layers):
        at = f"encoder.layer.{i}"
        q = split(linear(x, f"{at}.attention.attn.q"))
        k = g.op("Transpose", g.op("Reshape", linear(x, f"{at}.attention.attn.k"), split_shape), perm=[0, 2, 3, 1])
        v = split(linear(x, f"{at}.attention.attn.v"))
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        mixed = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        mixed = g.op("Reshape", g.op("Transpose", mixed, perm=[0, 2, 1, 3]), merge_shape)
        x = norm(g.op("Add", linear(mixed, f"{at}.attention.attn.o"), x), f"{at}.attention.LayerNorm")
        inner = linear(x, f"{at}.intermediate.dense")
        erf = g.op("Erf", g.op("Mul", inner, inv_sqrt2))
        gelu = g.op("Mul", g.op("Mul", inner, half), g.op("Add", erf, one))
        x = norm(g.op("Add", linear(gelu, f"{at}.output.dense"), x), f"{at}.output.LayerNorm")
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
           for n in ("input_ids", "attention_mask")]
    result = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])]
    model = helper.make_model(helper.make_graph(g.nodes, "mpnet_encoder", ids, result, g.weights),
                              opset_imports=[helper.make_opsetid("", 17)], producer_name="ragdown-mpnet-export")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=False)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out / "model.onnx"))
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(checkpoint / name, out / name)
    print(f"wrote {out / 'model.onnx'}: {layers} layers, {hidden} wide, {heads} heads", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    export(Path(sys.argv[1]), Path(sys.argv[2]))
