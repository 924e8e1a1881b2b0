"""``foilkit import``: score answers a model gave outside foilkit, as a foilkit run.

Researchers have answers foilkit did not generate: a benchmark's published model outputs
(TempCompass' ``predictions/<model>/<task>.json``), or their own runs of another harness. An
import reads them, matches each to the benchmark's row it answers by the item's own fields
(never by position), reads each answer with the benchmark's paper parser (as ``generate`` mode
reads one: :func:`foilkit.scorers.generate.read_answers`), and writes an ordinary run folder
(``results.json``, ``scores/<config>.parquet``, ``report.md``) with the metrics, intervals and
coverage of a foilkit run; ``report``, ``compare``, ``leaderboard`` and ``push-results`` read it
as any other.

Sources (a file, or a folder of files; the format of each detected from its content):

- ``tempcompass-predictions``: TempCompass' published layout, ``{video id: {aspect: [{"question",
  "answer", "prediction"}]}}``, its task from the file name (``multi-choice.json``); an item is
  the row of that video, aspect and question.
- ``lmms-eval-samples``: lmms-eval 0.7's ``--log_samples`` files of the TempCompass, VITATECS,
  TemporalBench, TOMATO and Vinoground tasks (:data:`LMMS_EVAL_TASKS`); an item is the row its
  document names (:data:`KEYINGS`), its recorded prompt the request's text (``input``). lmms-eval
  0.7.3 writes the document itself out of the file: its fields are read where the task's
  ``process_results`` logged them beside the answer, or from ``doc`` where a file keeps it
  (:func:`_sample_key`).
- ``jsonl``: one ``{"id": ..., "answer": ...}`` per line (``prompt``, optional: the question the
  model was asked, compared with foilkit's ``prompt`` for the row), for any benchmark.

How each source names rows is a :class:`Keying` (:data:`KEYINGS`).

Every row is accounted for: a row no answer reaches fails with the cause ``no imported answer``
(counted in the coverage, listed in ``scores``' ``error`` column), and an answer naming an item
the benchmark does not have is an error naming the file and line. A row whose recorded prompt
differs from foilkit's is flagged (``imported_prompt_differs``). The run record says where the
answers came from (file, sha256), that foilkit did not run the model, and which parser read them
(each config's ``score.adapter``, :data:`IMPORTED`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from foilkit.answers import LETTERS
from foilkit.builders import get_benchmark
from foilkit.builders.tomato import REASONING_TYPES as TOMATO_REASONING_TYPES
from foilkit.builders.tomato.answers import lmms_eval_tomato_prompt, read_lmms_eval_tomato_prompt
from foilkit.builders.vinoground.answers import VIDEO_QUESTION, shown_captions, text_question
from foilkit.builders.vitatecs import ASPECTS as VITATECS_ASPECTS
from foilkit.builders.vitatecs.answers import (
    lmms_eval_question,
    lmms_eval_vitatecs_order,
    lmms_eval_vitatecs_question,
)
from foilkit.errors import UserError
from foilkit.evaluation import (
    compute_metrics,
    load_benchmark_split,
    model_label,
    run_invocation,
)
from foilkit.folders import RUN, check_folder, claim_folder, replace_folder
from foilkit.report import write_run_report
from foilkit.run import UNITS, Bootstrap, ConfigResults, Coverage, RunFolder, RunResults
from foilkit.scorers.record import ScoringRun, now

#: The adapter name an imported run's records carry: no foilkit adapter scored it.
IMPORTED = "imported"
#: Who ran the model of an imported run.
RUN_BY = "outside foilkit"
#: The failure cause of a row no imported answer reaches.
NO_ANSWER = "no imported answer"
#: The failure cause of rows an answer names together (TOMATO: the same question and options on
#: several videos of one kind, where lmms-eval's saved sample names no video): not guessed.
AMBIGUOUS = "imported answer names several rows"
#: TempCompass' published task files by stem -> foilkit config (``multi-choice``: ``multi_choice``).
_TEMPCOMPASS_TASKS = {
    stem: stem.replace("-", "_")
    for stem in ("multi-choice", "yes_no", "caption_matching", "captioning")
}


def is_imported(results: RunResults) -> bool:
    """Whether ``results`` is an imported run (a model foilkit did not run)."""
    return any(
        record.adapter_name == IMPORTED
        for entry in results.configs.values()
        for record in entry.records()
    )


class AnswerFileError(UserError, ValueError):
    """An answer file foilkit cannot import; the message names the file and line."""


@dataclass(frozen=True)
class Imported:
    """One imported answer: the config it answers, how it names its item (``key``, in the
    naming ``keyed``, a :data:`KEYINGS` name), the answer, the prompt recorded beside it
    (``None``: none), and where it was read (``file:line``); where an item is asked several
    questions (:attr:`Keying.parts`), the one it answers (``part``), and the fields its task
    logged beside it that foilkit checks against the row (``logged``)."""

    config: str | None
    key: tuple[Any, ...]
    answer: str | None
    prompt: str | None
    where: str
    keyed: str = "id"
    part: str = ""
    logged: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Keying:
    """How a source names a benchmark's rows: the ``benchmark`` it names (``None``: any), the
    row ``columns`` it reads, the key of a ``row``, and, where the source asked a question of
    its own (lmms-eval's VITATECS order), the prompt and the labels of the row's ``(caption,
    *foils)`` as it asked them (``asked``; ``None``: the row's own ``prompt`` and labels), and
    the questions each row is asked, one answer each (``parts``; lmms-eval's Vinoground: the
    text and video questions of the pair's two sides)."""

    benchmark: str | None
    columns: tuple[str, ...]
    row: Callable[[Mapping[str, Any]], tuple[Any, ...]]
    asked: Callable[[Mapping[str, Any]], tuple[str, tuple[str, ...]]] | None = None
    parts: tuple[str, ...] = ("",)


def _vitatecs_shown(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A VITATECS row's ``(caption, counterfactual)`` in the order lmms-eval shows them."""
    texts = (row["caption"], *row["foils"])
    return tuple(texts[i] for i in lmms_eval_vitatecs_order(*texts))


def _vitatecs_asked(row: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """lmms-eval's ``vitatecs`` prompt for ``row`` (question and ``post_prompt``) and the
    letters it gives the caption and the counterfactual."""
    order = lmms_eval_vitatecs_order(row["caption"], *row["foils"])
    return lmms_eval_question(_vitatecs_shown(row)), tuple(LETTERS[order.index(i)] for i in (0, 1))


def _temporalbench_asked(row: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """lmms-eval's ``temporalbench_short_qa`` prompt for ``row`` (the published question, as
    ``doc_to_text`` gives it) and the published letters of the caption and the negative."""
    return row["question"], (row["label"], "B" if row["label"] == "A" else "A")


def _tomato_asked(row: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """lmms-eval's ``tomato`` prompt for ``row`` (its options in the published order, lettered
    as TOMATO letters them) and the letters of the caption and the foils."""
    labels = (row["caption_answer"], *row["foil_answers"])
    return lmms_eval_tomato_prompt(row["question"], row["options"]), labels


def _tomato_question(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A TOMATO row's reasoning and demonstration type, question and options."""
    return (
        row["reasoning_type"],
        row["demonstration_type"],
        row["question"],
        tuple(row["options"]),
    )


#: lmms-eval's Vinoground questions of a pair: the text question about each video (which
#: caption it shows) and the video question about each caption (which segment of the joined
#: video shows it), by the ``<side>_<question type>`` of its documents' ``index``.
VINOGROUND_PARTS = ("pos_text", "neg_text", "pos_video", "neg_video")

#: The namings of rows, by name: a row's ``id`` (JSONL), TempCompass' video, aspect and question
#: (its published predictions and lmms-eval's ``tempcompass_*`` tasks), lmms-eval's
#: ``vitatecs_*`` tasks' source dataset, video and question (the options in lmms-eval's order),
#: lmms-eval's ``temporalbench_short_qa`` documents' ``idx`` (foilkit's row ``id``), its
#: ``tomato`` documents' reasoning and demonstration type, question and options (with the video
#: where a sample keeps its document: ``-video``), and its ``vinoground`` documents' pair
#: ``index`` (foilkit's row ``id``), four questions each (:data:`VINOGROUND_PARTS`).
KEYINGS = {
    "id": Keying(None, ("id",), lambda row: (str(row["id"]),)),
    "tempcompass": Keying(
        "tempcompass",
        ("video_id", "aspect", "question"),
        lambda row: (str(row["video_id"]), row["aspect"], row["question"]),
    ),
    "lmms-eval-vitatecs": Keying(
        "vitatecs",
        ("source_dataset", "video_name", "caption", "foils"),
        lambda row: (
            row["source_dataset"],
            row["video_name"],
            lmms_eval_vitatecs_question(_vitatecs_shown(row)),
        ),
        _vitatecs_asked,
    ),
    "lmms-eval-temporalbench": Keying(
        "temporalbench",
        ("id", "question", "label"),
        lambda row: (str(row["id"]),),
        _temporalbench_asked,
    ),
    "lmms-eval-tomato": Keying(
        "tomato",
        ("reasoning_type", "demonstration_type", "question", "options"),
        _tomato_question,
        _tomato_asked,
    ),
    "lmms-eval-tomato-video": Keying(
        "tomato",
        ("reasoning_type", "demonstration_type", "question", "options", "video_path"),
        lambda row: (*_tomato_question(row), row["video_path"]),
        _tomato_asked,
    ),
    "lmms-eval-vinoground": Keying(
        "vinoground", ("id",), lambda row: (str(row["id"]),), parts=VINOGROUND_PARTS
    ),
}


def source_files(source: str | os.PathLike) -> list[Path]:
    """The answer files of ``source``: the file itself, or every ``.json``/``.jsonl`` below a
    folder, sorted."""
    root = Path(source)
    if root.is_file():
        return [root]
    if root.is_dir():
        files = sorted(
            p
            for p in root.rglob("*")
            if p.suffix in (".json", ".jsonl") and not p.name.endswith("_results.json")
        )
        if files:
            return files
        raise AnswerFileError(f"{root}: no .json or .jsonl answer files in this folder")
    raise AnswerFileError(f"{root}: no such file or folder (the answers to import)")


def detect_format(path: Path) -> str:
    """``tempcompass-predictions``, ``lmms-eval-samples`` or ``jsonl``, from the file's content;
    anything else is an error naming the file and the formats foilkit reads."""
    text = path.read_text(encoding="utf-8")
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and _is_tempcompass(whole):
        return "tempcompass-predictions"
    try:
        line = json.loads(first)
    except json.JSONDecodeError:
        line = None
    if isinstance(line, dict) and "filtered_resps" in line and {"doc", "doc_id"} & set(line):
        return "lmms-eval-samples"
    if isinstance(line, dict) and "id" in line and "answer" in line:
        return "jsonl"
    raise AnswerFileError(
        f"{path}:1: unknown answer format; foilkit imports TempCompass' predictions/<model>/"
        "<task>.json layout, lmms-eval --log_samples files and JSONL with one "
        '{"id": ..., "answer": ...} per line'
    )


def producer(path: Path, fmt: str) -> dict[str, Any]:
    """The tool that wrote ``path`` and its version, where the files say it: for lmms-eval, the
    results file of the same run (``<date>_results.json`` beside ``<date>_samples_<task>.jsonl``;
    ``None`` where there is none): ``lmms_eval_version`` as written (lmms-eval 0.7 writes
    ``<git branch>@<commit>`` of the repository around its code, ``unknown@unknown`` outside
    one, not the release), and the model and model arguments it ran (``config.model``,
    ``config.model_args``). Another run's results file in the folder says nothing of these."""
    if fmt == "tempcompass-predictions":
        return {"tool": "TempCompass published predictions"}
    if fmt != "lmms-eval-samples":
        return {}
    results = path.with_name(path.name.split("_samples_", 1)[0] + "_results.json")
    try:
        written = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        written = None
    if not isinstance(written, dict) or not written.get("lmms_eval_version"):
        return {"tool": "lmms-eval", "version": None}
    ran = written.get("config") if isinstance(written.get("config"), dict) else {}
    found = {"tool": "lmms-eval", "version": written["lmms_eval_version"]}
    return found | {k: ran[k] for k in ("model", "model_args") if ran.get(k)}


def _is_tempcompass(data: Mapping[str, Any]) -> bool:
    """Whether ``data`` is ``{video: {aspect: [{"question", "prediction"}, ...]}}``."""
    by_aspect = next(iter(data.values()), None)
    items = next(iter(by_aspect.values()), None) if isinstance(by_aspect, dict) else None
    return (
        isinstance(items, list)
        and bool(items)
        and isinstance(items[0], dict)
        and {"question", "prediction"} <= set(items[0])
    )


def read_tempcompass(path: Path) -> Iterator[Imported]:
    """TempCompass' published predictions: the task from the file name, each item by (video,
    aspect, question); the question is the prompt the model was asked, less the answer
    instruction."""
    config = _TEMPCOMPASS_TASKS.get(path.stem)
    if config is None:
        raise AnswerFileError(
            f"{path}:1: TempCompass predictions are named by task "
            f"({', '.join(f'{stem}.json' for stem in _TEMPCOMPASS_TASKS)}), not {path.name!r}"
        )
    for video, by_aspect in json.loads(path.read_text(encoding="utf-8")).items():
        for aspect, items in by_aspect.items():
            for number, item in enumerate(items):
                where = f"{path} (video {video}, aspect {aspect}, item {number})"
                if not isinstance(item, dict) or "prediction" not in item:
                    raise AnswerFileError(f"{where}: an item without 'prediction'")
                key = (str(video), aspect, item.get("question"))
                yield Imported(config, key, item["prediction"], None, where, "tempcompass")


def read_jsonl(path: Path) -> Iterator[Imported]:
    """One ``{"id", "answer"[, "prompt"]}`` per line; a line that is not one is an error naming
    the file and line."""
    for where, line in _lines(path):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise AnswerFileError(f"{where}: not a JSON line ({error.msg})") from None
        if not isinstance(item, dict) or "id" not in item or "answer" not in item:
            raise AnswerFileError(f"{where}: a line needs 'id' and 'answer'")
        answer = item["answer"]
        if answer is not None and not isinstance(answer, str):
            raise AnswerFileError(f"{where}: 'answer' must be text or null, got {answer!r}")
        yield Imported(item.get("config"), (str(item["id"]),), answer, item.get("prompt"), where)


def _lines(path: Path) -> Iterator[tuple[str, str]]:
    """``path``'s non-blank lines, each with where it stands (``file:line``)."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                yield f"{path}:{number}", line


#: lmms-eval's task names (the ``<task>`` of ``<date>_samples_<task>.jsonl``) -> the foilkit
#: config its documents are and how its samples name them (a :data:`KEYINGS` name).
LMMS_EVAL_TASKS = {
    **{f"tempcompass_{task}": (task, "tempcompass") for task in _TEMPCOMPASS_TASKS.values()},
    **{f"vitatecs_{aspect}": (aspect, "lmms-eval-vitatecs") for aspect in VITATECS_ASPECTS},
    "temporalbench_short_qa": ("short_qa", "lmms-eval-temporalbench"),
    "tomato": ("all", "lmms-eval-tomato"),
    "vinoground": ("all", "lmms-eval-vinoground"),
}


def _tomato_reasoning(name: str) -> str:
    """foilkit's name of a TOMATO reasoning type (its config) from a document's
    ``reason_type``: the config name or the published file's stem (``shape&trend``)."""
    by_stem = {stem: config for config, stem in TOMATO_REASONING_TYPES.items()}
    if name in TOMATO_REASONING_TYPES or name in by_stem:
        return by_stem.get(name, name)
    raise ValueError(f"reason_type {name!r} is not one of TOMATO's {list(by_stem)}")


def _tomato_sample(sample: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The naming and key of the TOMATO row an lmms-eval ``tomato`` sample answers: reasoning
    and demonstration type (its ``tomato_score`` record, or ``doc``), the question and options
    (``doc``, or read from the prompt it asked, ``input``), and where ``doc`` is kept its video
    (``video_path``'s last two parts: ``<demonstration type>/<key>.mp4``, foilkit's
    ``video_path``). lmms-eval's ``question_id`` is its Hub copy's own ``id``, which names no
    published question: not read."""
    doc = sample.get("doc")
    fields = doc if isinstance(doc, dict) else sample["tomato_score"]
    named = (_tomato_reasoning(fields["reason_type"]), fields["demonstration_type"])
    if isinstance(doc, dict):
        video = "/".join(PurePosixPath(doc["video_path"]).parts[-2:])
        return "lmms-eval-tomato-video", (*named, doc["question"], tuple(doc["options"]), video)
    asked = read_lmms_eval_tomato_prompt(sample["input"])
    if asked is None:
        raise ValueError("its input holds no <question> and <options> of lmms-eval's prompt")
    return "lmms-eval-tomato", (*named, *asked)


def _vinoground_sample(sample: Mapping[str, Any]) -> tuple[tuple[Any, ...], str, list[str]]:
    """The pair (its ``index``), the question (:data:`VINOGROUND_PARTS`) and the categories
    (``["all", major, *minors]``) of an lmms-eval ``vinoground`` sample, from ``doc`` (its
    ``index``: ``<pair>_<pos|neg>_<text|video>``) or its ``vinoground_score`` record."""
    doc = sample.get("doc")
    if isinstance(doc, dict):
        pair, side, kind = doc["index"].split("_")
        categories = ["all", doc["major"], *(doc["minor"] or "").split(";")]
    else:
        record = sample["vinoground_score"]
        (pair, side), kind = record["index"].split("_"), record["question_type"]
        categories = list(record["categories"])
    part = f"{side}_{kind}"
    if part not in VINOGROUND_PARTS:
        raise ValueError(f"question {part!r} is not one of {VINOGROUND_PARTS}")
    return (str(pair),), part, [name for name in categories if name]


def _sample_key(keyed: str, sample: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key (in the naming ``keyed``) of the document an lmms-eval sample answers, from its
    ``doc`` where the file keeps it (the sample as ``evaluator._process_document_results``
    builds it), else from the record the task's ``process_results`` logged beside the answer
    (``save_results_samples`` drops ``doc``; VITATECS' record names the document's
    ``video_name`` ``video_id``). TOMATO's and Vinoground's: :func:`_tomato_sample`,
    :func:`_vinoground_sample`."""
    doc = sample.get("doc")
    if keyed == "lmms-eval-temporalbench":
        fields = doc if isinstance(doc, dict) else sample["temporalbench_score"]["item"]
        return (str(fields["idx"]),)
    if keyed == "tempcompass":
        fields = doc if isinstance(doc, dict) else sample["avg_accuracy"]
        return (str(fields["video_id"]), fields["dim"], fields["question"])
    if isinstance(doc, dict):
        row = {**doc, "foils": [doc["counterfactual"]], "source_dataset": doc["src_dataset"]}
        return KEYINGS[keyed].row(row)
    record = sample["accuracy"]
    return (record["src_dataset"], record["video_id"], record["question"])


def read_lmms_eval(path: Path) -> Iterator[Imported]:
    """lmms-eval 0.7's ``--log_samples`` file (``<date>_samples_<task>.jsonl``, one sample a
    line): the task from the file name, the item by the task's own document fields
    (:func:`_sample_key`; Vinoground's also the question, ``part``, and the categories it
    logged, checked against the row), the answer its filtered response (the one its scorer
    read), the prompt its ``input`` (the request's text; ``arguments[0]`` in the unsaved
    form)."""
    task = path.stem.split("_samples_", 1)[-1]
    if task not in LMMS_EVAL_TASKS:
        raise AnswerFileError(
            f"{path}:1: lmms-eval task {task!r} is not one foilkit imports "
            f"({', '.join(LMMS_EVAL_TASKS)}; the file name ends _samples_<task>.jsonl)"
        )
    config, keyed = LMMS_EVAL_TASKS[task]
    for where, line in _lines(path):
        part, logged, named = "", None, keyed
        try:
            sample = json.loads(line)
            prompt = sample.get("input")
            if prompt is None:
                arguments = sample.get("arguments", [])
                prompt = next((a for a in arguments if isinstance(a, str)), None)
                sample = {**sample, "input": prompt}
            if keyed == "lmms-eval-tomato":
                named, key = _tomato_sample(sample)
            elif keyed == "lmms-eval-vinoground":
                key, part, categories = _vinoground_sample(sample)
                logged = {"categories": categories}
            else:
                key = _sample_key(keyed, sample)
            answer = sample["filtered_resps"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise AnswerFileError(
                f"{where}: not an lmms-eval sample of {task} ({type(error).__name__}: {error})"
            ) from None
        while isinstance(answer, list):  # a response list (one per request): its first
            answer = answer[0] if answer else None
        yield Imported(config, key, answer, prompt, where, named, part, logged)


READERS = {
    "tempcompass-predictions": read_tempcompass,
    "lmms-eval-samples": read_lmms_eval,
    "jsonl": read_jsonl,
}


def import_answers(
    source: str | os.PathLike,
    benchmark: str,
    *,
    out_dir: str | os.PathLike,
    config: str | Sequence[str] | None = None,
    annotations: str | os.PathLike | None = None,
    dataset: str | os.PathLike | None = None,
    label: str | None = None,
    n_resamples: int = 1000,
    bootstrap_seed: int = 0,
    overwrite: bool = False,
    judge: Any = None,
    judge_cache: str | None = None,
    command_line: Sequence[str] | None = None,
) -> RunResults:
    """Import the answers of ``source`` (a file or folder) as a run of ``benchmark`` in
    ``out_dir``; the configs are those the answers name (``config``: those alone). ``judge``
    (:class:`foilkit.scorers.judge.JudgeSettings`; ``None``: none) turns on the official LLM
    judge of each config's parser, asked about the answers its protocol asks about, as in
    generate mode (its replies cached in ``judge_cache``)."""
    started, started_at = time.monotonic(), now()
    spec = get_benchmark(benchmark)
    files = source_files(source)
    answers: list[Imported] = []
    provenance = []
    for path in files:
        fmt = detect_format(path)
        read = list(READERS[fmt](path))
        named = {KEYINGS[item.keyed].benchmark for item in read} - {None, spec.name}
        if named:
            (other,) = named
            title = get_benchmark(other).title
            raise AnswerFileError(
                f"{path}:1: these are {title} answers ({fmt}), not {spec.name}'s: "
                f"pass --benchmark {other}"
            )
        answers += read
        digest = hashlib.sha256(path.read_bytes()).hexdigest()  # detect_format read it whole too
        provenance.append(
            {"file": os.fspath(path), "sha256": digest, "format": fmt, **producer(path, fmt)}
        )
    named = sorted({item.config for item in answers if item.config is not None})
    configs = list(spec.configs_for(config or named or None, judge=judge is not None))
    folder = RunFolder(Path(out_dir))
    check_folder(folder.root, RUN)
    if folder.is_run() and not overwrite:
        raise FileExistsError(
            f"{folder.root} already holds an evaluation; pass --overwrite or choose another --out"
        )
    splits, used = {}, set()
    for name in configs:
        split = load_benchmark_split(
            spec, name, dataset=dataset, annotations=annotations, on_missing="keep"
        )
        mine = [(n, item) for n, item in enumerate(answers) if item.config in (None, name)]
        matched, named = _match(split.data, mine)
        splits[name], used = (split, matched), used | named
    segments = None
    video_question = next((item for item in answers if item.part.endswith("_video")), None)
    if video_question is not None:
        segments = vinoground_segments(annotations, video_question.where)
    stray = next((item for n, item in enumerate(answers) if n not in used), None)
    if stray is not None:
        raise AnswerFileError(
            f"{stray.where}: no {spec.name} item {stray.key!r} in "
            f"{', '.join(configs)} (an answer to an item the benchmark does not have)"
        )
    bootstrap = Bootstrap(n_resamples, bootstrap_seed)
    results, scores = {}, {}
    for name, (split, matched) in splits.items():
        results[name], scores[name] = _score_config(
            spec, name, split, matched, provenance, bootstrap, judge, judge_cache, segments
        )
    (replace_folder if overwrite else claim_folder)(folder.root, RUN)
    model = label or Path(files[0]).parent.name
    run = RunResults(
        benchmark=spec.name,
        title=spec.title,
        paper_table=spec.paper_table,
        model=model,
        label=label or model_label(model),
        control=None,
        protocol=None,
        dataset=None if dataset is None else os.fspath(dataset),
        split=spec.split,
        bootstrap=bootstrap,
        configs=results,
        invocation=run_invocation(command_line, started, started_at),
        units=UNITS,
    )
    for name, rows in scores.items():
        folder.write_scores(name, rows)
    run.save(folder)
    write_run_report(run, folder.root)
    return run


#: Where lmms-eval reads the GT of Vinoground's video questions (its ``prep_data``: the folder
#: it downloads the Hub repository to), or beside ``vinoground.csv`` (``get_score_all.py``).
VINOGROUND_VIDEOSCORE = (
    "vinoground_videos_concated/vinoground_videoscore.json",
    "vinoground_videoscore.json",
)


def vinoground_segments(annotations: str | os.PathLike | None, where: str) -> dict[str, Any]:
    """``vinoground_videoscore.json``'s items by ``idx`` (``<pair>_<pos|neg>``), from the
    ``annotations`` folder (:data:`VINOGROUND_VIDEOSCORE`): which segment of the joined video
    shows the caption's own video (``GT``) is in that file only, not in lmms-eval's samples."""
    for name in VINOGROUND_VIDEOSCORE if annotations is not None else ():
        path = Path(annotations) / name
        if path.is_file():
            try:
                items = json.loads(path.read_text(encoding="utf-8"))
                return {str(item["idx"]): item for item in items}
            except (ValueError, KeyError, TypeError) as error:
                raise AnswerFileError(
                    f"{path}: not Vinoground's list of video questions ({error})"
                ) from None
    raise AnswerFileError(
        f"{where}: lmms-eval's vinoground samples do not say which segment of the joined video "
        "is which video (its scorer reads the GT of vinoground_videoscore.json): pass "
        "--annotations the folder lmms-eval downloaded Vinoground to ($HF_HOME/vinoground, "
        "holding vinoground.csv and vinoground_videos_concated/vinoground_videoscore.json)"
    )


def _match(
    data: Any, answers: Sequence[tuple[int, Imported]]
) -> tuple[list[dict[str, tuple[int, Imported]] | str], set[int]]:
    """Per row of ``data``, the answers (their number and themselves, by :attr:`Imported.part`)
    that name its item, by the source's own fields (the answer's :data:`KEYINGS` naming), or
    :data:`AMBIGUOUS` where the answers' naming fits several rows (none is guessed); and the
    numbers of the answers that name a row. Two answers to one item are an error naming both
    (to a naming several rows share: more answers than those rows)."""
    keyings = {name: KEYINGS[name] for name in sorted({item.keyed for _, item in answers})}
    columns = {column for keying in keyings.values() for column in keying.columns}
    shown = data.select_columns([c for c in data.column_names if c in columns])
    keys = [[(name, *keying.row(row)) for name, keying in keyings.items()] for row in shown]
    shared = Counter(key for row_keys in keys for key in row_keys)
    by_key: dict[tuple[Any, ...], list[tuple[int, Imported]]] = {}
    for number, item in answers:
        found = by_key.setdefault((item.keyed, *item.key, item.part), [])
        found.append((number, item))
        if len(found) > max(1, shared[(item.keyed, *item.key)]):
            raise AnswerFileError(
                f"{item.where}: a second answer to the item of {found[0][1].where}"
                if len(found) == 2
                else f"{item.where}: {len(found)} answers to the {len(found) - 1} items they name"
            )
    matched: list[dict[str, tuple[int, Imported]] | str] = []
    for row_keys in keys:
        found = {
            part: by_key[(*key, part)][0]
            for key in row_keys
            for part in KEYINGS[key[0]].parts
            if (*key, part) in by_key
        }
        several = any(shared[key] > 1 and (*key, "") in by_key for key in row_keys)
        matched.append(AMBIGUOUS if several else found)
    named = {n for key, found in by_key.items() if shared[key[:-1]] for n, _ in found}
    return matched, named


def _score_config(
    spec: Any,
    config: str,
    loaded: Any,
    matched: Sequence[dict[str, tuple[int, Imported]] | str],
    provenance: list[dict[str, Any]],
    bootstrap: Bootstrap,
    judge_settings: Any,
    judge_cache: str | None,
    segments: Mapping[str, Any] | None,
) -> tuple[ConfigResults, Any]:
    """One config's results from the answers matched to its rows (``matched``, per row: by
    part, or why none is), and its per-sample rows: each answer read by the config's paper
    parser as generate mode reads one; a row no answer reaches fails with :data:`NO_ANSWER`, a
    Vinoground pair short of one of its four answers too. ``segments``: Vinoground's video
    questions (:func:`vinoground_segments`)."""
    from foilkit.scorers.generate import judge_answers, read_answers
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.output import answer_outcomes, error_causes, scores_dataset
    from foilkit.scorers.parsers import DEFAULT_PARSER, get_parser
    from foilkit.scorers.protocols import default_parser
    from foilkit.scorers.requests import Generations

    data, dropped = loaded.data, loaded.dropped_missing
    parser_name = default_parser(spec.name, config) or DEFAULT_PARSER
    parser = get_parser(parser_name)
    shown = data.remove_columns([c for c in ("video", "foil_video") if c in data.column_names])
    single = [m[""] if isinstance(m, dict) and "" in m else None for m in matched]
    asked = [_request(row, None if m is None else m[1].keyed) for row, m in zip(shown, single)]
    generations = [[Generations((m[1].answer or "",))] if m else [] for m in single]
    verdicts: list[dict[tuple[int, int], Any]] = [{} for _ in matched]
    judge = None
    if judge_settings is not None:
        judge = Judge(judge_settings, parser_name, judge_cache)
        judge.check_key()
        answered = [i for i, m in enumerate(single) if m is not None]
        found = judge_answers(
            judge, [asked[i] for i in answered], [generations[i] for i in answered], parser
        )
        for i, verdict in zip(answered, found, strict=True):
            verdicts[i] = verdict
    pairs = any(isinstance(m, dict) and set(m) - {""} for m in matched)
    groups = ["main", "foil_video", "video_question", "foil_video_question"] if pairs else ["main"]
    records, recorded, differs = [], [], []
    for row, match, request, answer, verdict in zip(
        shown, matched, asked, generations, verdicts, strict=True
    ):
        parts = {part: item for part, (_, item) in match.items()} if match != AMBIGUOUS else {}
        if set(parts) - {""}:
            record, prompt, differ = _vinoground_record(row, parts, parser, segments or {})
        elif parts:
            prompt = parts[""].prompt
            differ = prompt is not None and prompt != request.question
            scored = read_answers(request.texts, answer, parser, request.answers, verdict)
            record = _record(row["id"], {"main": scored})
        else:
            error = AMBIGUOUS if match == AMBIGUOUS else NO_ANSWER
            record, prompt, differ = _record(row["id"], error=error), None, False
        records.append(record)
        recorded.append(prompt)
        differs.append(differ)
    rows = scores_dataset(records, groups, "probability", data)
    rows = rows.add_column("imported_prompt", recorded)
    rows = rows.add_column("imported_prompt_differs", differs)
    failed = sum(1 for r in records if r["error"])
    causes = error_causes(records)
    record = ScoringRun(
        model=None,
        adapter={
            "adapter": IMPORTED,
            "model_run_by": RUN_BY,
            "sources": provenance,
            "parser": parser_name,
            "prompts_differ": sum(differs),
        },
        mode="generate",
        score_kind="probability",
        errors={"failed": failed, "causes": causes},
        answers=answer_outcomes([r for r in records if not r["error"]]),
        judge=None if judge is None else judge.to_record(),
        finished_at=now(),
    )
    result = ConfigResults(
        num_rows=data.num_rows,
        metrics=compute_metrics(
            spec, config, rows, None, n_resamples=bootstrap.n_resamples, seed=bootstrap.seed
        ),
        coverage=Coverage.of(data.num_rows, dropped, failed, causes),
        score=ScoringRun.from_record(json.loads(json.dumps(record.to_record(), default=str))),
    )
    return result, rows


def _record(
    row_id: str,
    scored: Mapping[str, Any] | None = None,
    error: str | None = None,
    cause: str | None = None,
) -> dict[str, Any]:
    """A row's record: a scored row's from each group's
    :class:`~foilkit.scorers.requests.TextScores` (its scores, details and answers as read), a
    failed row's its ``error`` and the cause it is counted under (default: that error)."""
    scored = scored or {}
    return {
        "id": row_id,
        "scores": {group: list(found.scores) for group, found in scored.items()},
        "details": {
            group: {k: list(v) for k, v in found.details.items()} for group, found in scored.items()
        },
        "frame_indices": None,
        "error": error,
        "error_cause": cause or error,
        "answers": {group: [asdict(a) for a in found.answers] for group, found in scored.items()},
    }


def _vinoground_record(
    row: Mapping[str, Any],
    parts: Mapping[str, Imported],
    parser: Any,
    segments: Mapping[str, Any],
) -> tuple[dict[str, Any], str | None, bool]:
    """A Vinoground pair's record from lmms-eval's four answers (:data:`VINOGROUND_PARTS`), as
    foilkit's own run of the pair fills it, each question asked once in lmms-eval's order: the
    text question about each video scores the two captions (``main``: the video, with the
    letters its prompt shows them by; ``foil_video``: the foil video), the video question
    about each caption the two videos (``video_question``: each caption's score for the answer
    naming the video, ``foil_video_question``: the foil video; the segment that shows the
    caption's own video is ``vinoground_videoscore.json``'s ``GT``). Also the prompts asked
    (joined) and whether one differs from foilkit's question (the same options in the same
    order). A sample whose categories or captions are not the row's is an error naming it; a
    pair short of one of its four answers fails with :data:`NO_ANSWER`."""
    from foilkit.scorers.generate import read_answers
    from foilkit.scorers.requests import Generations, TextScores

    missing = [part for part in VINOGROUND_PARTS if part not in parts]
    if missing:
        cause = f"{NO_ANSWER} to {', '.join(missing)}"
        return _record(row["id"], error=cause, cause=NO_ANSWER), None, False
    captions = (row["caption"], row["foils"][0])
    for item in parts.values():
        logged = list(item.logged["categories"]) if item.logged else None
        if logged is not None and logged != ["all", *row["categories"]]:
            raise AnswerFileError(
                f"{item.where}: its categories {logged} are not Vinoground pair {row['id']}'s "
                f"{['all', *row['categories']]} (answers of another Vinoground?)"
            )
    scored: dict[str, Any] = {}
    differ = False
    for group, part in (("main", "pos_text"), ("foil_video", "neg_text")):
        item = parts[part]
        shown = shown_captions(item.prompt or "")
        if shown is None or sorted(shown) != sorted(captions):
            raise AnswerFileError(
                f"{item.where}: its question does not show pair {row['id']}'s two captions as "
                f"A and B ({captions[0]!r}, {captions[1]!r})"
            )
        labels = tuple(LETTERS[shown.index(caption)] for caption in captions)
        answer = [Generations((item.answer or "",))]
        scored[group] = read_answers(captions, answer, parser, labels)
        differ |= item.prompt != text_question(shown)
    named = []  # per caption: the answer's scores for (video, foil video)
    for own, part in enumerate(("pos_video", "neg_video")):
        item = parts[part]
        truth = segments.get(f"{row['id']}_{part.split('_')[0]}")
        if truth is None or item.prompt != f"{truth['question']}{_VINOGROUND_SUFFIX}":
            raise AnswerFileError(
                f"{item.where}: not the question vinoground_videoscore.json asks about pair "
                f"{row['id']}'s {part.split('_')[0]} caption (the file of another Vinoground?)"
            )
        if f"\nCaption: {captions[own]}\n" not in item.prompt:
            raise AnswerFileError(
                f"{item.where}: its video question is not about pair {row['id']}'s caption "
                f"{captions[own]!r}"
            )
        shows = LETTERS.index(str(truth["GT"]).strip().upper())  # the caption's own video
        letters = [LETTERS[1 - shows], LETTERS[1 - shows]]
        letters[own] = LETTERS[shows]
        options = tuple(VIDEO_QUESTION.options[LETTERS.index(letter)] for letter in letters)
        answer = [Generations((item.answer or "",))]
        named.append(read_answers(options, answer, parser, tuple(letters)))
        differ |= item.prompt != VIDEO_QUESTION.ask(captions[own])
    for video, group in enumerate(("video_question", "foil_video_question")):
        scores = tuple(found.scores[video] for found in named)
        answers = tuple(a for found in named for a in found.answers) if video == 0 else ()
        scored[group] = TextScores(scores, {}, answers=answers)
    prompts = "\n\n".join(parts[part].prompt or "" for part in VINOGROUND_PARTS)
    return _record(row["id"], scored), prompts, differ


#: The line lmms-eval's ``vinoground_doc_to_text`` adds to a question of Vinoground's files.
_VINOGROUND_SUFFIX = "\nPlease only output one English character."


def _request(row: Mapping[str, Any], keyed: str | None = None) -> Any:
    """The :class:`~foilkit.scorers.requests.TextsRequest` the row's answer answered: its
    caption and foils, the question asked and how it names them (the row's own, or the
    source's where its naming ``keyed`` asked its own: :attr:`Keying.asked`), the judge's
    question and answer."""
    from foilkit.scorers.plan import JUDGE_COLUMNS
    from foilkit.scorers.requests import TextsRequest

    question, labels = row.get("prompt"), None
    if question is not None:
        labels = (row["caption_answer"], *row["foil_answers"])
    own = None if keyed is None else KEYINGS[keyed].asked
    if own is not None:
        question, labels = own(row)
    reference = tuple(row.get(column) for column in JUDGE_COLUMNS)
    return TextsRequest(
        (row["caption"], *row["foils"]),
        question=question,
        answers=labels,
        reference=reference if all(reference) else None,
    )
