"""The loop's stages on a loop folder: each loads what its configuration names, runs the step
functions of this package, and records what it did (:func:`stage_record`, a
:class:`~foilkit.generation.provenance.RunRecord`). The command line is a thin layer on these.

Order of one iteration k >= 1 (see :mod:`.loop`): ``generate`` -> ``filter`` -> ``export`` ->
(people label) -> ``import`` -> ``train_filter``; ``finalize`` once the filter has converged.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from foilkit.builders.vitatecs import ASPECTS
from foilkit.errors import UserError, one_line
from foilkit.folders import FOILS, claim_folder
from foilkit.generation.cli_io import read_jsonl
from foilkit.generation.provenance import RunRecord, llm_ref
from foilkit.generation.vitatecs.exemplars import ExemplarSets, pair_id, split_heldout
from foilkit.generation.vitatecs.generate import (
    ACCEPTED,
    OTHER_ASPECT,
    REJECTED,
    Candidate,
    Query,
    generate_candidates,
    status_counts,
)
from foilkit.generation.vitatecs.loop import (
    Loop,
    LoopState,
    new_iteration,
    read_candidates,
    write_candidates,
)
from foilkit.generation.vitatecs.prompt import CounterfactualPrompt, load_aspects
from foilkit.generation.vitatecs.revision import export_revision, read_labels

if TYPE_CHECKING:
    from foilkit.generation.llm import ChatClient, LLMSettings
    from foilkit.generation.nli import NLIFilter
    from foilkit.generation.vitatecs.filter_model import AspectFilter
    from foilkit.generation.vitatecs.toxicity import ToxicityFilter

CAPTION_FIELDS = ("caption", "video_name", "src_dataset")


# -- inputs --------------------------------------------------------------------------------------


def read_captions(path: str | os.PathLike) -> list[dict[str, str]]:
    """Captions to write counterfactuals for: JSONL with ``caption``, ``video_name`` and
    ``src_dataset`` (the VITATECS layout) and optionally ``id`` (default ``<file line>``)."""
    captions, seen = [], set()
    for number, record in enumerate(read_jsonl(path, required=CAPTION_FIELDS), start=1):
        for name in CAPTION_FIELDS:
            if not isinstance(record[name], str) or not record[name].strip():
                raise ValueError(f"{path}:{number}: field {name!r} must be a non-empty text")
        caption_id = str(record.get("id", number))
        if caption_id in seen:
            raise ValueError(f"{path}:{number}: id {caption_id!r} repeats an earlier line")
        seen.add(caption_id)
        captions.append(
            {"id": caption_id, **{name: record[name].strip() for name in CAPTION_FIELDS}}
        )
    return captions


def sample_queries(
    captions: Sequence[dict[str, str]],
    *,
    per_aspect: int,
    aspects: Sequence[str] = ASPECTS,
    seed_key: str,
    exclude: dict[str, list[str]] | None = None,
) -> list[Query]:
    """``per_aspect`` random captions per aspect (none of ``exclude[aspect]``), as queries."""
    queries = []
    for aspect in aspects:
        excluded = set((exclude or {}).get(aspect, ()))
        pool = [c for c in captions if c["id"] not in excluded]
        chosen = random.Random(f"{seed_key}:{aspect}").sample(pool, min(per_aspect, len(pool)))
        queries += [
            Query(c["id"], c["caption"], aspect, c["src_dataset"], c["video_name"]) for c in chosen
        ]
    return queries


# -- what the configuration names ----------------------------------------------------------------


T = TypeVar("T")

#: What else to write for an option, besides a local folder or a cached Hub id.
_OPTION_ALTERNATIVES = {"toxicity.model": " (or null to switch the safety filter off)"}


def load_model(loop: Loop, option: str, model_id: str, load: Callable[[], T]) -> T:
    """``load()``, or a :class:`UserError` naming the model, the option that sets it and how to
    change it: offline, only models already in the Hugging Face cache or local folders load."""
    try:
        return load()
    except Exception as error:  # any failure to load is the configured id's problem to report
        alternatives = _OPTION_ALTERNATIVES.get(option, "")
        raise UserError(
            f"{option} = {model_id!r} could not be loaded ({type(error).__name__}: "
            f"{one_line(error)}). Set it to a local model folder or a Hub id in the Hugging Face "
            f"cache{alternatives}: `foilkit generate vitatecs set --loop {loop.root} "
            f"{option}=<model>` (it edits {loop.config_path})"
        ) from error


def llm_config(loop: Loop) -> LLMSettings:
    """The loop's LLM settings as its requests use them: the cache in ``<loop>/llm-cache`` and,
    unless ``llm.seed`` is set, the loop's seed as the base of each request's sampling seed."""
    llm = loop.config.llm
    if llm.cache_dir is None:
        llm = dataclasses.replace(llm, cache_dir=str(loop.llm_cache))
    if llm.seed is None:
        llm = dataclasses.replace(llm, seed=loop.config.seed)
    return llm


def chat_client(loop: Loop) -> ChatClient:
    from foilkit.generation.llm import ChatClient

    return ChatClient(llm_config(loop))


def nli_filter(loop: Loop) -> NLIFilter:
    from foilkit.generation.nli import NLIFilter, load_nli_model

    settings = loop.config.nli
    model = load_model(
        loop,
        "nli.model",
        settings.model,
        lambda: load_nli_model(settings.model, device=loop.config.device),
    )
    return NLIFilter(
        model,
        model_id=settings.model,
        policy="vitatecs",
        labels=settings.labels,
        batch_size=settings.batch_size,
    )


def load_filter(loop: Loop, path: Path) -> AspectFilter:
    from foilkit.generation.vitatecs.filter_model import AspectFilter

    return AspectFilter.load(
        path,
        margin=loop.config.filter.margin,
        max_length=loop.config.filter.max_length,
        device=loop.config.device,
    )


def toxicity_filter(loop: Loop) -> ToxicityFilter | None:
    from foilkit.generation.vitatecs.toxicity import ToxicityFilter, TransformersToxicityScorer

    settings = loop.config.toxicity
    if settings.model is None:
        return None
    scorer = load_model(
        loop,
        "toxicity.model",
        settings.model,
        lambda: TransformersToxicityScorer(
            settings.model, labels=settings.labels, batch_size=settings.batch_size
        ),
    )
    return ToxicityFilter(scorer, threshold=settings.threshold, name=settings.model)


def _prompt_data(loop: Loop) -> dict[str, Any]:
    return {
        "prompt": CounterfactualPrompt.load(loop.config.prompt),
        "aspects": load_aspects(loop.config.aspects),
    }


# -- records -------------------------------------------------------------------------------------

#: The models each stage runs, by their option's name (``filter``: the latest trained filter).
_STAGE_MODELS = {
    "train-filter": ("filter.init_model",),
    "generate": ("llm",),
    "filter": ("nli", "filter"),
    "finalize": ("llm", "nli", "filter", "toxicity", "spacy"),
}
_PROMPT_STAGES = ("generate", "finalize")


def stage_record(
    loop: Loop,
    stage: str,
    *,
    inputs: dict[str, str | os.PathLike | None] | None = None,
    parameters: dict[str, Any] | None = None,
    results: dict[str, Any] | None = None,
) -> RunRecord:
    """The record of ``stage`` on ``loop``: the loop's seed and configuration (``parameters``
    adds the command's options), its configuration and exemplar files (the exemplars except
    after ``import``, which rewrites them) and ``inputs`` hashed, the models and prompt the
    stage runs, and its ``results``."""
    config = loop.config
    named: dict[str, Any] = {
        "llm": llm_ref(llm_config(loop)),
        "nli": config.nli.model,
        "filter.init_model": config.filter.init_model,
        "toxicity": config.toxicity.model,
        "spacy": config.finalize.spacy,
    }
    if stage in ("filter", "finalize"):
        try:
            named["filter"] = str(loop.latest_filter()[1])
        except RuntimeError:  # no filter yet: the stage failed before using one
            pass
    loop_files = {"config": loop.config_path}
    if stage != "import":
        loop_files["exemplars"] = loop.exemplars_path
    return RunRecord.create(
        "vitatecs",
        stage,
        seed=config.seed,
        inputs={**loop_files, **(inputs or {})},
        models={role: named.get(role) for role in _STAGE_MODELS.get(stage, ())},
        prompts={
            "generation": CounterfactualPrompt.load(config.prompt).template
            if stage in _PROMPT_STAGES
            else None
        },
        parameters={**(parameters or {}), "config": config.to_data()},
        results=results,
    )


# -- stages --------------------------------------------------------------------------------------


def _stage_input(path: Path, stage: str) -> Path:
    """``path``, which the stage ``stage`` writes; a clear error when it has not run yet."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist yet: run `{stage}` first")
    return path


