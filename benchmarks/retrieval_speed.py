"""Retrieval metric speed: ``retrieval_recall`` (R@K, MdR, MnR) on large random pools.

A pool of ``n`` views and ``n`` texts (view ``i`` matches text ``i``, as in RTime's pools of
videos and their reversed copies) gets a random float32 score matrix whose true pairs score
high enough that recall@10 is about 0.1. For each size and device it times, with the peak
memory each needs beyond the matrix itself:

- ``retrieval_recall``: the metric's pure function, T2V and V2T, no confidence intervals;
- ``retrieval_recall-ci1000``: the same with its default 1000-resample bootstrap intervals;
- ``dense-argsort``: the CLIP4Clip-style computation most retrieval code uses: argsort every
  row of the matrix (and of its transpose), find where the true text landed. It materialises
  an ``n x n`` int64 index matrix, so it runs only where that fits in memory.

and checks that both give the same recall@K (random scores can tie; the metric counts those
ties and the comparison allows exactly that many queries to differ).

Usage::

    python benchmarks/retrieval_speed.py --quick                 # 2k x 2k on CPU
    python benchmarks/retrieval_speed.py --device cpu,cuda       # 20k and 100k, CPU and GPU
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import torch
from measure import describe_hardware, environment, measure, phase_record, render_table, write_json

from foilkit.metrics.retrieval_recall.retrieval_recall import retrieval_recall

KS = (1, 5, 10)
SIZES = {"quick": (2_000,), "full": (20_000, 100_000)}
# Bytes per cell the dense computation holds at its peak: the negated float32 copy, the int64
# argsort and the boolean match mask.
DENSE_BYTES_PER_CELL = 4 + 8 + 1
# Use at most this share of the memory available when the run starts.
MEMORY_SHARE = 0.8
# The printed table's columns of a method that ran.
MEASURED = ("seconds", "time / first", "extra host MiB", "extra GPU MiB", "T2V R@1 / R@10")


def random_pool(n: int, device: str, seed: int = 0) -> Any:
    """``n x n`` float32 scores, the true pair of view ``i`` (text ``i``) beaten by ~U(0, 100)
    other texts on average. A numpy array on CPU, a torch tensor on a GPU."""
    generator = torch.Generator(device=device).manual_seed(seed)
    scores = torch.rand(n, n, generator=generator, device=device)
    better = torch.rand(n, generator=generator, device=device) * 100 / n
    scores.diagonal().copy_(1 - better)
    return scores.numpy() if device == "cpu" else scores


def metric_recall(scores: Any, n_resamples: int) -> dict[str, float]:
    result = retrieval_recall(scores, ks=KS, n_resamples=n_resamples)
    recall = {key: result[key] for direction in ("t2v", "v2t") for key in _keys(direction)}
    return {**recall, "tied": result["t2v_tied"] + result["v2t_tied"]}


def _keys(direction: str) -> list[str]:
    return [f"{direction}_r{k}" for k in KS]


def _true_ranks_numpy(matrix: np.ndarray) -> np.ndarray:
    order = np.argsort(-matrix, axis=1)
    return np.nonzero(order == np.arange(len(order))[:, None])[1] + 1


def _true_ranks_torch(matrix: torch.Tensor) -> np.ndarray:
    order = torch.argsort(-matrix, dim=1)
    truth = torch.arange(len(order), device=order.device)[:, None]
    return ((order == truth).nonzero()[:, 1] + 1).cpu().numpy()


def dense_argsort_recall(scores: Any) -> dict[str, float]:
    """Recall@K the dense way: argsort each row (best first); the true text's position + 1."""
    true_ranks = _true_ranks_numpy if isinstance(scores, np.ndarray) else _true_ranks_torch
    recall = {}
    for direction, matrix in (("v2t", scores), ("t2v", scores.T)):
        ranks = true_ranks(matrix)
        recall.update({key: float(np.mean(ranks <= k)) for k, key in zip(KS, _keys(direction))})
    return recall


def available_bytes(device: str) -> int:
    if device == "cpu":
        return psutil.virtual_memory().available
    free, _ = torch.cuda.mem_get_info()
    return free


