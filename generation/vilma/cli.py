"""``foilkit generate vilma <stage>``: ViLMA-style foils as a foils dataset.

Every stage writes the one foils output (:func:`foilkit.generation.foil.write_foils`):
``<output>/foils.parquet`` in the canonical schema, each row with its foils' provenance, and
``<output>/run.json``, the run's record. Stages (inputs are JSONL):
  counting         {"id", "template", "count", "singular_template"?, "video"?}; with
                   --quva-annotations, one row per video and no "count": {"id", "template",
                   "singular_template"?, "video"?, "annotation"?, "fps"?} -> windows of N
                   repetitions (start/end, start_pts/end_pts) per --subtests. Foil counts are
                   drawn weighted by how often each count occurs over every window of every
                   annotated video (without --quva-annotations: over the rows' counts); the
                   weights go to each foil's parameters and the record's results; a row
                   whose count is outside 1..--max-count is reported (printed, and in the
                   record's "dropped_rows" with its reason), not written
  change-of-state  {"id", "argument", "pre_state", "verb", "post_state", "reverse_verb",
                    "transitive"?, "video"?} -> one row per subtest; without "transitive"
                   (true/false) the verb's transitivity is ViLMA's (its intransitive list)
  actor-swap       {"id", "caption", "video"?}
  spatial          {"id", "caption", "video"?} (the whole file is the caption distribution)
  masked-lm        {"id", "caption", "video"?}: MLM foils by dependency role, NLI + CoLA filters
  rare-actions     {"id", "verb", "noun", "video"?, "start"?, "end"?, "detected"?}: a RareAct
                   (verb, object) pair -> its caption, action or object replacement foils
                   (--replace) and the "there is at least one <object>" proficiency item
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.generation.cli_io import add_output, read_jsonl, run_record

if TYPE_CHECKING:
    from foilkit.generation.foil import Foil

STAGES = ("counting", "change-of-state", "actor-swap", "spatial", "masked-lm", "rare-actions")


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.builders.spacy_pipeline import DEFAULT_SPACY_PIPELINE
    from foilkit.generation.infill import FILL_MASK_TOP_K
    from foilkit.generation.nli import VILMA_NLI_MODEL
    from foilkit.generation.vilma import counting, grammaticality, masked_lm, rare_actions, spatial

    stages = parser.add_subparsers(dest="stage", required=True, metavar="stage")
    parsers = {name: stages.add_parser(name, help=f"ViLMA {name} foils") for name in STAGES}
    for stage in parsers.values():
        stage.add_argument(
            "--input", "-i", required=True, type=Path, help="JSONL input (see module doc)"
        )
        add_output(stage, folder=True)
    count = parsers["counting"]
    count.add_argument(
        "--small-max", type=int, default=counting.SMALL_MAX, help="largest 'small' number (3)"
    )
    count.add_argument(
        "--max-count", type=int, default=counting.MAX_COUNT, help="count threshold (10)"
    )
    count.add_argument("--digits", action="store_true", help="write numbers as digits, not words")
    count.add_argument(
        "--quva-annotations",
        type=Path,
        help="QUVA's annotation folder (<video>.npy, repetition end frames): cut each video "
        "into windows of N repetitions as ViLMA does; a row's .npy is its 'annotation', else "
        "its video's file stem, else its id",
    )
    count.add_argument(
        "--annotation-fps",
        type=float,
        default=counting.ANNOTATION_FPS,
        help="frame rate of the annotation frames (default %(default)s: ViLMA's rescaled "
        "annotations); a row's 'fps' overrides it (QUVA's own files count each video's frames)",
    )
    count.add_argument(
        "--target-fps",
        type=float,
        help="rescale the annotation frames to this rate first, as ViLMA did (30) for videos "
        "re-encoded at it: start_pts/end_pts are then frames of the re-encoded videos",
    )
    count.add_argument(
        "--subtests",
        nargs="+",
        choices=counting.SUBTESTS,
        default=list(counting.SUBTESTS),
        help="with --quva-annotations: the subtests to cut windows for",
    )
    count.add_argument(
        "--windows-per-video",
        type=int,
        default=counting.WINDOWS_PER_VIDEO,
        help="with --quva-annotations: windows drawn per video and subtest (ViLMA: %(default)s)",
    )
    for name in ("actor-swap", "spatial", "masked-lm", "rare-actions"):
        parsers[name].add_argument("--spacy", default=DEFAULT_SPACY_PIPELINE, help="spaCy pipeline")
    for name in ("spatial", "masked-lm"):
        stage = parsers[name]
        stage.add_argument(
            "--nli", help=f"NLI cross-encoder (ViLMA: {VILMA_NLI_MODEL}); omit to skip"
        )
        stage.add_argument(
            "--cola",
            help=f"CoLA classifier for grammaticality (e.g. {grammaticality.DEFAULT_COLA_MODEL})",
        )
        stage.add_argument(
            "--acceptable-label", help="index or name of the CoLA 'acceptable' class"
        )
        stage.add_argument(
            "--grammaticality-threshold", type=float, default=grammaticality.THRESHOLD
        )
    spatial_stage = parsers["spatial"]
    spatial_stage.add_argument(
        "--t5", required=True, help=f"T5 ranking model (ViLMA: {spatial.PAPER_RANKING_MODEL})"
    )
    spatial_stage.add_argument("--top-k", type=int, default=spatial.TOP_K)
    mlm = parsers["masked-lm"]
    mlm.add_argument(
        "--mlm",
        action="append",
        required=True,
        metavar="KIND:MODEL",
        help="fill-mask:roberta-large or t5:t5-large; repeat for an ensemble",
    )
    mlm.add_argument(
        "--test",
        choices=sorted(masked_lm.PROFICIENCY_ROLES),
        help="the ViLMA test the foils are for: masks the word its proficiency foils masked",
    )
    mlm.add_argument(
        "--role",
        choices=masked_lm.ROLES,
        help="the word to mask (default: the --test's role, else argument)",
    )
    mlm.add_argument(
        "--top-k",
        type=int,
        help=f"fillers per target; default {masked_lm.PROFICIENCY_TOP_K} for proficiency foils "
        f"(ViLMA C.1), else {FILL_MASK_TOP_K} (C.3)",
    )
    mlm.add_argument("--foil-type", default="proficiency")
    mlm.add_argument(
        "--all-foils", action="store_true", help="keep every passing foil, not only the best"
    )
    rare = parsers["rare-actions"]
    rare.add_argument(
        "--replace",
        required=True,
        choices=sorted(rare_actions.SUBTESTS),
        help="the subtest: replace the action (verb) or the object (noun)",
    )
    rare.add_argument(
        "--mlm",
        action="append",
        metavar="KIND:MODEL",
        help=f"models proposing the replacement; repeat for an ensemble (ViLMA: "
        f"{' '.join(rare_actions.PAPER_ACTION_MODELS)} for actions, "
        f"{' '.join(rare_actions.PAPER_OBJECT_MODELS)} for objects)",
    )
    rare.add_argument("--top-k", type=int, default=FILL_MASK_TOP_K, help="fillers per model")
    rare.add_argument("--nli", help=f"NLI cross-encoder (ViLMA: {VILMA_NLI_MODEL}); omit to skip")
    rare.add_argument(
        "--excluded-actions",
        nargs="*",
        default=list(rare_actions.EXCLUDED_ACTIONS),
        help="action foils whose verb is one of these are dropped (general or touching actions)",
    )
    rare.add_argument(
        "--all-foils",
        action="store_true",
        help="keep every passing foil, not one drawn at random (ViLMA draws one)",
    )


def run(args: argparse.Namespace) -> int:
    from foilkit.builders.schema import TEXT
    from foilkit.folders import FOILS, claim_folder
    from foilkit.generation.foil import write_foils

    claim_folder(args.output, FOILS)  # before any model loads: new, empty or a foils output
    handlers: dict[str, Callable[[argparse.Namespace], list[dict[str, Any]]]] = {
        "change-of-state": _change_of_state,
        "actor-swap": _actor_swap,
        "spatial": _spatial,
        "masked-lm": _masked_lm,
        "rare-actions": _rare_actions,
    }
    results: dict[str, Any] = {}
    if args.stage == "counting":  # the one stage whose record also says what it drew with
        rows, results["foil_count_weights"], dropped = _counting(args)
        if dropped:
            results["dropped_rows"] = dropped
            for row in dropped:
                print(f"{args.input}: row {row['id']!r} not written: {row['reason']}")
    else:
        rows = handlers[args.stage](args)
    record = run_record(
        args, "vilma", inputs={"input": args.input}, models=_models(args), results=results
    )
    metadata = {"subtest": TEXT} if args.stage in ("counting", "change-of-state") else {}
    if args.stage == "counting" and args.quva_annotations:
        metadata = _window_columns()
    if args.stage == "rare-actions":
        metadata = _rare_actions_columns()
    write_foils(args.output, rows, record, **metadata)
    print(f"wrote {len(rows)} rows to {args.output}")
    return 0


def _models(args: argparse.Namespace) -> dict[str, Any]:
    """Role -> model id (or reference) of every model the stage's options name."""
    from foilkit.generation.provenance import model_ref

    models: dict[str, Any] = {
        role: getattr(args, role, None) for role in ("spacy", "t5", "nli", "cola")
    }
    for index, spec in enumerate(getattr(args, "mlm", None) or ()):
        kind, _, model_id = spec.partition(":")
        models[f"mlm.{index}"] = {**model_ref(model_id), "kind": kind}
    return models