def train_filter(loop: Loop, *, epochs: int | None = None) -> dict[str, Any]:
    """Fine-tune the filter of the current iteration on its exemplars; score it held out."""
    from foilkit.generation.vitatecs.filter_model import AspectFilter, evaluate_filter
    from foilkit.generation.vitatecs.synonyms import synonym_source

    config = loop.config
    training = (
        config.filter if epochs is None else dataclasses.replace(config.filter, epochs=epochs)
    )
    state = loop.load_state()
    record = state.current
    pairs = loop.exemplars().pairs()
    if training.heldout:
        train, heldout = pairs, ExemplarSets.load(training.heldout).pairs()
    else:
        previous = [r.filter.get("heldout_ids", []) for r in state.iterations if r.filter]
        train, heldout = split_heldout(
            pairs,
            per_class=training.heldout_per_class,
            max_share=training.heldout_max_share,
            keep=previous[-1] if previous else (),
        )
    seed = config.seed + record.iteration
    model = load_model(
        loop,
        "filter.init_model",
        training.init_model,
        lambda: AspectFilter.from_nli(
            training.init_model,
            seed=seed,
            margin=training.margin,
            max_length=training.max_length,
            device=config.device,
        ),
    )
    synonyms = synonym_source(training.synonyms) if training.augment_copies else None
    facts = model.fine_tune(train, training, synonyms=synonyms, seed=seed)
    model.save(loop.filter_dir(record.iteration))
    metrics = evaluate_filter(model, heldout).to_record() if heldout else {}
    record.filter = {
        **{name: metrics.get(name) for name in ("precision", "recall", "f1")},
        "per_class": metrics.get("per_class", {}),
        "train_pairs": len(train),
        "heldout_pairs": len(heldout),
        "heldout_per_class": dict(sorted(Counter(p.label for p in heldout).items())),
        "heldout": training.heldout
        or (
            f"up to {training.heldout_per_class} per class, at most "
            f"{training.heldout_max_share:.0%} of a class"
        ),
        "heldout_ids": [p.id for p in heldout],
        "synonyms": getattr(synonyms, "name", None),
        "training": dataclasses.asdict(training),
        "model": str(loop.filter_dir(record.iteration)),
        **facts,
    }
    loop.save_state(state)
    return record.filter


