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
- ``lmms-eval-samples``: lmms-eval 0.7's ``--log_samples`` files of the TempCompass, VITATECS
  and TemporalBench tasks (:data:`LMMS_EVAL_TASKS`); an item is the row its document names
  (TempCompass: ``video_id``, ``dim``, ``question``; VITATECS: source dataset, video and
  question, the options in lmms-eval's own order; TemporalBench: ``idx``), its recorded prompt
  the request's text (``input``). lmms-eval 0.7.3 writes the document itself out of the file
  (``EvaluationTracker.save_results_samples`` pops ``doc`` and ``arguments``): its fields are
  read where the task's ``process_results`` logged them beside the answer, or from ``doc``
  where a file keeps it (:func:`_sample_key`).
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from foilkit.answers import LETTERS
from foilkit.builders import get_benchmark
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
#: TempCompass' published task files by stem -> foilkit config.
_TEMPCOMPASS_TASKS = {
    "multi-choice": "multi_choice",
    "yes_no": "yes_no",
    "caption_matching": "caption_matching",
    "captioning": "captioning",
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
    (``None``: none), and where it was read (``file:line``)."""

    config: str | None
    key: tuple[Any, ...]
    answer: str | None
    prompt: str | None
    where: str
    keyed: str = "id"


@dataclass(frozen=True)
class Keying:
    """How a source names a benchmark's rows: the ``benchmark`` it names (``None``: any), the
    row ``columns`` it reads, the key of a ``row``, and, where the source asked a question of
    its own (lmms-eval's VITATECS order), the prompt and the labels of the row's ``(caption,
    *foils)`` as it asked them (``asked``; ``None``: the row's own ``prompt`` and labels)."""

    benchmark: str | None
    columns: tuple[str, ...]
    row: Callable[[Mapping[str, Any]], tuple[Any, ...]]
    asked: Callable[[Mapping[str, Any]], tuple[str, tuple[str, ...]]] | None = None


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


#: The namings of rows, by name: a row's ``id`` (JSONL), TempCompass' video, aspect and question
#: (its published predictions and lmms-eval's ``tempcompass_*`` tasks), lmms-eval's
#: ``vitatecs_*`` tasks' source dataset, video and question (the options in lmms-eval's order),
#: and lmms-eval's ``temporalbench_short_qa`` documents' ``idx`` (foilkit's row ``id``).
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
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    for by_aspect in list(data.values())[:1]:
        if not isinstance(by_aspect, dict):
            return False
        for items in list(by_aspect.values())[:1]:
            return (
                isinstance(items, list)
                and bool(items)
                and isinstance(items[0], dict)
                and {"question", "prediction"} <= set(items[0])
            )
    return False


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
    "tempcompass_multi_choice": ("multi_choice", "tempcompass"),
    "tempcompass_yes_no": ("yes_no", "tempcompass"),
    "tempcompass_caption_matching": ("caption_matching", "tempcompass"),
    "tempcompass_captioning": ("captioning", "tempcompass"),
    **{f"vitatecs_{aspect}": (aspect, "lmms-eval-vitatecs") for aspect in VITATECS_ASPECTS},
    "temporalbench_short_qa": ("short_qa", "lmms-eval-temporalbench"),
}


def _sample_key(keyed: str, sample: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key (in the naming ``keyed``) of the document an lmms-eval sample answers, from its
    ``doc`` where the file keeps it (the sample as ``evaluator._process_document_results``
    builds it), else from the record the task's ``process_results`` logged beside the answer
    (lmms-eval 0.7.3's saved files: ``save_results_samples`` drops ``doc``): TempCompass'
    ``avg_accuracy`` (``video_id``, ``dim``, ``question``), VITATECS' ``accuracy``
    (``src_dataset``, ``video_id``: the document's ``video_name``, ``question``),
    TemporalBench's ``temporalbench_score`` (the whole document, ``item``: its ``idx``)."""
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
    (:func:`_sample_key`), the answer its filtered response (the one its scorer read), the
    prompt its ``input`` (the request's text; ``arguments[0]`` in the unsaved form)."""
    task = path.stem.split("_samples_", 1)[-1]
    if task not in LMMS_EVAL_TASKS:
        raise AnswerFileError(
            f"{path}:1: lmms-eval task {task!r} is not one foilkit imports "
            f"({', '.join(LMMS_EVAL_TASKS)}; the file name ends _samples_<task>.jsonl)"
        )
    config, keyed = LMMS_EVAL_TASKS[task]
    for where, line in _lines(path):
        try:
            sample = json.loads(line)
            key, answer = _sample_key(keyed, sample), sample["filtered_resps"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError) as error:
            raise AnswerFileError(
                f"{where}: not an lmms-eval sample of {task} ({type(error).__name__}: {error})"
            ) from None
        while isinstance(answer, list):  # a response list (one per request): its first
            answer = answer[0] if answer else None
        prompt = sample.get("input")
        if prompt is None:
            prompt = next((a for a in sample.get("arguments", []) if isinstance(a, str)), None)
        yield Imported(config, key, answer, prompt, where, keyed)


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
    answers: list[tuple[str, Imported]] = []
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
        answers += [(fmt, item) for item in read]
        provenance.append(
            {"file": os.fspath(path), "sha256": sha256(path), "format": fmt, **producer(path, fmt)}
        )
    named = sorted({item.config for _, item in answers if item.config is not None})
    configs = list(spec.configs_for(config or named or None, judge=judge is not None))
    folder = RunFolder(Path(out_dir))
    check_folder(folder.root, RUN)
    if folder.is_run() and not overwrite:
        raise FileExistsError(
            f"{folder.root} already holds an evaluation; pass --overwrite or choose another --out"
        )
    loaded, matched, used = {}, {}, set()
    for name in configs:
        loaded[name] = load_benchmark_split(
            spec, name, dataset=dataset, annotations=annotations, on_missing="keep"
        )
        mine = [
            (n, fmt, item) for n, (fmt, item) in enumerate(answers) if item.config in (None, name)
        ]
        matched[name] = _match(loaded[name].data, mine)
        used |= {found[0] for found in matched[name] if found is not None}
    stray = next((item for n, (_, item) in enumerate(answers) if n not in used), None)
    if stray is not None:
        raise AnswerFileError(
            f"{stray.where}: no {spec.name} item {stray.key!r} in "
            f"{', '.join(configs)} (an answer to an item the benchmark does not have)"
        )
    results, scores = {}, {}
    for name in configs:
        results[name], scores[name] = _score_config(
            spec,
            name,
            loaded[name],
            matched[name],
            provenance,
            n_resamples,
            bootstrap_seed,
            judge,
            judge_cache,
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
        bootstrap=Bootstrap(n_resamples, bootstrap_seed),
        configs=results,
        invocation=run_invocation(command_line, started, started_at),
        units=UNITS,
    )
    for name, rows in scores.items():
        folder.write_scores(name, rows)
    run.save(folder)
    write_run_report(run, folder.root)
    return run


def _match(
    data: Any, answers: Sequence[tuple[int, str, Imported]]
) -> list[tuple[int, Imported] | None]:
    """Per row of ``data``, the answer (its number and itself) that names its item, by the
    source's own fields (the answer's :data:`KEYINGS` naming); ``None``: none does. Two answers
    to one item are an error naming both."""
    by_key: dict[tuple[Any, ...], tuple[int, Imported]] = {}
    for number, _, item in answers:
        first = by_key.setdefault((item.keyed, *item.key), (number, item))
        if first[0] != number:
            raise AnswerFileError(f"{item.where}: a second answer to the item of {first[1].where}")
    keyings = {name: KEYINGS[name] for name in sorted({item.keyed for _, _, item in answers})}
    columns = {column for keying in keyings.values() for column in keying.columns}
    return [
        next(
            (
                by_key[key]
                for name, keying in keyings.items()
                if (key := (name, *keying.row(row))) in by_key
            ),
            None,
        )
        for row in data.select_columns([c for c in data.column_names if c in columns])
    ]


def _score_config(
    spec: Any,
    config: str,
    loaded: Any,
    matched: Sequence[tuple[int, Imported] | None],
    provenance: list[dict[str, Any]],
    n_resamples: int,
    seed: int,
    judge_settings: Any = None,
    judge_cache: str | None = None,
) -> tuple[ConfigResults, Any]:
    """One config's results from the answers matched to its rows (``matched``, per row), and
    its per-sample rows: each answer read by the config's paper parser as generate mode reads
    one; a row no answer reaches fails with :data:`NO_ANSWER`."""
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
    asked = [_request(row, None if m is None else m[1].keyed) for row, m in zip(shown, matched)]
    generations = [[Generations((m[1].answer or "",))] if m else [] for m in matched]
    verdicts: list[dict[tuple[int, int], Any]] = [{} for _ in matched]
    judge = None
    if judge_settings is not None:
        judge = Judge(judge_settings, parser_name, judge_cache)
        judge.check_key()
        answered = [i for i, m in enumerate(matched) if m is not None]
        found = judge_answers(
            judge, [asked[i] for i in answered], [generations[i] for i in answered], parser
        )
        for i, verdict in zip(answered, found, strict=True):
            verdicts[i] = verdict
    records, recorded, differs = [], [], []
    for row, match, request, answer, verdict in zip(
        shown, matched, asked, generations, verdicts, strict=True
    ):
        prompt = None if match is None else match[1].prompt
        recorded.append(prompt)
        differs.append(prompt is not None and prompt != request.question)
        if match is None:
            records.append(_failed(row["id"], NO_ANSWER))
            continue
        scored = read_answers(request.texts, answer, parser, request.answers, verdict)
        records.append(
            {
                "id": row["id"],
                "scores": {"main": list(scored.scores)},
                "details": {"main": {k: list(v) for k, v in scored.details.items()}},
                "frame_indices": None,
                "error": None,
                "answers": {"main": [asdict(a) for a in scored.answers]},
            }
        )
    rows = scores_dataset(records, ["main"], "probability", data)
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
        metrics=compute_metrics(spec, config, rows, None, n_resamples=n_resamples, seed=seed),
        coverage=Coverage.of(data.num_rows, dropped, failed, causes),
        score=ScoringRun.from_record(json.loads(json.dumps(record.to_record(), default=str))),
    )
    return result, rows


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


def _failed(row_id: str, cause: str) -> dict[str, Any]:
    return {
        "id": row_id,
        "scores": {},
        "details": {},
        "frame_indices": None,
        "error": cause,
        "error_cause": cause,
    }
