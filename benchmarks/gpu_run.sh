#!/usr/bin/env bash
# The GPU run of RESULTS.md, on a machine with one CUDA GPU, >= 16 cores and a Python that has
# torch (2.11 was used) but maybe not foilkit's other dependencies.
#
#   benchmarks/gpu_run.sh OUT_DIR [WHEEL_DIR] [check|dual]
#
# With ``check``, only a minute's check that everything loads and runs on the GPU (the smoke
# corpus, one item shape, the 2k retrieval pool). With ``dual``, only the dual encoders (ViT-B/32
# on every shape, ViT-L/14 on VITATECS) and the CPU ratios, no retrieval.
#
# WHEEL_DIR (optional) holds wheels to install first into a private site folder: av (its
# wheel bundles FFmpeg 8), torchcodec (the release paired with the machine's torch) and
# transformers (the version foilkit pins). torchcodec finds FFmpeg through the sonames that
# av's bundled libraries provide, linked under their plain names. Fetch them where pip works:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d WHEEL_DIR av==18.1.0 torchcodec==0.11.1 transformers==5.23.0
# Then, side by side on
# disjoint cores so neither disturbs the other's timings:
#   - cores 0-11: the full corpus on the GPU (GPU-sized models, 8 decoding threads);
#   - cores 12-13: the CPU ratios on 2 cores (tiny models): the quick corpus, then the full
#     corpus with the tiny CLIP;
#   - cores 14-15: the retrieval metric on CPU (20k: every method; 100k: the metric alone);
# then the retrieval metric on the GPU. Records and logs go to OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: benchmarks/gpu_run.sh OUT_DIR [WHEEL_DIR] [check|dual]}
WHEELS=${2:-}
MODE=${3:-full}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export FOILKIT_CACHE=${FOILKIT_CACHE:-/tmp/foilkit-cache} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

if [ -n "$WHEELS" ]; then
  SITE=/tmp/foilkit-site
  "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$SITE" "$WHEELS"/*.whl
  "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" .
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
  FFMPEG=/tmp/foilkit-ffmpeg
  mkdir -p "$FFMPEG"
  for lib in "$SITE"/av.libs/lib{avcodec,avformat,avutil,avdevice,avfilter,swscale,swresample}-*.so.*; do
    name=$(basename "$lib")                          # libavcodec-5e6b81c2.so.62.28.102
    soname="${name%%-*}.so.$(echo "${name#*.so.}" | cut -d. -f1)"  # libavcodec.so.62
    ln -sf "$lib" "$FFMPEG/$soname"
  done
  # the plain names first; their own dependencies keep their hashed names in av.libs
  export LD_LIBRARY_PATH="$FFMPEG:$SITE/av.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
"$PY" -c "import torch, torchcodec.decoders; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"

if [ "$MODE" = check ]; then
  "$PY" benchmarks/scoring_speed.py --smoke --device cuda --shapes vitatecs \
    --models clip-vit-b32,blip-itm-base,llava-next-video-tiny --json "$OUT/check.json"
  "$PY" benchmarks/retrieval_speed.py --quick --device cpu,cuda
  exit
fi

# generate both corpora first (all cores), so neither timed run competes with the generation
"$PY" -c "
import sys; sys.path.insert(0, 'benchmarks')
from corpus import SIZES, corpus
for size in ('quick', 'full'):
    corpus(SIZES[size])
"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" || true

# the naive loop reuses nothing, so its rate is taken on the first 120 items of each shape
SCORING="$PY benchmarks/scoring_speed.py --naive-items 120"
GPU="--device cuda --workers 8 --batch-size 32 --profile $OUT/profiles"
RETRIEVAL="$PY benchmarks/retrieval_speed.py"
{
  taskset -c 0-11 $SCORING $GPU --models clip-vit-b32 --json "$OUT/scoring_gpu_b32.json" \
    || echo "exit status $?"
  if [ "$MODE" = dual ]; then
    taskset -c 0-11 $SCORING $GPU --models clip-vit-l14 --shapes vitatecs \
      --json "$OUT/scoring_gpu_l14.json" || echo "exit status $?"
  else
    taskset -c 0-11 $SCORING $GPU --models clip-vit-l14 --json "$OUT/scoring_gpu_l14.json" \
      || echo "exit status $?"
    taskset -c 0-11 $SCORING $GPU --shapes vitatecs --models blip-itm-base,llava-next-video-tiny \
      --json "$OUT/scoring_gpu_pairs.json" || echo "exit status $?"
  fi
} > "$OUT/scoring_gpu.txt" 2>&1 &
GPU_RUN=$!
{
  taskset -c 12,13 $SCORING --quick --json "$OUT/scoring_cpu_quick.json" || echo "exit status $?"
  taskset -c 12,13 $SCORING --models clip-tiny --json "$OUT/scoring_cpu_full.json" \
    || echo "exit status $?"
} > "$OUT/scoring_cpu.txt" 2>&1 &
CPU_RUN=$!
if [ "$MODE" = dual ]; then
  wait "$GPU_RUN" "$CPU_RUN"
  exit
fi
{
  taskset -c 14,15 $RETRIEVAL --sizes 20000 --json "$OUT/retrieval_cpu_20k.json" || echo "exit status $?"
  taskset -c 14,15 $RETRIEVAL --sizes 100000 --methods retrieval_recall \
    --json "$OUT/retrieval_cpu_100k.json" || echo "exit status $?"
} > "$OUT/retrieval_cpu.txt" 2>&1 &
RETRIEVAL_CPU=$!
wait "$GPU_RUN"
taskset -c 0-11 $RETRIEVAL --device cuda --json "$OUT/retrieval_gpu.json" \
  > "$OUT/retrieval_gpu.txt" 2>&1 || echo "retrieval on the GPU: exit status $?"
wait "$CPU_RUN" "$RETRIEVAL_CPU"