def generate(
    loop: Loop,
    captions_path: str | os.PathLike,
    *,
    per_aspect: int | None = None,
    aspects: Sequence[str] = ASPECTS,
    progress: bool = True,
    force: bool = False,
    client: ChatClient | None = None,
) -> dict[str, Any]:
    """Candidates for fresh captions of each aspect, for the next iteration's revision.

    An iteration's candidates are generated once: when they exist, this refuses (they cost LLM
    requests, and later stages' files were made from them) unless ``force``, which releases the
    captions they used and generates again from the same draw (cached replies are reused).
    """
    config = loop.config
    state = loop.load_state()
    iteration = loop.next_iteration(state)
    path = loop.iteration_dir(iteration) / "candidates.jsonl"
    if path.exists():
        if not force:
            raise UserError(
                f"iteration {iteration} already has its candidates ({path}); continue with "
                "`filter`, or pass --force to generate them again (this replaces them and the "
                "files made from them)"
            )
        revision = path.parent / "revision.csv"
        if revision.exists():
            raise UserError(
                f"iteration {iteration} was already exported for revision ({revision}); people "
                "may be labelling it: import it, or move it away before regenerating"
            )
        _release_captions(state, read_candidates(path))
        (path.parent / "filtered.jsonl").unlink(missing_ok=True)
    queries = sample_queries(
        read_captions(captions_path),
        per_aspect=config.loop.queries_per_aspect if per_aspect is None else per_aspect,
        aspects=aspects,
        seed_key=f"{config.seed}:iteration:{iteration}",
        exclude=state.used_captions,
    )
    client = client or chat_client(loop)
    candidates = generate_candidates(
        queries,
        client=client,
        exemplars=loop.exemplars(),
        settings=config.generation,
        seed=config.seed,
        iteration=iteration,
        progress=progress,
        **_prompt_data(loop),
    )
    path = write_candidates(candidates, path)
    for query in queries:
        state.used_captions.setdefault(query.aspect, []).append(query.id)
    loop.save_state(state)
    return {
        "path": str(path),
        "queries": len(queries),
        "statuses": status_counts(candidates),
        **llm_facts(client),
    }


