"""The demo's figures, as the README and ``docs/getting-started.md`` quote them.

Runs ``foilkit demo`` (:func:`foilkit.demo.run_demo`) at each seed asked for — the whole demo
at the first, only the fine-tuned models at the others (the tiny models it starts from do not
change with the seed) — and writes its side-by-side table and the paired test of the two
fine-tuned models, cell by cell as the report prints them, to
``benchmarks/results/cpu2_demo.json``; ``python docs/hooks.py`` then writes the quoted blocks
from it. ``--from DIR`` reads a demo folder already made (``foilkit demo --out DIR``) instead of
running one.

    python benchmarks/demo_figures.py [--seeds 0 1 2] [--from runs/demo]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from measure import environment, write_json

from foilkit.demo import run_demo
from foilkit.report_tables import run_table, runs_tables, table_cells, unique_labels
from foilkit.run import RunResults

RESULTS = Path(__file__).parent / "results" / "cpu2_demo.json"


def headline(demo_dir: Path) -> dict[str, Any]:
    """The demo report's headline table (``runs_tables``' first, the one ``foilkit demo``
    prints): its header, and per run folder its label and cells; the bootstrap's resamples."""
    folders = sorted(path for path in (demo_dir / "runs").iterdir() if path.is_dir())
    results = [RunResults.load(folder) for folder in folders]
    labels = unique_labels([r.label for r in results])
    (table, *_) = runs_tables([run_table(r) for r in results], labels)
    header, rows = table_cells(table)
    names = dict(zip(labels, (folder.name for folder in folders), strict=True))
    return {
        "n_resamples": results[0].bootstrap.n_resamples,
        "header": header,
        "rows": [
            {"run": names.get(label, label), "label": label, "cells": cells}
            for label, cells in rows
        ],
    }


def paired(demo_dir: Path) -> dict[str, Any]:
    """The paired test of the two fine-tuned models on every scope, as the demo ran and
    reported it (its ``comparison.json``: ``foilkit compare``'s tests)."""
    tests = json.loads((demo_dir / "comparison.json").read_text(encoding="utf-8"))["tests"]
    return {
        scope: {
            "difference": entry["bootstrap"]["difference"],
            "difference_ci": entry["bootstrap"]["difference_ci"],
            "p_value": entry["mcnemar"]["p_value"],
            "a_only": entry["mcnemar"]["a_only"],
            "b_only": entry["mcnemar"]["b_only"],
        }
        for scope, entry in tests["all"]["pairwise_foil_accuracy"].items()
    }


def seed_record(demo_dir: Path, *, seconds: float | None) -> dict[str, Any]:
    return {"seconds": seconds, **headline(demo_dir), "paired": paired(demo_dir)}


def run_seed(out: Path, seed: int, *, whole: bool, n_resamples: int) -> dict[str, Any]:
    """``foilkit demo --training-seed seed`` into ``out`` (``whole``: with the tiny models.)"""
    started = time.perf_counter()
    run_demo(
        out, seed=seed, n_resamples=n_resamples, progress=False, **({} if whole else {"models": ()})
    )
    seconds = time.perf_counter() - started
    return seed_record(out, seconds=seconds if whole else None)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--from", dest="source", type=Path, help="a demo folder already made")
    parser.add_argument("--n-resamples", type=int, default=1000, help="when the demo is run here")
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    seeds: Mapping[str, Any]
    if args.source is not None:
        seeds = {"0": seed_record(args.source, seconds=None)}
    else:
        with tempfile.TemporaryDirectory(prefix="foilkit-demo-") as tmp:
            seeds = {
                str(seed): run_seed(
                    Path(tmp) / f"seed{seed}",
                    seed,
                    whole=index == 0,
                    n_resamples=args.n_resamples,
                )
                for index, seed in enumerate(args.seeds)
            }
    record = {
        "command": "foilkit demo --training-seed SEED",
        "environment": environment(),
        "seeds": seeds,
    }
    print(f"wrote {write_json(args.output, record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
