"""``foilkit generate contrast <stage>``: contrast-set foils and multiple-choice items.

Stages:
  gender-mc   Gender MC from an MSR-VTT Random MC file (clip, ending0..4, label)
  verb-mc     Verb_LM MC from the same file, foils by T5 + the appendix A.3 filters
  person-id   person-ID foils for captions with their movie's cast (JSONL)

Every stage writes the one foils output (:func:`foilkit.generation.foil.write_foils`):
``<output>/foils.parquet`` and ``<output>/run.json``. The MC stages also write
``<output>/multiple_choice.tsv``, the items in the layout the contrast-set builder reads
(``multiple_choice_file``).
"""

from __future__ import annotations

import argparse
import functools
import random
from pathlib import Path

from foilkit.generation.cli_io import add_output, read_jsonl, read_lines, run_record

STAGES = ("gender-mc", "verb-mc", "person-id")


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.builders.spacy_pipeline import DEFAULT_SPACY_PIPELINE
    from foilkit.generation.contrast.verb_phrases import VerbFoilSettings

    stages = parser.add_subparsers(dest="stage", required=True, metavar="stage")
    gender = stages.add_parser("gender-mc", help="Gender MC items (one negative -> gender swap)")
    verb = stages.add_parser("verb-mc", help="Verb_LM MC items (one negative -> T5 verb foil)")
    for stage in (gender, verb):
        stage.add_argument(
            "--multiple-choice",
            required=True,
            type=Path,
            help="Random MC file: clip, ending0..ending4, label (TSV/CSV)",
        )
        stage.add_argument("--spacy", default=DEFAULT_SPACY_PIPELINE, help="spaCy pipeline")
        add_output(stage, folder=True)
    defaults = VerbFoilSettings()
    verb.add_argument("--t5", required=True, help="T5 span-infilling model (paper: t5-base)")
    verb.add_argument("--lm", required=True, help="causal LM for perplexity (paper: gpt2-xl)")
    verb.add_argument(
        "--sentence-model",
        required=True,
        help="sentence-transformers model for the sentence (and word) cosines",
    )
    verb.add_argument(
        "--train-captions",
        type=Path,
        help="training captions, one per line, for the verb-frequency filter",
    )
    # Every VerbFoilSettings field is a flag: the paper's values, the WordNet synonym check
    # (--synonym-check / --no-synonym-check, --synonym-senses) and the cosine thresholds
    # recalibrated for all-MiniLM-L6-v2 with the check on (the paper's: 0.4 / 0.8).
    for name, value in defaults.to_record().items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            verb.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=value, help=f"default {value}"
            )
        else:
            verb.add_argument(flag, type=type(value), default=value, help=f"default {value}")
    person = stages.add_parser("person-id", help="person-ID swaps (LSMDC-IDs)")
    person.add_argument(
        "--captions",
        required=True,
        type=Path,
        help='JSONL: {"id", "caption", "characters": {name: gender}, "video"?}',
    )
    person.add_argument("--swap-probability", type=float, default=0.5)
    add_output(person, folder=True)


def run(args: argparse.Namespace) -> int:
    from foilkit.builders.schema import COUNT, TEXT, TEXTS
    from foilkit.folders import FOILS, claim_folder
    from foilkit.generation.contrast.multiple_choice import (
        MULTIPLE_CHOICE_FILE,
        build_contrast_mc,
        item_row,
        read_multiple_choice,
        write_multiple_choice,
    )
    from foilkit.generation.foil import write_foils

    claim_folder(args.output, FOILS)  # before any model loads: new, empty or a foils output
    rng = random.Random(args.seed)
    if args.stage == "person-id":
        return _person_id(args, rng)
    from foilkit.builders.spacy_pipeline import load_spacy

    nlp = load_spacy(args.spacy)
    items = read_multiple_choice(args.multiple_choice)
    if args.stage == "gender-mc":
        from foilkit.generation.contrast.gender_swap import gender_swap

        built = build_contrast_mc(
            items,
            lambda caption: gender_swap(caption, rng=rng, nlp=nlp),
            rng=rng,
            foil_type="gender",
        )
    else:
        make_foils = _verb_foil_maker(args, nlp)
        built = build_contrast_mc(items, make_foils, rng=rng, foil_type="verb_lm")
    write_multiple_choice(built, args.output / MULTIPLE_CHOICE_FILE)
    models = {"spacy": args.spacy}
    if args.stage == "verb-mc":
        models |= {"infill": args.t5, "perplexity": args.lm, "sentence": args.sentence_model}
    record = run_record(
        args,
        "contrast",
        inputs={
            "multiple_choice": args.multiple_choice,
            "train_captions": getattr(args, "train_captions", None),
        },
        models=models,
        results={
            "items_read": len(items),
            "items_written": len(built),
            "multiple_choice": MULTIPLE_CHOICE_FILE,
        },
    )
    rows = [item_row(item) for item in built]
    write_foils(args.output, rows, record, clip=TEXT, options=TEXTS, label=COUNT)
    print(f"wrote {len(built)} of {len(items)} items to {args.output}")
    return 0


def _verb_foil_maker(args: argparse.Namespace, nlp):
    import dataclasses

    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from foilkit.generation.contrast.verb_phrases import (
        VerbFoilModels,
        VerbFoilSettings,
        count_verb_lemmas,
        verb_phrase_foils,
    )
    from foilkit.generation.perplexity import load_text_lm

    config = VerbFoilSettings(
        **{f.name: getattr(args, f.name) for f in dataclasses.fields(VerbFoilSettings)}
    )
    models = VerbFoilModels(
        nlp=nlp,
        infill_model=T5ForConditionalGeneration.from_pretrained(args.t5).eval(),
        infill_tokenizer=AutoTokenizer.from_pretrained(args.t5),
        lm=load_text_lm(args.lm),
        sentence_embedder=SentenceTransformer(args.sentence_model),
        model_ids={"infill": args.t5, "perplexity": args.lm, "sentence": args.sentence_model},
    )
    counts = (
        count_verb_lemmas(nlp, read_lines(args.train_captions)) if args.train_captions else None
    )
    return lambda caption: verb_phrase_foils(caption, models, config=config, verb_counts=counts)


def _person_id(args: argparse.Namespace, rng: random.Random) -> int:
    from foilkit.generation.contrast.person_id import person_id_swap
    from foilkit.generation.foil import caption_rows, write_foils

    records = read_jsonl(args.captions, required=("id", "caption", "characters"))
    swap = functools.partial(person_id_swap, rng=rng, swap_probability=args.swap_probability)
    rows = caption_rows((r, swap(r["caption"], r["characters"])) for r in records)
    write_foils(args.output, rows, run_record(args, "contrast", inputs={"captions": args.captions}))
    print(f"wrote {len(rows)} rows to {args.output}")
    return 0
