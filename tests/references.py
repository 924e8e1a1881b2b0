"""The references' own scoring code, imported from ``../shared/references`` beside foilkit.

``../shared/references`` (see its README.md) holds ViLMA's and VITATECS' scoring code
unchanged; tests import it from there, never from a copy, and skip cleanly when it is absent
(``FOILKIT_REFERENCES`` points elsewhere). The code runs on this stack with the smallest shims,
each standing in for one thing the stack lacks:

``torchvision.io.read_video`` (ViLMA's ``vl_bench/data.py``)
    torchvision 0.29 has no ``read_video``; ViLMA's ``spec-file.txt`` pins torchvision 0.14.1,
    whose ``read_video`` is pure Python over PyAV (``torchvision/io/video.py``). That file, from
    the 0.14.1 wheel on PyPI (``./dev.sh`` extracts it: :data:`TORCHVISION_VIDEO`), runs
    unchanged; its two package-relative imports get stubs (API-usage logging; the C++ backend's
    ``default_timebase``, only read on that backend's path), and PyAV 18's ``FFmpegError`` stands
    in for ``av.AVError``, the name PyAV <= 13 gave it.
``cv2`` (VITATECS' ``dataloaders/rawvideo_util.py``)
    imported at the top for ``RawVideoExtractorCV2``, which the evaluation does not run: an
    empty module. ``decord`` (``RawVideoExtractorDecord``, which it runs) is the real one, from
    PyPI (``requirements.txt``).

lmms-eval (PyPI) pins ``av<16``, so it runs in a virtualenv of its own that ``./dev.sh`` makes
(:data:`LMMS_EVAL_PYTHON`), through ``tests/lmms_eval_loglikelihood.py`` and
``tests/lmms_eval_cli.py`` (their shims are listed there); tests skip cleanly without it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
REFERENCES = Path(os.environ.get("FOILKIT_REFERENCES", REPO_ROOT.parent / "shared" / "references"))
#: torchvision 0.14.1's ``torchvision/io/video.py``, as ``./dev.sh`` extracts it from the wheel.
TORCHVISION_VIDEO = Path(
    os.environ.get(
        "FOILKIT_TORCHVISION_0141_VIDEO",
        Path(sys.prefix) / "share" / "foilkit-references" / "torchvision-0.14.1" / "video.py",
    )
)

#: The python of the lmms-eval virtualenv ``./dev.sh`` makes (``ensure_lmms_eval``).
LMMS_EVAL_PYTHON = Path(
    os.environ.get(
        "FOILKIT_LMMS_EVAL_PYTHON",
        Path(sys.prefix) / "share" / "foilkit-references" / "lmms-eval" / "bin" / "python",
    )
)


def reference_dir(name: str) -> Path:
    """``../shared/references/<name>``, or a skip when it is absent."""
    path = REFERENCES / name
    if not path.is_dir():
        pytest.skip(f"{path} (the references' own code, ../shared/references) is not present")
    return path


class _PyAV(types.ModuleType):
    """PyAV as torchvision 0.14.1 sees it: ``AVError`` is PyAV 18's ``FFmpegError``."""

    def __init__(self) -> None:
        import av

        super().__init__("av")
        self._av = av
        self.AVError = av.FFmpegError

    def __getattr__(self, name: str) -> Any:
        return getattr(self._av, name)


def torchvision_0141_read_video() -> Any:
    """torchvision 0.14.1's ``read_video``, or a skip when its file was not extracted."""
    if not TORCHVISION_VIDEO.is_file():
        pytest.skip(
            f"{TORCHVISION_VIDEO} (torchvision 0.14.1's io/video.py, extracted by ./dev.sh) is "
            "not present"
        )
    name = "_torchvision_0141"
    if f"{name}.io.video" in sys.modules:
        return sys.modules[f"{name}.io.video"].read_video
    package, io = types.ModuleType(name), types.ModuleType(f"{name}.io")
    package.__path__, io.__path__ = [], []
    utils = types.ModuleType(f"{name}.utils")
    utils._log_api_usage_once = lambda obj: None
    video_opt = types.ModuleType(f"{name}.io._video_opt")
    video_opt.default_timebase = Fraction(0, 1)
    io._video_opt = video_opt
    for module in (package, io, utils, video_opt):
        sys.modules[module.__name__] = module
    spec = importlib.util.spec_from_file_location(f"{name}.io.video", TORCHVISION_VIDEO)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.av = _PyAV()
    return module.read_video


