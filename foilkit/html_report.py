"""``report.html``: one self-contained page per run (or side by side) with an item browser.

The page needs no network: the paper-layout tables come from
:func:`foilkit.report_tables.run_table` (side by side: :func:`foilkit.report_tables.runs_tables`),
the plots the markdown report wrote are inlined as base64 PNGs, and the items travel as JSON
inside the page, rendered a page at a time by a small script. Each item shows the caption and
every foil with its score, the outcome (``correct``, ``wrong``, ``tied``: the caption's best
competitor scored the same, ``unanswered``: a generate-mode item whose every answer chose no
option, ``error``: the video was not scored) and the margin (caption minus best foil, oriented
so that a positive margin is correct whatever the score kind). Several runs side by side put
the items on which the runs' outcomes disagree first.

Thumbnails: the frames the model saw, in the order it saw them (``frame_indices`` of
``scores/<config>.parquet`` are recorded after the temporal control), decoded with the run's
recorded decoder from the videos of at most ``max_thumbnails`` items, the first ones in the
page's default order (:func:`informative_order`); every other item lists its frame indices.
Each distinct frame becomes one small JPEG data URI, shared by every run that saw it. The page
says how many items are thumbnailed and what the decoding cost.
"""

from __future__ import annotations

import base64
import functools
import html
import importlib.resources
import io
import json
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilkit.report_tables import (
    SIDE_BY_SIDE_PLOT,
    Table,
    run_header,
    run_table,
    runs_tables,
    table_cells,
    tie_note,
    tied_kinds,
    unique_labels,
)
from foilkit.run import DEFAULT_MIN_COVERAGE, RunFolder, RunResults
from foilkit.video_paths import (
    RootsGiven,
    VideoPathError,
    named_roots,
    resolve_video_path,
    video_roots_for,
)

#: Thumbnail height in pixels, and how many items get thumbnails by default.
THUMBNAIL_HEIGHT = 48
MAX_THUMBNAILS = 300
#: Items per page of the item browser.
PAGE_SIZE = 50
JPEG_QUALITY = 70
OUTCOME_RANK = {"tied": 0, "unanswered": 1, "wrong": 2, "correct": 3, "error": 4}


@dataclass
class Thumbnails:
    """Distinct frames as data URIs (``"<video>:<index>"`` -> URI) and what decoding them cost."""

    frames: dict[str, str] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)  # same keys: the frame's time in s
    items: int = 0  # items whose strip is complete
    seconds: float = 0.0
    failed: dict[str, str] = field(default_factory=dict)  # video -> why it could not be decoded

    def note(self, total: int, unit: str = "items") -> str:
        """What was thumbnailed; ``unit``: what ``total`` counts (side by side: an item's row
        under one run)."""
        per_item = f" ({1000 * self.seconds / self.items:.1f} ms per item)" if self.items else ""
        text = (
            f"Thumbnails: {self.items} of {total} {unit}, the first ones in the default order "
            f"(runs disagree, tied, wrong, then the closest calls); {len(self.frames)} distinct "
            f"frames decoded in {self.seconds:.2f} s{per_item}."
        )
        if self.failed:
            text += (
                f" {len(self.failed)} videos could not be read for thumbnails (e.g. "
                + "; ".join(f"{name}: {why}" for name, why in list(self.failed.items())[:2])
                + "); rebuild with foilkit report RUN_DIR --video-root DIR."
            )
        return text


def outcome(
    caption_score: float | None,
    foil_scores: Sequence[float] | None,
    score_kind: str,
    error: str | None = None,
) -> tuple[str, float | None]:
    """``(outcome, margin)`` of one item: the caption against its best-scoring foil.

    The margin is oriented (``score_kind``'s direction, :func:`foilkit.metrics.score_direction`):
    positive when the caption wins. A tie is its own outcome here; how a metric credits it is the
    run's tie policy, shown under the tables.
    """
    from foilkit.metrics import score_direction

    if error or caption_score is None or not foil_scores:
        return "error", None
    sign = score_direction(score_kind)
    margin = sign * caption_score - max(sign * score for score in foil_scores)
    if math.isnan(margin):  # a text the model could not score
        return "error", None
    return ("correct" if margin > 0 else "tied" if margin == 0 else "wrong"), float(margin)