CountingWeights = dict[str, dict[int, float]]


def _counting(
    args: argparse.Namespace,
) -> tuple[list[dict[str, Any]], CountingWeights, list[dict[str, Any]]]:
    """The counting rows, the foil count weights per caption subtest they were drawn with, and
    the input rows not written (``id``, ``count``, ``reason``)."""
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.counting import counting_subtest

    if args.quva_annotations:
        return (*_counting_windows(args), [])
    records = list(read_jsonl(args.input, required=("id", "template", "count")))
    counts = [_count(args.input, record) for record in records]
    dropped = [
        {"id": str(record["id"]), "count": count, "reason": _unusable_count(args, count)}
        for record, count in zip(records, counts)
        if _unusable_count(args, count)
    ]
    # Without the videos' annotations, the rows stand for ViLMA's windows: their counts weigh.
    usable = [count for count in counts if 1 <= count <= args.max_count]
    subtests = {counting_subtest(count, small_max=args.small_max) for count in usable}
    weights = _foil_count_weights(args, Counter(usable), sorted(subtests), source=args.input)
    rng, rows = random.Random(args.seed), []
    for record, count in zip(records, counts):
        pair = _counting_pair(args, record, count, rng, weights)
        if pair is not None:
            caption, foil = pair
            rows.append(
                foil_row(
                    str(record["id"]),
                    caption,
                    [foil],
                    video_path=record.get("video"),
                    subtest=foil.parameters["subtest"],
                )
            )
    return rows, weights, dropped