def llm_facts(client: ChatClient) -> dict[str, Any]:
    """What a stage's LLM requests cost and which failed for good (parked: key, error, reply),
    for its run record; written whether the stage finished or not."""
    return {
        "usage": client.usage.to_record(),
        "failures": [failure.to_record() for failure in client.failures],
    }


def _release_captions(state: LoopState, candidates: Sequence[Candidate]) -> None:
    """Forget that the queries of ``candidates`` used their captions (they are regenerated)."""
    for aspect in {c.query.aspect for c in candidates}:
        ids = {c.query.id for c in candidates if c.query.aspect == aspect}
        used = state.used_captions.get(aspect, [])
        state.used_captions[aspect] = [i for i in used if i not in ids]


def filter_candidates(loop: Loop) -> dict[str, Any]:
    """The NLI filter and the latest filter model on the next iteration's candidates."""
    from foilkit.generation.vitatecs.filtering import apply_filter_model, apply_nli

    state = loop.load_state()
    folder = loop.iteration_dir(loop.next_iteration(state))
    candidates = read_candidates(_stage_input(folder / "candidates.jsonl", "generate"))
    _, filter_path = loop.latest_filter(state)
    candidates = apply_nli(candidates, nli_filter(loop))
    candidates = apply_filter_model(
        candidates, load_filter(loop, filter_path), accept=loop.config.loop.accept
    )
    path = write_candidates(candidates, folder / "filtered.jsonl")
    return {"path": str(path), "statuses": status_counts(candidates)}


def export(loop: Loop, *, include_rejected: bool = False) -> dict[str, Any]:
    """The filtered candidates for annotators (accepted ones; rejected too on request), each
    pair once; pairs already in the exemplar sets (the LLM repeating a demonstration) and
    repeats of a pair (the same answer for several aspects) are left out and counted."""
    folder = loop.iteration_dir(loop.next_iteration())
    statuses = (ACCEPTED, OTHER_ASPECT, REJECTED) if include_rejected else (ACCEPTED,)
    candidates = read_candidates(_stage_input(folder / "filtered.jsonl", "filter"))
    known = {e.id for e in loop.exemplars().pairs()}
    fresh, seen, repeats = [], set(), 0
    for candidate in (c for c in candidates if c.status in statuses):
        key = pair_id(candidate.query.caption, candidate.counterfactual or "")
        if key in known:
            continue
        if key in seen:
            repeats += 1
            continue
        seen.add(key)
        fresh.append(candidate)
    paths = export_revision(
        fresh, load_aspects(loop.config.aspects), folder / "revision", statuses=statuses
    )
    exported = sum(c.status in statuses for c in candidates)
    return {
        **paths,
        "already_exemplars": exported - len(fresh) - repeats,
        "repeats": repeats,
    }


