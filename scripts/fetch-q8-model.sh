#!/usr/bin/env bash
# Builds all-MiniLM-L6-v2 with dynamically quantized int8 weights (MatMulInteger with
# DynamicQuantizeLinear, as ONNX Runtime's quantize_dynamic writes them), offline: the shape of
# the default model users download, which the test model is not — the test model keeps int8
# weights that a graph of Cast and Mul turns back into fp32 on every run when the session is
# not optimised (a one-shot process's quick build). For issue 15's one-edit figure with the
# model users get. Quantizes scripts/fetch-fp32-model.sh's output in FP32 (default: builds it
# in DEST/fp32 from the test model in TEST_MODEL, default .test-model) and writes
# DEST/models/minilm/{model.onnx,tokenizer.json,config.json}. Point ragdown at it with
# RAGDOWN_MODELS=DEST/models (the preset keeps its name). Idempotent.
set -euo pipefail
dest=${1:?usage: scripts/fetch-q8-model.sh DEST [FP32] [TEST_MODEL]}
mkdir -p "$dest/models/minilm"
dest=$(cd "$dest" && pwd)
fp32=${2:-$dest/fp32}
test_model=${3:-.test-model}
[ -f "$fp32/models/minilm/model.onnx" ] || "$(dirname "$0")/fetch-fp32-model.sh" "$fp32" "$test_model"
out="$dest/models/minilm"
if [ ! -f "$out/model.onnx" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet onnx==1.23.2 onnxruntime==1.32.0 numpy
  "$work/venv/bin/python" - "$fp32/models/minilm/model.onnx" "$out/model.onnx.part" <<'PY'
import sys
from onnxruntime.quantization import QuantType, quantize_dynamic
quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QUInt8)
PY
  mv "$out/model.onnx.part" "$out/model.onnx"
fi
cp "$fp32/models/minilm/tokenizer.json" "$fp32/models/minilm/config.json" "$out/"
echo "RAGDOWN_MODELS=$dest/models"