def run_items(run_dir: str | os.PathLike, results: RunResults, *, run: int = 0) -> list[dict]:
    """The items of every per-item config of a run (``scores/<config>.parquet``), as browser rows.

    Keys: ``r`` run index, ``id``, ``t`` config (test), ``g`` group (aspect, subtest, foil type),
    ``c``/``cs`` caption and its score, ``f``/``fs`` foils and scores, ``p*`` the same for ViLMA's
    proficiency test, ``o`` outcome, ``m`` margin, ``e`` error, ``v`` video, ``fi`` frame indices;
    a choice-mode video LLM's rows add ``po`` (per text, caption first: its letter probability in
    each cyclic option order, :func:`order_probabilities`) and ``q`` (each order's question, the
    slot of the run's recorded prompt template); a generate-mode one's ``po`` holds each text's
    share of the answers in each order, ``a`` the answers (order-major), ``ao`` their parser
    outcomes and ``ac`` the text each chose (caption 0, then each foil; ``None``: none). A row
    asking its own question (TOMATO, TempCompass) adds ``qa`` (:func:`own_question`) and ``q``,
    that question as the model was asked it. A pair row (Vinoground: a foil video) adds ``fv``,
    its texts' scores on the foil video (:func:`foil_video_scores`: with ``cs``/``fs``, the 2x2
    block), and one that asked the video-score question ``vq`` (:func:`video_question`).
    """
    folder = RunFolder(Path(run_dir))
    group_column = results.spec.group_column
    items = []
    for config, entry in results.configs.items():
        scores = folder.load_scores(config)
        if scores is None:
            continue  # a retrieval pool: one matrix, no per-item outcome
        prompt_name = entry.score.prompt_name if entry.score else None
        for row in scores.to_list():
            kind = row.get("score_kind") or "similarity"
            result, margin = outcome(
                row.get("caption_score"), row.get("foil_scores"), kind, row.get("error")
            )
            if result == "tied" and _unanswered(row):
                result = "unanswered"
            item = {
                "r": run,
                "id": row["id"],
                "t": config,
                "g": row.get(group_column) if group_column else None,
                "c": row.get("caption"),
                "cs": row.get("caption_score"),
                "f": row.get("foils") or [],
                "fs": row.get("foil_scores") or [],
                "o": result,
                "m": margin,
                "e": row.get("error"),
                "v": row.get("video_path"),
                "fi": row.get("frame_indices") or [],
            }
            if (orders := order_probabilities(row)) is not None:
                item["po"] = orders
                if prompt_name is not None and row.get("prompt") is None:  # not its own
                    item["q"] = order_questions(prompt_name, [item["c"], *item["f"]])
            if (asked := own_question(row)) is not None:
                item["qa"] = asked
                item["q"] = [row["prompt"]]  # asked as it is, whatever the mode
            item.update(_answers(row))
            if (pair := foil_video_scores(row)) is not None:
                item["fv"] = pair
            if (asked := video_question(row)) is not None:
                item["vq"] = asked
            if row.get("proficiency_caption_score") is not None:
                item.update(
                    {
                        "pc": row.get("proficiency_caption"),
                        "pcs": row["proficiency_caption_score"],
                        "pf": row.get("proficiency_foils") or [],
                        "pfs": row.get("proficiency_foil_scores") or [],
                    }
                )
            items.append(item)
    return items