# name -> (compute, bytes it needs beyond the matrix, as a function of n)
METHODS: dict[str, tuple[Callable[[Any], dict[str, float]], Callable[[int], int]]] = {
    "retrieval_recall": (lambda scores: metric_recall(scores, 0), lambda n: 0),
    "retrieval_recall-ci1000": (lambda scores: metric_recall(scores, 1000), lambda n: 0),
    "dense-argsort": (dense_argsort_recall, lambda n: DENSE_BYTES_PER_CELL * n * n),
}


def bench_pool(n: int, device: str, methods: Sequence[str]) -> list[dict[str, Any]]:
    """``methods`` on one random pool; a method that would not fit is reported, not run."""
    scores = random_pool(n, device)
    results, reference = [], None
    for name in methods:
        compute, needs = METHODS[name]
        row: dict[str, Any] = {"n": n, "device": device, "method": name}
        room = available_bytes(device)
        if needs(n) > MEMORY_SHARE * room:
            row["skipped"] = (
                f"needs ~{needs(n) / 2**30:.0f} GiB beyond the scores, {room / 2**30:.0f} GiB free"
            )
            results.append(row)
            continue
        with measure(name) as phase:
            recall = compute(scores)
        row.update(phase=phase_record(phase), recall=recall)
        if reference is None:
            reference = recall
        else:  # each tie may move one query across a cut-off, in either direction
            allowed = reference["tied"] / n
            row["agrees"] = all(
                abs(recall[key] - reference[key]) <= allowed + 1e-12
                for direction in ("t2v", "v2t")
                for key in _keys(direction)
            )
        results.append(row)
    del scores
    if device != "cpu":
        torch.cuda.empty_cache()
    return results


def table(rows: Sequence[dict[str, Any]]) -> str:
    first = {}  # the first method measured on each pool: the reference for times and recall
    for row in rows:
        if "phase" in row:
            first.setdefault((row["n"], row["device"]), row["phase"]["seconds"])
    lines = []
    for row in rows:
        line = {"n x n": row["n"], "device": row["device"], "method": row["method"]}
        if "skipped" in row:
            measured = dict.fromkeys(MEASURED, "-")
            lines.append({**line, **measured, "recall@K": f"not run: {row['skipped']}"})
            continue
        phase, recall = row["phase"], row["recall"]
        gpu = phase["peak_gpu_mib"]
        measured = {
            "seconds": phase["seconds"],
            "time / first": f"{phase['seconds'] / first[(row['n'], row['device'])]:.2f}x",
            "extra host MiB": phase["peak_rss_mib"] - phase["start_rss_mib"],
            "extra GPU MiB": None if gpu is None else gpu - phase["start_gpu_mib"],
            "T2V R@1 / R@10": f"{recall['t2v_r1']:.4f} / {recall['t2v_r10']:.4f}",
        }
        agrees = {True: "agrees", False: "DIFFERS", None: "reference"}[row.get("agrees")]
        lines.append({**line, **measured, "recall@K": agrees})
    return render_table("Retrieval metric: time and memory beyond the score matrix", lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        dest="size",
        action="store_const",
        const="quick",
        default="full",
        help=f"{SIZES['quick'][0]} x {SIZES['quick'][0]} only",
    )
    parser.add_argument("--sizes", help="comma-separated pool sizes (overrides --quick)")
    parser.add_argument("--device", default="cpu", help="comma-separated: cpu, cuda")
    parser.add_argument(
        "--methods", default=",".join(METHODS), help=f"comma-separated, from {list(METHODS)}"
    )
    parser.add_argument("--json", type=Path, help="write the full record here")
    args = parser.parse_args(argv)
    args.methods = args.methods.split(",")
    unknown = [name for name in args.methods if name not in METHODS]
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {list(METHODS)}")
    args.sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else list(SIZES[args.size])
    args.device = args.device.split(",")
    if "cuda" in args.device and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    env = environment()
    print(f"# retrieval speed: {describe_hardware(env)}\n")
    rows = [
        row
        for n in args.sizes
        for device in args.device
        for row in bench_pool(n, device, args.methods)
    ]
    print(table(rows))
    if args.json:
        record = {"environment": env, "sizes": args.sizes, "rows": rows}
        print(f"full record: {write_json(args.json, record)}")
    return 0 if all(row.get("agrees", True) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