def _count(source: Path, record: Mapping[str, Any]) -> int:
    """A counting row's ``count``: a whole number, else an error naming the row."""
    count = record["count"]
    if isinstance(count, bool) or not isinstance(count, int):
        raise SystemExit(
            f"{source}: row {record['id']!r}: 'count' must be a whole number of repetitions, "
            f"not {count!r}"
        )
    return count


def _unusable_count(args: argparse.Namespace, count: int) -> str | None:
    """Why a row of ``count`` repetitions makes no ViLMA counting item (``None``: it does).
    ViLMA's items count 1 to 10 (its number words stop at "ten", its windows at 10
    repetitions); the foil of a larger count could not be drawn as ViLMA draws it."""
    if count < 1:
        return f"count {count}: a counting caption needs at least one repetition"
    if count > args.max_count:
        return (
            f"count {count} is above --max-count {args.max_count} (ViLMA's counting items hold "
            f"1 to {args.max_count} repetitions: numbers up to '{_max_word(args.max_count)}'); "
            "raise --max-count to generate it (this changes the easy subtest's foil counts)"
        )
    if not args.digits and _max_word(count) == str(count):
        return f"count {count} has no number word here; pass --digits to write it as digits"
    return None


def _max_word(count: int) -> str:
    from foilkit.generation.vilma.counting import spell_number

    try:
        return spell_number(count)
    except ValueError:
        return str(count)