def own_question(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The question a row asks itself (TOMATO, TempCompass: its ``prompt`` column, the options
    lettered as the official prompt letters them), as the item browser shows it; ``None`` for a
    row that asks none (the adapter's own question is then ``q``, per option order).

    Keys: ``q`` the question, ``o`` the options in the published order with ``l`` their labels
    (``A``, ``yes``, ``Caption A``) and ``k`` the true one's position, ``ta`` each text's label
    in the scores' order (caption, then each foil).
    """
    if row.get("prompt") is None:
        return None
    texts = [row.get("caption_answer"), *(row.get("foil_answers") or [])]
    options = row.get("options") or [row.get("caption"), *(row.get("foils") or [])]
    labels = row.get("option_labels") or texts
    return {
        "q": row.get("question") or row["prompt"],
        "o": list(options),
        "l": list(labels),
        "k": labels.index(texts[0]) if texts[0] in labels else None,
        "ta": texts,
    }


def _unanswered(row: Mapping[str, Any]) -> bool:
    """Whether a generate-mode row's every answer chose no text (:func:`foilkit.scorers.output.
    unanswered_rows`): its texts tie at 0 without the model having judged them equal."""
    from foilkit.scorers.output import unanswered_rows

    flags = unanswered_rows({"answer_choices": [row.get("answer_choices")]})
    return bool(flags and flags[0])


def order_probabilities(row: Mapping[str, Any]) -> list[list[float | None]] | None:
    """Per text (caption, then each foil), its letter probability in each cyclic option order
    (the ``caption_order_<k>`` / ``foil_order_<k>`` details of a choice-mode scores file);
    ``None`` for a row without them (another mode, an unscored row, a run from before they
    were logged)."""
    from foilkit.scorers.output import ORDER_DETAIL

    caption = [row.get(f"caption_{ORDER_DETAIL}{k}") for k in range(len(row))]
    count = caption.index(None) if None in caption else len(caption)
    if count == 0:
        return None
    foils = [row.get(f"foil_{ORDER_DETAIL}{k}") or [] for k in range(count)]
    texts: list[list[float | None]] = [caption[:count]]
    for n in range(max(len(f) for f in foils)):
        texts.append([f[n] if n < len(f) else None for f in foils])
    return texts


def foil_video_scores(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A pair row's scores on its foil video (the ``foil_video_*`` columns,
    :mod:`foilkit.scorers.output`), the second row of its 2x2 block; ``None`` for a row with no
    foil video or not scored.

    Keys: ``cs`` the caption's score, ``fs`` the foils', ``fi`` the foil video's frame indices,
    ``v`` its path.
    """
    from foilkit.scorers.output import GROUP_PREFIX

    prefix = GROUP_PREFIX["foil_video"]
    if row.get(f"{prefix}caption_score") is None:
        return None
    return {
        "cs": row[f"{prefix}caption_score"],
        "fs": row.get(f"{prefix}foil_scores") or [],
        "fi": row.get(f"{prefix}frame_indices") or [],
        "v": row.get(f"{prefix}path"),
    }


def video_question(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A pair row's answers to Vinoground's video-score question (which segment of the joined
    video a text describes, :mod:`foilkit.scorers.video_question`), from its ``video_question_*``
    and ``foil_video_question_*`` columns; ``None`` for a row that asked none.

    Keys: ``s`` per text (caption, then each foil), its score for the answer naming the video and
    for the one naming the foil video; ``o`` per text and video the same from the joined view
    showing that video first and from the one showing it second (``None`` where not logged);
    ``fr`` each joined view's sampled frames in its first video, separator and second video; in
    generate mode ``a`` the answers (text-major, the video-first view before the foil-video-first
    one, then samples), ``ao`` their parser outcomes and ``ac`` the video each named (0 the
    video, 1 the foil video, ``None``: none).
    """
    from foilkit.scorers.output import GROUP_PREFIX, JOINED_FRAMES

    prefixes = (GROUP_PREFIX["video_question"], GROUP_PREFIX["foil_video_question"])
    if row.get(f"{prefixes[0]}caption_score") is None:
        return None

    foils = len(row[f"{prefixes[0]}foil_scores"])

    def per_text(caption: str, foil: str) -> list[list[Any]]:
        """Per text, the video's then the foil video's value of columns ``caption`` / ``foil``
        (``None`` where a column is absent)."""
        videos = [
            [row.get(prefix + caption), *(row.get(prefix + foil) or [None] * foils)]
            for prefix in prefixes
        ]
        return [list(values) for values in zip(*videos, strict=True)]

    shown = zip(
        per_text("caption_shown_first", "foil_shown_first"),
        per_text("caption_shown_second", "foil_shown_second"),
        strict=True,
    )
    asked: dict[str, Any] = {
        "s": per_text("caption_score", "foil_scores"),
        "o": [[[first[v], second[v]] for v in range(2)] for first, second in shown],
        "fr": row.get(JOINED_FRAMES) or [],
    }
    return asked | _answers(row, prefixes[0])


def _answers(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Generate mode's answers behind a row's scores (its ``<prefix>answers`` columns): ``a``
    the answers, ``ao`` their parser outcomes, ``ac`` what each chose; none in another mode."""
    if row.get(f"{prefix}answers") is None:
        return {}
    return {
        "a": row[f"{prefix}answers"],
        "ao": row[f"{prefix}answer_outcomes"],
        "ac": row.get(f"{prefix}answer_choices"),
    }


def order_questions(prompt_name: str, texts: Sequence[str]) -> list[str]:
    """The question a choice-mode video LLM asked in each cyclic order of ``texts`` (order ``k``
    lists text ``(k + j) mod n`` at position ``j``), as its adapter words it."""
    from foilkit.scorers.prompts import question_text

    count = len(texts)
    return [
        question_text(prompt_name, [texts[(shift + k) % count] for k in range(count)])
        for shift in range(count)
    ]


def mark_disagreements(items: list[dict]) -> int:
    """Flag (``d``) the items whose runs disagree on being correct; returns how many item ids do."""
    verdicts: dict[tuple[str, str], set[bool]] = {}
    for item in items:
        verdicts.setdefault((item["t"], item["id"]), set()).add(item["o"] == "correct")
    for item in items:
        item["d"] = int(len(verdicts[(item["t"], item["id"])]) > 1)
    return sum(len(v) > 1 for v in verdicts.values())


def informative_order(items: Sequence[dict]) -> list[int]:
    """Item positions, most informative first: items the runs disagree on, then tied, then by
    margin (the most confidently wrong first, then the closest correct calls), unscored items
    last. The rows of one item (one per run) stay together, ranked by the item's worst run.
    The page's default sort is the same order."""
    worst: dict[tuple[str, str], tuple[int, int, float]] = {}
    for item in items:
        key = (item["t"], item["id"])
        margin = float("inf") if item["m"] is None else item["m"]  # unscored: last
        rank = (-item.get("d", 0), OUTCOME_RANK[item["o"]], margin)
        worst[key] = min(worst.get(key, rank), rank)
    return sorted(
        range(len(items)),
        key=lambda i: (
            worst[(items[i]["t"], items[i]["id"])],
            items[i]["t"],
            items[i]["id"],
            items[i]["r"],
        ),
    )


def resolve_video(video: str | None, roots: Sequence[Path]) -> Path | None:
    """The file of a recorded ``video_path``, inside one of ``roots`` (under the first holding it
    when relative), or ``None`` when it is not there.

    Raises :class:`foilkit.video_paths.VideoPathError` for a path, absolute or relative, outside
    every root (symlinks followed): no frame of a file outside the folders the user named may
    end up in the page, which ``push-results`` publishes.
    """
    if not video:
        return None
    path = resolve_video_path(video, roots)
    return path if path.is_file() else None


def video_roots(results: RunResults, videos: RootsGiven) -> list[Path]:
    """Where video paths may resolve: ``videos`` (the report's own ``--video-root``, one or
    several), the roots the run's scoring recorded, then an exported dataset's folder and its
    ``videos/``. A run scored unconfined (a dataset object without a video root) records none."""
    recorded = [
        root
        for entry in results.configs.values()
        if entry.score
        for root in entry.score.video_roots or []
    ]
    roots = [
        *(named_roots(videos) or []),
        *map(Path, recorded),
        *video_roots_for(None, results.dataset),
    ]
    return list(dict.fromkeys(roots))


def make_thumbnails(
    items: Sequence[dict],
    chosen: Sequence[int],
    roots_by_run: Sequence[Sequence[Path]],
    decoders: Sequence[str],
    *,
    height: int = THUMBNAIL_HEIGHT,
) -> Thumbnails:
    """Decode the frames of the ``chosen`` items (each video once, its frames' union) as data URIs.

    Sets ``item["k"]`` (the video's key in :attr:`Thumbnails.frames`) on each item whose frames
    were all decoded.
    """
    import numpy as np
    from PIL import Image

    from foilkit.scorers.video import open_video
    from foilkit.scorers.video.errors import VideoError

    try:  # the decoder library's one-time import is no part of the per-item cost
        import torchcodec.decoders  # noqa: F401
    except ImportError:
        pass
    thumbs = Thumbnails()
    started = time.perf_counter()
    wanted: dict[tuple[Path, str], set[int]] = {}
    owners: dict[tuple[Path, str], list[dict]] = {}
    for position in chosen:
        item = items[position]
        try:
            path = resolve_video(item["v"], roots_by_run[item["r"]])
        except VideoPathError:  # never opened, whether or not it exists
            thumbs.failed.setdefault(item["v"], "outside every video root")
            continue
        if path is None:
            if item["v"] and item["o"] != "error":
                thumbs.failed.setdefault(item["v"], "not found under the video roots")
            continue
        if not item["fi"]:
            continue
        key = (path, decoders[item["r"]])
        wanted.setdefault(key, set()).update(int(i) for i in item["fi"])
        owners.setdefault(key, []).append(item)
    for number, ((path, decoder), indices) in enumerate(wanted.items()):
        try:
            frames, times = open_video(str(path), decoder).get_frames(np.array(sorted(indices)))
        except (VideoError, ValueError) as error:  # a corrupt file is a note, not a failed page
            thumbs.failed[str(path)] = f"{type(error).__name__}: {error}"
            continue
        for index, frame, seconds in zip(sorted(indices), frames, times, strict=True):
            thumbs.times[f"{number}:{index}"] = round(float(seconds), 3)
            image = Image.fromarray(np.ascontiguousarray(frame.permute(1, 2, 0).cpu().numpy()))
            image = image.resize((max(1, round(image.width * height / image.height)), height))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
            thumbs.frames[f"{number}:{index}"] = (
                "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
            )
        for item in owners[(path, decoder)]:
            item["k"] = number
            thumbs.items += 1
    thumbs.seconds = time.perf_counter() - started
    return thumbs


# --- the page -------------------------------------------------------------------------------------


def html_table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    css: str,
    caption: str = "",
    *,
    labelled: bool = False,
) -> str:
    """A table of text cells, each escaped, with class ``css`` and ``caption`` (none when
    empty); ``labelled``: each row's first cell is its label (``<th>``)."""

    def cells(row: Sequence[str]) -> str:
        tags = ["th" if labelled and i == 0 else "td" for i in range(len(row))]
        return "".join(f"<{t}>{html.escape(c)}</{t}>" for t, c in zip(tags, row, strict=True))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in header)
    body = "".join(f"<tr>{cells(row)}</tr>" for row in rows)
    caption = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f"<table class='{css}'>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def table_html(table: Table) -> str:
    """A :class:`foilkit.report_tables.Table` as an HTML table (the markdown report's cells and
    text: :func:`foilkit.report_tables.table_cells`; its caption, when it has one, above it)."""
    header, rows = table_cells(table)
    labelled = [[label, *cells] for label, cells in rows]
    return html_table(header, labelled, "paper", table.caption, labelled=True)


def paired_html(comparison: Mapping[str, Any]) -> str:
    """``foilkit compare``'s paired tests (its ``comparison.json``: ``run_a``, ``run_b`` and the
    ``tests`` of :func:`foilkit.compare.compare_runs`) as the table report.md shows: per config,
    metric, items (all, or a group) and test (exact McNemar, paired bootstrap), its statistic,
    p-value, the difference B − A with its 95% CI and the McNemar test's minimum detectable
    effect at 80% power, then in a sentence per config what its test can detect."""
    from foilkit.compare import TEST_COLUMNS, mde_sentences, test_rows

    caption = (
        f"Paired tests on the same items: A = {comparison['run_a']}, B = {comparison['run_b']}"
    )
    sentences = "".join(f"<p>{html.escape(s)}</p>" for s in mde_sentences(comparison["tests"]))
    rows = test_rows(comparison["tests"])
    return html_table(TEST_COLUMNS, rows, "paper ranked paired", caption) + sentences


def coverage_html(runs: Sequence[tuple[str, RunResults]]) -> str:
    """How many rows each config's scores cover (``scored / total``, the causes of the rest), one
    row per run and config; a config below :data:`DEFAULT_MIN_COVERAGE` is marked incomplete."""
    body = []
    for label, results in runs:
        for config, entry in results.configs.items():
            coverage = entry.coverage
            if coverage is None:  # a run written before coverage was recorded
                cells = [f"{entry.num_rows} rows (coverage not recorded)", "—"]
            else:
                low = coverage.below(DEFAULT_MIN_COVERAGE)
                cells = [
                    f"{coverage.label} ({coverage.fraction:.0%})"
                    + (f" — incomplete, below {DEFAULT_MIN_COVERAGE:.0%}" if low else "")
                    + (f" — partial: {coverage.left_out()}" if coverage.left_out() else ""),
                    coverage.why() or "—",
                ]
            body.append([label, config, *cells])
    header = ("run", "config", "scored / rows", "not scored")
    return html_table(header, body, "paper coverage", "Coverage")


def plot_html(paths: Sequence[Path]) -> str:
    """The PNG plots inlined as base64 images."""
    return "".join(
        f"<figure><img alt='{html.escape(p.stem)}' src='data:image/png;base64,"
        f"{base64.b64encode(p.read_bytes()).decode()}'><figcaption>{html.escape(p.name)}</figcaption></figure>"
        for p in paths
        if p.is_file()
    )


def render_page(
    *,
    title: str,
    header: Sequence[str],
    tables: Sequence[Table | str],
    notes: Sequence[str],
    plots: Sequence[Path],
    data: Mapping[str, Any] | None,
) -> str:
    """The whole page: header lines, tables (a :class:`Table`, or ready HTML), notes, plots, and
    the item browser fed by ``data`` (none when ``data`` is ``None``)."""
    browser = ""
    if data is not None:
        payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
        browser = _BROWSER.format(payload=payload, script=_asset("report.js"))
    return _PAGE.format(
        title=html.escape(title),
        header="".join(f"<p>{html.escape(line)}</p>" for line in header),
        tables="".join(t if isinstance(t, str) else table_html(t) for t in tables),
        notes="".join(f"<p class='note'>{html.escape(line)}</p>" for line in notes),
        plots=plot_html(plots),
        browser=browser,
        style=_asset("report.css"),
    )


def _browser_data(
    run_dirs: Sequence[str | os.PathLike],
    runs: Sequence[RunResults],
    labels: Sequence[str],
    videos: RootsGiven,
    max_thumbnails: int,
    *,
    side_by_side: bool,
) -> dict:
    """The item browser's data: every run's items (side by side: those the runs disagree on
    flagged), the thumbnails of the most informative ones, as JSON takes them."""
    items = [
        item
        for run, (d, r) in enumerate(zip(run_dirs, runs, strict=True))
        for item in run_items(d, r, run=run)
    ]
    disagreeing = mark_disagreements(items) if side_by_side else None
    chosen = informative_order(items)[:max_thumbnails]
    thumbs = make_thumbnails(
        items, chosen, [video_roots(r, videos) for r in runs], [_decoder(r) for r in runs]
    )
    for item in items:  # JSON has no NaN: a NaN score (an unscored text) becomes null
        for key in ("cs", "m", "pcs"):
            if isinstance(item.get(key), float) and math.isnan(item[key]):
                item[key] = None
        for key in ("fs", "pfs"):
            if key in item:
                item[key] = _no_nan(item[key])
        if "po" in item:
            item["po"] = [_no_nan(t) for t in item["po"]]
        if "fv" in item:  # a pair row's scores on its foil video, likewise
            pair = item["fv"]
            pair["cs"], pair["fs"] = _no_nan([pair["cs"]])[0], _no_nan(pair["fs"])
    return {
        "runs": [
            {
                "label": label,
                "control": r.control or "none",
                "model": r.model,
                "prompts": _prompt_templates(r),
            }
            for label, r in zip(labels, runs, strict=True)
        ],
        "groupLabel": runs[0].spec.group_label,
        "items": items,
        "frames": thumbs.frames,
        "times": thumbs.times,
        "pageSize": PAGE_SIZE,
        "thumbnailNote": thumbs.note(
            len(items), "items" if len(runs) == 1 else "rows (an item under one run)"
        ),
        "disagreeing": disagreeing,
    }


def _no_nan(values: Sequence[float | None]) -> list[float | None]:
    return [None if v is None or math.isnan(v) else v for v in values]


def write_run_html(
    run_dir: str | os.PathLike,
    *,
    results: RunResults | None = None,
    videos: RootsGiven = None,
    max_thumbnails: int = MAX_THUMBNAILS,
) -> Path:
    """``report.html`` of one run folder; ``videos``: the video root(s) when the run's dataset
    folder and recorded roots do not hold the videos (thumbnails come only from inside a root);
    ``results``: the folder's, when the caller holds them already. Returns the page's path."""
    folder = RunFolder(Path(run_dir))
    results = RunResults.load(folder) if results is None else results
    table = run_table(results)
    kinds = tied_kinds([table])
    data = _browser_data(
        [folder.root], [results], [results.label], videos, max_thumbnails, side_by_side=False
    )
    page = render_page(
        title=table.title,
        header=run_header(results),
        tables=[table, coverage_html([(results.label, results)])],
        notes=[tie_note(results, kinds).replace("`", "")] if kinds else [],
        plots=folder.plots(),
        data=data,
    )
    folder.html.write_text(page, encoding="utf-8")
    return folder.html


def write_side_by_side_html(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    title: str,
    videos: RootsGiven = None,
    max_thumbnails: int = MAX_THUMBNAILS,
    results: Sequence[RunResults] | None = None,
    paired: Mapping[str, Any] | None = None,
) -> Path:
    """``report.html`` beside a side-by-side ``report.md`` (``foilkit compare``, the demo): the
    merged table, ``foilkit compare``'s ``paired`` tests (:func:`paired_html`), the side-by-side
    plots, and every run's items, those the runs disagree on first. ``results``: the runs', when
    the caller holds them already."""
    if results is None:
        results = [RunResults.load(run_dir) for run_dir in run_dirs]
    tables = [run_table(r) for r in results]
    labels = unique_labels([r.label for r in results])
    side = runs_tables(tables, labels)
    kinds = tied_kinds(tables)
    header = [
        (
            f"Benchmark: {results[0].title} ({results[0].paper_table}). Values in %; brackets: 95% "
            "bootstrap confidence interval."
        ),
        *(
            f"{label}: model {r.model}, control {r.control or 'none'}, folder {Path(d)}"
            for label, r, d in zip(labels, results, run_dirs, strict=True)
        ),
    ]
    out = Path(out_dir)
    data = _browser_data(run_dirs, results, labels, videos, max_thumbnails, side_by_side=True)
    page = render_page(
        title=title,
        header=header,
        tables=[
            *side,
            *([paired_html(paired)] if paired else []),
            coverage_html(list(zip(labels, results, strict=True))),
        ],
        notes=[tie_note(results[0], kinds).replace("`", "")] if kinds else [],
        plots=sorted(out.glob(f"{SIDE_BY_SIDE_PLOT}*.png")),
        data=data,
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _prompt_templates(results: RunResults) -> dict[str, str]:
    """The run's recorded prompt templates by option count (its first config's that has any)."""
    for entry in results.configs.values():
        if entry.score is not None and entry.score.prompt_templates:
            return entry.score.prompt_templates
    return {}


def _decoder(results: RunResults) -> str:
    """The decoder backend the run recorded (its first per-item config's), else torchcodec; a GPU
    decoder's CPU twin, so that a page builds on any machine (thumbnails need no bit-exact
    pixels)."""
    for entry in results.configs.values():
        if entry.score is not None and entry.score.decoder:
            return entry.score.decoder.removesuffix("-cuda")
    return "torchcodec"


@functools.cache
def _asset(name: str) -> str:
    """A file of ``report_assets/`` (the page's script and style sheet), inlined into every page
    so that the page stays one self-contained file."""
    return (importlib.resources.files(__package__) / "report_assets" / name).read_text("utf-8")


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<script>window.__errors=[];window.addEventListener("error",function(e){{
window.__errors.push(String(e.message));
document.documentElement.setAttribute("data-js-errors",String(window.__errors.length));}});
</script>
<style>{style}</style></head>
<body data-ready="0">
<h1>{title}</h1>
{header}
<h2>Results</h2>
{tables}
{notes}
{plots}
{browser}
</body></html>
"""

_BROWSER = """<h2 id="browser">Items</h2>
<p class="note" id="thumbnail-note"></p>
<div id="controls"></div>
<p id="item-count" data-total="0" data-matching="0" data-rendered="0"></p>
<p id="subset-accuracy"></p>
<div id="pager"></div>
<div id="items"></div>
<script type="application/json" id="report-data">{payload}</script>
<script>{script}</script>
"""