def import_labels(loop: Loop, path: str | os.PathLike) -> dict[str, Any]:
    """Merge people's labels into the exemplar sets; starts the next iteration."""
    state = loop.load_state()
    iteration = loop.next_iteration(state)
    labelled = read_labels(path, source=f"human revision, iteration {iteration}")
    exemplars, added = loop.exemplars().with_labels(labelled)
    folder = loop.iteration_dir(iteration)
    exemplars.save(loop.exemplars_path)
    exemplars.save(folder / "exemplars.yaml")
    generated = None
    for name in ("filtered.jsonl", "candidates.jsonl"):
        if (folder / name).exists():
            generated = {"file": name, "statuses": status_counts(read_candidates(folder / name))}
            break
    record = new_iteration(
        state,
        exemplars,
        valid_samples=added["valid"],
        human_labels=len(labelled) - added["unchanged"],
        generated=generated,
    )
    loop.save_state(state)
    return {
        "iteration": record.iteration,
        "labels": len(labelled),
        "new_labels": len(labelled) - added["unchanged"],
        **added,
        "exemplar_size": record.exemplar_size,
    }


def finalize(
    loop: Loop,
    captions_path: str | os.PathLike,
    out: str | os.PathLike,
    *,
    per_aspect: int | None = None,
    aspects: Sequence[str] = ASPECTS,
    progress: bool = True,
    parameters: dict[str, Any] | None = None,
    client: ChatClient | None = None,
) -> dict[str, Any]:
    """Generate, filter and select at scale with the latest filter; write the dataset and its
    record (``parameters``: the command's options, recorded with the loop's configuration).

    ``out`` is claimed first, before a caption is read or a request sent: it must be new, empty
    or a foils output (:data:`foilkit.folders.FOILS`)."""
    from foilkit.builders.spacy_pipeline import load_spacy
    from foilkit.generation.vitatecs.finalize import finalize_candidates, write_dataset

    out = claim_folder(out, FOILS)
    config = loop.config
    state = loop.load_state()
    filter_iteration, filter_path = loop.latest_filter(state)
    queries = sample_queries(
        read_captions(captions_path),
        per_aspect=config.finalize.queries_per_aspect if per_aspect is None else per_aspect,
        aspects=aspects,
        seed_key=f"{config.seed}:finalize",
    )
    client = client or chat_client(loop)
    candidates = finalize_candidates(
        queries,
        client=client,
        exemplars=loop.exemplars(),
        nli=nli_filter(loop),
        filter_model=load_filter(loop, filter_path),
        toxicity=toxicity_filter(loop),
        nlp=load_spacy(config.finalize.spacy) if config.finalize.spacy else None,
        settings=config.generation,
        accept=config.loop.accept,
        per_caption=config.finalize.per_caption,
        max_per_signature=config.finalize.max_per_signature,
        seed=config.seed,
        iteration=filter_iteration,
        progress=progress,
        **_prompt_data(loop),
    )
    write_candidates(candidates, out / "candidates.jsonl")
    facts = {
        "queries": len(queries),
        "statuses": status_counts(candidates),
        "filter_iteration": filter_iteration,
        **llm_facts(client),
        "candidates": "candidates.jsonl",
    }
    record = stage_record(
        loop, "finalize", inputs={"captions": captions_path}, parameters=parameters, results=facts
    )
    return {**write_dataset(candidates, out, record=record), **facts}