def _foil_count_weights(
    args: argparse.Namespace,
    frequencies: Mapping[int, int],
    subtests: Sequence[str],
    *,
    source: Path,
) -> CountingWeights:
    """Subtest -> foil count weights from ``frequencies`` (count -> windows or rows), exiting
    with a message naming ``source`` when a subtest's foil range has none."""
    from foilkit.generation.vilma.counting import foil_count_weights

    try:
        return {
            subtest: foil_count_weights(
                frequencies, subtest, small_max=args.small_max, max_count=args.max_count
            )
            for subtest in subtests
        }
    except ValueError as error:
        raise SystemExit(f"{source}: {error}") from None


def _counting_pair(
    args: argparse.Namespace,
    record: Mapping[str, Any],
    count: int,
    rng: random.Random,
    weights: CountingWeights,
) -> tuple[str, Foil] | None:
    """``counting_pair`` for one row, the foil count drawn from its subtest's weights."""
    from foilkit.generation.vilma.counting import counting_pair, counting_subtest

    if not 1 <= count <= args.max_count:
        return None
    return counting_pair(
        record["template"],
        count,
        rng=rng,
        foil_weights=weights[counting_subtest(count, small_max=args.small_max)],
        small_max=args.small_max,
        max_count=args.max_count,
        spelled=not args.digits,
        singular_template=record.get("singular_template"),
    )


def _window_columns() -> dict[str, Any]:
    from foilkit.builders.schema import COUNT, TEXT

    return {"subtest": TEXT, "start_pts": COUNT, "end_pts": COUNT}


def _counting_windows(
    args: argparse.Namespace,
) -> tuple[list[dict[str, Any]], CountingWeights]:
    """ViLMA's counting items: each video cut into windows of N repetitions (QUVA's
    annotations), the caption counting N. An item repeated by ViLMA's draws with replacement
    (same window, same foil count) is written once, as ViLMA's item ids collapse it. The foil
    counts are weighted by every window of every video in the annotation folder, as ViLMA
    weights them by every file of its annotation folder, whichever videos the rows name."""
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.counting import (
        normalize_frames,
        read_quva_annotations,
        sample_windows,
        window_counts,
    )

    annotations = read_quva_annotations(args.quva_annotations)
    frequencies = window_counts(
        (len(ends) for ends in annotations.values()), max_count=args.max_count
    )
    weights = _foil_count_weights(args, frequencies, args.subtests, source=args.quva_annotations)
    rng, rows, seen = random.Random(args.seed), [], set()
    for record in read_jsonl(args.input, required=("id", "template")):
        name = record.get("annotation") or (record.get("video") and Path(record["video"]).stem)
        name = name or str(record["id"])
        if name not in annotations:
            raise SystemExit(
                f"{args.input}: row {record['id']!r}: no {name}.npy in {args.quva_annotations}"
            )
        ends, fps = annotations[name], float(record.get("fps") or args.annotation_fps)
        if args.target_fps:
            ends, fps = normalize_frames(ends, fps, target_fps=args.target_fps), args.target_fps
        for subtest in args.subtests:
            windows = sample_windows(
                ends,
                subtest,
                fps=fps,
                rng=rng,
                per_video=args.windows_per_video,
                small_max=args.small_max,
                max_count=args.max_count,
            )
            for window in windows:
                caption, foil = _counting_pair(args, record, window.count, rng, weights)
                row_id = "-".join(
                    (
                        str(record["id"]),
                        f"{window.start_pts:04d}",
                        f"{window.end_pts:04d}",
                        str(window.count),
                        str(foil.source["foil_count"]),
                    )
                )
                if row_id in seen:
                    continue
                seen.add(row_id)
                rows.append(
                    foil_row(
                        row_id,
                        caption,
                        [foil],
                        video_path=record.get("video"),
                        start=window.start,
                        end=window.end,
                        subtest=subtest,
                        start_pts=window.start_pts,
                        end_pts=window.end_pts,
                    )
                )
    return rows, weights