def lmms_eval_loglikelihood(request: dict[str, Any]) -> dict[str, Any]:
    """lmms-eval's own ``loglikelihood`` (``tests/lmms_eval_loglikelihood.py``, which documents
    ``request`` and the answer) run by the lmms-eval virtualenv's python, or a skip when
    ``./dev.sh`` could not make that virtualenv (PyPI unreachable)."""
    if not LMMS_EVAL_PYTHON.is_file():
        pytest.skip(
            f"{LMMS_EVAL_PYTHON} (the lmms-eval virtualenv ./dev.sh makes: lmms-eval pins av<16, "
            "foilkit PyAV 18) is not present"
        )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "request.json"
        path.write_text(json.dumps(request))
        done = subprocess.run(
            [str(LMMS_EVAL_PYTHON), str(REPO_ROOT / "tests" / "lmms_eval_loglikelihood.py"), path],
            capture_output=True,
            text=True,
            timeout=600,
        )
    if done.returncode != 0:
        raise AssertionError(f"lmms-eval's loglikelihood failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def lmms_eval_python(
    args: list[str], *, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """The lmms-eval virtualenv's python run with ``args`` in ``cwd``, ``env`` added to this
    process's environment, or a skip when ``./dev.sh`` could not make that virtualenv."""
    if not LMMS_EVAL_PYTHON.is_file():
        pytest.skip(
            f"{LMMS_EVAL_PYTHON} (the lmms-eval virtualenv ./dev.sh makes: lmms-eval pins av<16, "
            "foilkit PyAV 18) is not present"
        )
    return subprocess.run(
        [str(LMMS_EVAL_PYTHON), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def lmms_eval_cli(
    args: list[str], *, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """lmms-eval's own command line (``tests/lmms_eval_cli.py``, which documents its one shim)
    with ``args``: :func:`lmms_eval_python`."""
    return lmms_eval_python(
        [str(REPO_ROOT / "tests" / "lmms_eval_cli.py"), *args], cwd=cwd, env=env
    )


@contextlib.contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def vilma_module(name: str) -> Any:
    """A module of ViLMA's code (``vl_bench.data``, ``models.text.run``, ...), imported from
    ``../shared/references/vilma`` with torchvision 0.14.1's ``read_video``."""
    root = reference_dir("vilma")
    read_video = torchvision_0141_read_video()
    if name.startswith("models."):
        pytest.importorskip("click", reason="ViLMA's scripts are click commands")
    import torchvision.io

    with _on_path(root):
        torchvision.io.read_video = read_video  # what vl_bench.data imports, for this import
        try:
            return importlib.import_module(name)
        finally:
            del torchvision.io.read_video


def vitatecs_module(name: str) -> Any:
    """A module of VITATECS' CLIP4Clip evaluation (``dataloaders.rawvideo_util``, ...), imported
    from ``../shared/references/vitatecs/X-CLIP``."""
    root = reference_dir("vitatecs") / "X-CLIP"
    pytest.importorskip("decord", reason="decord (requirements.txt) is not installed")
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # RawVideoExtractorCV2 only
    with _on_path(root):
        return importlib.import_module(name)


# --- Vinoground: foilkit's port of its scorers ----------------------------------------------------
# Vinoground/Vinoground@1543a2a publishes get_score_all.py (A/B answers of video LLMs -> text,
# video and group scores per category) and eval/videoclip.py (the four scores of a dual encoder
# compared with >). Neither is in ../shared/references, so these are ports, line by line, with
# the scorer's two bugs fixed as intended: `if "qwen" or "ma-lmm" in model` (always true: every
# response is read as response[0]) reads a list response's first element and a text response
# as it is; the response files are passed in, whatever name an `--nframes` run saved them under.


def vinoground_categories(csv_row: list[str]) -> list[str]:
    """get_score_all.py: ``["all", vino[i][1]] + vino[i][2].split(';')``, a trailing empty name
    dropped (the csv row as ``csv.reader`` gives it: index, major, minor, ...)."""
    categories = ["all", csv_row[1]]
    categories.extend(csv_row[2].split(";"))
    if categories[-1] == "":
        categories.pop(-1)
    return categories


def _vinoground_table(outcomes, csv_rows) -> dict[str, tuple[float, float, float]]:
    """get_score_all.py's tally: per category, the text, video and group scores in percent."""
    total, text, video, group = {}, {}, {}, {}
    for i, (text_right, video_right) in enumerate(outcomes):
        for category in vinoground_categories(csv_rows[i]):
            if category not in total:
                total[category] = text[category] = video[category] = group[category] = 0
            total[category] += 1
            text[category] += bool(text_right)
            video[category] += bool(video_right)
            group[category] += bool(text_right and video_right)
    return {
        category: (
            text[category] / total[category] * 100,
            video[category] / total[category] * 100,
            group[category] / total[category] * 100,
        )
        for category in total
    }


def vinoground_videoclip_scores(
    blocks, csv_rows, video_blocks=None
) -> dict[str, tuple[float, float, float]]:
    """eval/videoclip.py's comparisons of ``output00 .. output11`` (``blocks[i][v][c]``: video v
    of pair i, 0 = pos, against caption c), tallied per category as get_score_all.py does; the
    video score's comparisons in ``video_blocks`` where a separate question gave those scores
    (a video LLM's video-score question)."""
    outcomes = []
    for block, video_block in zip(blocks, video_blocks or blocks, strict=True):
        output00, output01 = block[0]
        output10, output11 = block[1]
        text_correct = output00 > output01 and output11 > output10
        output00, output01 = video_block[0]
        output10, output11 = video_block[1]
        video_correct = output00 > output10 and output11 > output01
        outcomes.append((text_correct, video_correct))
    return _vinoground_table(outcomes, csv_rows)


def vinoground_response_correct(response, gt: str) -> bool:
    """get_score_all.py's ``get_text_correct_wrong`` / ``get_video_correct_wrong`` on one
    response (the intended reading: a list response, as Qwen's and MA-LMM's scripts save it,
    by its first element; a text response as it is)."""
    if isinstance(response, list):
        response = response[0]
    return response[: len(gt)].lower() == gt.lower()


def vinoground_get_score_all(
    text_gt_data, video_gt_data, csv_rows, text_responses, video_responses
) -> dict[str, tuple[float, float, float]]:
    """get_score_all.py for one model: the GT lists of vinoground_textscore.json /
    vinoground_videoscore.json (pos then neg of each pair, in order), the csv rows, and the
    ``{"idx", "response"}`` records of the model's two response files."""
    text_pred = {item["idx"]: item["response"] for item in text_responses}
    video_pred = {item["idx"]: item["response"] for item in video_responses}

    def correct(pred, item) -> bool:
        response = pred.get(item["idx"])
        if response is None:  # the scorer's KeyError: the item counts, wrong
            return False
        return vinoground_response_correct(response, item["GT"])

    outcomes = []
    for i in range(len(text_gt_data) // 2):
        pos, neg = text_gt_data[2 * i], text_gt_data[2 * i + 1]
        text_right = correct(text_pred, pos) and correct(text_pred, neg)
        pos, neg = video_gt_data[2 * i], video_gt_data[2 * i + 1]
        video_right = correct(video_pred, pos) and correct(video_pred, neg)
        outcomes.append((text_right, video_right))
    return _vinoground_table(outcomes, csv_rows)


# --- ports of scorers that cannot be imported (scripts with argparse and prints at module level) --


def velociti_classic_vle(pos: list[float], neg: list[float]) -> tuple[float, int, int]:
    """katha-ai/VELOCITI@8d66ddb ``metrics.py`` ``classic_vle``, ported line for line."""
    cnt, tot = 0, len(pos)
    for i in range(len(pos)):
        if pos[i] > neg[i]:
            cnt += 1
    return (round(cnt / tot, 3), cnt, tot)


def velociti_strict_vle(pos: list[float], neg: list[float]) -> tuple[float, int, int]:
    """katha-ai/VELOCITI@8d66ddb ``metrics.py`` ``strict_vle``, ported line for line."""
    cnt, tot = 0, len(pos)
    for i in range(len(pos)):
        if pos[i] > 0.5 and neg[i] < 0.5:
            cnt += 1
    return (round(cnt / tot, 3), cnt, tot)


def temporalbench_qa_accuracy(
    questions: list[dict[str, Any]], preds: list[dict[str, Any]], data_json: str
) -> dict[str, Any]:
    """mu-cai/TemporalBench@62f88ab ``get_qa_acc.py``'s counting for one predictions file, ported
    line for line; what it prints is returned as ``(correct, total)`` pairs: ``binary``,
    ``multiple_binary``, and per dataset and (short files) per category the two again."""
    id2question = {q["idx"]: q for q in questions}
    correct_count = 0
    multiple_binary_qa_correct: dict[str, bool] = {}
    binary_qa_per_dataset: dict[str, list[bool]] = {}
    multiple_binary_qa_per_dataset: dict[str, dict[str, bool]] = {}
    binary_qa_per_category: dict[str, list[bool]] = {}
    multiple_binary_qa_per_category: dict[str, dict[str, bool]] = {}
    for pred in preds:
        idx = pred["idx"]
        gt = id2question[idx]["GT"]
        predict_correct = gt.lower() == pred["response"][0].lower()
        if predict_correct:
            correct_count += 1
        video_name = id2question[idx]["video_name"]
        if video_name not in multiple_binary_qa_correct:
            multiple_binary_qa_correct[video_name] = True
        if not predict_correct:
            multiple_binary_qa_correct[video_name] = False
        dataset = id2question[idx]["dataset"]
        if dataset not in binary_qa_per_dataset:
            binary_qa_per_dataset[dataset] = []
            multiple_binary_qa_per_dataset[dataset] = {}
        binary_qa_per_dataset[dataset].append(predict_correct)
        if video_name not in multiple_binary_qa_per_dataset[dataset]:
            multiple_binary_qa_per_dataset[dataset][video_name] = True
        if not predict_correct:
            multiple_binary_qa_per_dataset[dataset][video_name] = False
        if "short" in data_json:
            category = id2question[idx]["category"]
            if category not in binary_qa_per_category:
                binary_qa_per_category[category] = []
                multiple_binary_qa_per_category[category] = {}
            binary_qa_per_category[category].append(predict_correct)
            if video_name not in multiple_binary_qa_per_category[category]:
                multiple_binary_qa_per_category[category][video_name] = True
            if not predict_correct:
                multiple_binary_qa_per_category[category][video_name] = False

    def pair(flags: list[bool] | dict[str, bool]) -> tuple[int, int]:
        values = list(flags.values()) if isinstance(flags, dict) else flags
        return sum(1 for v in values if v), len(values)

    return {
        "binary": (correct_count, len(preds)),
        "multiple_binary": pair(multiple_binary_qa_correct),
        "dataset": {
            name: (pair(binary_qa_per_dataset[name]), pair(multiple_binary_qa_per_dataset[name]))
            for name in binary_qa_per_dataset
        },
        "category": {
            name: (pair(binary_qa_per_category[name]), pair(multiple_binary_qa_per_category[name]))
            for name in binary_qa_per_category
        },
    }


def temporalbench_response(caption_score: float, foil_score: float, label: str) -> str:
    """The answer a model would give from its two option scores: the true letter when the
    caption scores higher, the other when the negative does; a tie picks neither letter, so
    ``get_qa_acc.py`` counts it wrong (foilkit's ``ties="strict"``)."""
    if caption_score == foil_score:
        return "tie"
    return label if caption_score > foil_score else {"A": "B", "B": "A"}[label]