def _change_of_state(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.change_of_state import ChangeOfState, change_of_state_pairs

    fields = ("id", "argument", "pre_state", "verb", "post_state", "reverse_verb")
    rows = []
    for record in read_jsonl(args.input, required=fields):
        change = ChangeOfState(
            record["pre_state"],
            record["verb"],
            record["post_state"],
            record["reverse_verb"],
            _transitive(args.input, record),
        )
        for subtest, (caption, foil) in change_of_state_pairs(change, record["argument"]).items():
            rows.append(
                foil_row(
                    f"{record['id']}-{subtest}",
                    caption,
                    [foil],
                    video_path=record.get("video"),
                    subtest=subtest,
                )
            )
    return rows


def _transitive(source: Path, record: Mapping[str, Any]) -> bool | None:
    """A change-of-state row's ``transitive``: a JSON boolean, or absent (``None``: the verb's
    transitivity from ViLMA's intransitive list, as the library decides it)."""
    transitive = record.get("transitive")
    if transitive is not None and not isinstance(transitive, bool):
        raise SystemExit(
            f"{source}: row {record['id']!r}: 'transitive' must be true or false (or left out "
            f"to look the verb up in ViLMA's intransitive list), not {transitive!r}"
        )
    return transitive


def _captions(args: argparse.Namespace) -> list[dict[str, Any]]:
    return list(read_jsonl(args.input, required=("id", "caption")))


def _actor_swap(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.builders.spacy_pipeline import load_spacy
    from foilkit.generation.foil import caption_rows
    from foilkit.generation.vilma.actor_swap import actor_swap

    nlp = load_spacy(args.spacy)
    return caption_rows((r, actor_swap(r["caption"], nlp=nlp)) for r in _captions(args))


def _filters(args: argparse.Namespace) -> list[Callable]:
    """The NLI and grammaticality filters the options ask for, in ViLMA's order."""
    filters = _nli_filter(args)
    if args.cola:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from foilkit.generation.vilma.grammaticality import GrammaticalityFilter

        label = args.acceptable_label
        filters.append(
            GrammaticalityFilter(
                AutoModelForSequenceClassification.from_pretrained(args.cola),
                AutoTokenizer.from_pretrained(args.cola),
                threshold=args.grammaticality_threshold,
                acceptable_label=int(label) if label and label.isdigit() else label,
                model_id=args.cola,
            )
        )
    return filters


def _nli_filter(args: argparse.Namespace) -> list[Callable]:
    """ViLMA's NLI filter when ``--nli`` names a model (else none)."""
    if not args.nli:
        return []
    from foilkit.generation.nli import NLIFilter, load_nli_model

    return [NLIFilter(load_nli_model(args.nli), model_id=args.nli, policy="vilma")]


def _spatial(args: argparse.Namespace) -> list[dict[str, Any]]:
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from foilkit.generation.foil import caption_rows
    from foilkit.generation.vilma.spatial import spatial_foils

    records = _captions(args)
    model = T5ForConditionalGeneration.from_pretrained(args.t5).eval()
    chosen = spatial_foils(
        [r["caption"] for r in records],
        model,
        AutoTokenizer.from_pretrained(args.t5),
        filters=_filters(args),
        top_k=args.top_k,
    )
    return caption_rows(
        (r, [] if foil is None else [foil]) for r, foil in zip(records, chosen, strict=True)
    )


def _load_masked_lm(spec: str):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, T5ForConditionalGeneration

    from foilkit.generation.vilma.masked_lm import MaskedLM

    kind, sep, model_id = spec.partition(":")
    if not sep or kind not in ("fill-mask", "t5"):
        raise ValueError(f"--mlm {spec!r}: expected fill-mask:<model> or t5:<model>")
    auto = T5ForConditionalGeneration if kind == "t5" else AutoModelForMaskedLM
    return MaskedLM(
        auto.from_pretrained(model_id).eval(),
        AutoTokenizer.from_pretrained(model_id),
        kind,
        model_id,
    )


def _masked_lm(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.builders.spacy_pipeline import load_spacy
    from foilkit.generation.foil import caption_rows
    from foilkit.generation.infill import FILL_MASK_TOP_K
    from foilkit.generation.vilma.masked_lm import (
        PROFICIENCY_ROLES,
        PROFICIENCY_TOP_K,
        best_foil,
        masked_lm_foils,
    )

    if args.top_k is None:
        args.top_k = PROFICIENCY_TOP_K if args.foil_type == "proficiency" else FILL_MASK_TOP_K
    if args.role is None:
        args.role = PROFICIENCY_ROLES[args.test] if args.test else "argument"
    nlp, filters = load_spacy(args.spacy), _filters(args)
    models: Sequence = [_load_masked_lm(spec) for spec in args.mlm]

    def chosen(caption: str) -> list[Foil]:
        foils = masked_lm_foils(
            caption,
            models,
            nlp=nlp,
            role=args.role,
            foil_type=args.foil_type,
            filters=filters,
            top_k=args.top_k,
        )
        if not args.all_foils and args.cola:
            best = best_foil(foils)
            return [best] if best is not None else []
        return foils if args.all_foils else foils[:1]

    return caption_rows((r, chosen(r["caption"])) for r in _captions(args))


def _rare_actions_columns() -> dict[str, Any]:
    from foilkit.builders.schema import TEXT, TEXTS

    return {
        "subtest": TEXT,
        "verb": TEXT,
        "noun": TEXT,
        "proficiency_caption": TEXT,
        "proficiency_foils": TEXTS,
        "proficiency_provenance": TEXTS,
    }


def _rare_actions(args: argparse.Namespace) -> list[dict[str, Any]]:
    """ViLMA's Rare Actions items from RareAct (verb, noun) pairs (appendix C.5)."""
    import json

    from foilkit.builders.spacy_pipeline import load_spacy
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma import rare_actions

    if args.mlm is None:
        paper = {
            "action": rare_actions.PAPER_ACTION_MODELS,
            "object": rare_actions.PAPER_OBJECT_MODELS,
        }
        args.mlm = list(paper[args.replace])
    models = [_load_masked_lm(spec) for spec in args.mlm]
    filters = _nli_filter(args)
    if args.replace == "action":
        filters.append(
            rare_actions.ActionExclusionFilter(load_spacy(args.spacy), args.excluded_actions)
        )
    make = rare_actions.action_foils if args.replace == "action" else rare_actions.object_foils
    records = list(read_jsonl(args.input, required=("id", "verb", "noun")))
    nouns = sorted({record["noun"] for record in records})
    rng, rows = random.Random(args.seed), []
    for record in records:
        verb, noun, detected = record["verb"], record["noun"], record.get("detected") or ()
        caption = rare_actions.action_caption(verb, noun)
        item_filters = list(filters)
        if args.replace == "object" and detected:
            item_filters.append(rare_actions.DetectedObjectFilter(dict.fromkeys(detected, 1.0)))
        foils = make(verb, noun, models, top_k=args.top_k)
        for keep in item_filters:
            foils = keep(caption, foils) if foils else foils
        if not foils:
            continue
        if not args.all_foils:
            foils = [foils[rng.randrange(len(foils))]]
        proficiency, proficiency_foil = rare_actions.existence_pair(
            noun, nouns, rng=rng, detected=detected
        )
        rows.append(
            foil_row(
                str(record["id"]),
                caption,
                foils,
                video_path=record.get("video"),
                start=record.get("start"),
                end=record.get("end"),
                subtest=rare_actions.SUBTESTS[args.replace],
                verb=verb,
                noun=noun,
                proficiency_caption=proficiency,
                proficiency_foils=[proficiency_foil.text],
                proficiency_provenance=[json.dumps(proficiency_foil.to_record(), sort_keys=True)],
            )
        )
    return rows
