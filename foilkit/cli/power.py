"""``foilkit power``: can a benchmark detect a difference, and how many items would it take?

foilkit power --benchmark vitatecs --config direction --annotations data/vitatecs --effect 2
foilkit power --dataset demo/benchmark --json
foilkit power runs/model-a runs/model-b --plot power.png

Before a run (``--benchmark`` and ``--config``, built from the annotations, or ``--dataset``, an
exported folder): per config, from its real structure (items, items per video, chance level),
the minimum detectable effect (MDE) at ``--alpha`` and ``--power`` of a paired comparison of two
models (foilkit compare's exact McNemar test) and of one model against chance (or ``--versus``),
and with ``--effect`` the items that effect needs; the accuracy and discordance assumed are
flags with stated defaults. From runs: one run folder gives the figures from its observed
per-item credits and videos; two give them from the observed discordant pairs, with the
achieved power of the McNemar test foilkit reports. :mod:`foilkit.power` computes every figure
and says its method; docs/power.md says how to read them.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from foilkit import power
from foilkit.builders import BENCHMARKS
from foilkit.builders.spec import group_names, subset_columns
from foilkit.cli.options import add_configs, chosen_configs, print_json
from foilkit.compare import paired_rows
from foilkit.errors import UserError, check_writable
from foilkit.folders import POWER, claim_folder
from foilkit.metrics import PAIRED_OUTCOMES, item_credits
from foilkit.run import RunFolder, RunResults


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="one or two foilkit evaluate run folders: the figures from their observed outcomes "
        "(none: before a run, from --benchmark or --dataset)",
    )
    parser.add_argument("--benchmark", help="the benchmark to size before a run")
    add_configs(parser, "configs to size (default: the benchmark's paper set, as 'all')")
    parser.add_argument(
        "--dataset",
        help="an exported folder or Hub dataset id to read the items from (foilkit demo's "
        "benchmark folder included), instead of building from the annotations",
    )
    parser.add_argument(
        "--annotations",
        help="local folder with the annotation files (default: download "
        "them from the upstream repository at the pinned commit)",
    )
    parser.add_argument(
        "--alpha",
        type=_fraction,
        default=power.DEFAULT_ALPHA,
        help="significance level of the tests (default: %(default)s)",
    )
    parser.add_argument(
        "--power",
        type=_fraction,
        default=power.DEFAULT_POWER,
        help="the power an effect must reach to be detectable (default: %(default)s)",
    )
    parser.add_argument(
        "--effect",
        type=float,
        metavar="POINTS",
        help="an accuracy difference in points: its power and the items it needs (n_required)",
    )
    parser.add_argument(
        "--accuracy",
        type=_fraction,
        help="before a run: model A's accuracy, a fraction (default: halfway between the "
        "config's chance level and 1; 0.6 where none is known)",
    )
    parser.add_argument(
        "--discordance",
        type=_fraction,
        help="share of items the two models disagree on (default: from --accuracy, the models' "
        f"outcomes correlated {power.DEFAULT_CORRELATION}, as lmms-eval assumes; from two runs: "
        "observed)",
    )
    parser.add_argument(
        "--versus",
        type=_fraction,
        metavar="ACCURACY",
        help="the accuracy one model is tested against, a fraction (default: the config's "
        "chance level)",
    )
    parser.add_argument(
        "--icc",
        type=float,
        default=power.DEFAULT_ICC,
        help="before a run: correlation of the outcomes of two items of one video, for the "
        "cluster simulation (default: %(default)s; a run measures its own)",
    )
    parser.add_argument(
        "--simulations",
        type=int,
        default=power.DEFAULT_SIMULATIONS,
        help="simulated or resampled data sets per power figure (default: %(default)s)",
    )
    parser.add_argument(
        "--simulation-seed",
        type=int,
        default=power.DEFAULT_SEED,
        help="seed of the simulations and resampling (default: %(default)s)",
    )
    parser.add_argument(
        "--groups",
        action="store_true",
        help="also size each group of a config on its own (VITATECS' aspects, ViLMA's subtests, "
        "TOMATO's reasoning types: the rows of the papers' tables)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--plot", help="write the power-versus-effect plot (PNG) here")
    parser.add_argument(
        "--out", help="folder for power.json and power.png (the plot goes here unless --plot)"
    )


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a fraction strictly between 0 and 1")
    return value


@dataclass(frozen=True)
class Items:
    """One config's items as the power figures see them: how many, their videos (cluster
    column values; ``None``: each item its own), the chance level of the paired outcome."""

    config: str
    metric: str
    outcome: str
    cluster: list[Any] | None
    n_items: int
    chance: float | None

    @property
    def sizes(self) -> np.ndarray:
        return power.cluster_sizes(self.cluster, self.n_items)


def headline(benchmark: Any, config: str) -> tuple[Any, str, float | None] | None:
    """The config's first per-item metric (its spec), the outcome foilkit compare tests first,
    and that outcome's declared chance level; ``None`` when the config has no per-item outcome
    (a retrieval pool)."""
    for metric in benchmark.metrics(config):
        if metric.matrix or metric.metric not in PAIRED_OUTCOMES:
            continue
        outcome = next(iter(PAIRED_OUTCOMES[metric.metric]))
        chance = next(
            (
                metric.chance[label]
                for label, key in metric.columns.items()
                if key.removeprefix("macro_") == outcome and label in metric.chance
            ),
            None,
        )
        return metric, outcome, chance
    return None


def config_items(
    benchmark: Any, config: str, rows: Mapping[str, Sequence[Any]], label: str | None = None
) -> Items | None:
    """:class:`Items` of ``rows`` (columns of the config's items, or of one group's), named
    ``label`` (default: the config); the chance level is the declared one, else each item's
    one in (1 + foils), averaged."""
    found = headline(benchmark, config)
    if found is None:
        return None
    metric, outcome, chance = found
    if chance is None and "foils" in rows:
        chance = float(np.mean([1 / (1 + len(foils)) for foils in rows["foils"]]))
    column = benchmark.cluster_column
    cluster = list(rows[column]) if column and column in rows else None
    n = len(rows["id"]) if "id" in rows else len(next(iter(rows.values())))
    return Items(label or config, metric.metric, outcome, cluster, n, chance)


def scopes(
    benchmark: Any, config: str, rows: Mapping[str, Sequence[Any]], groups: bool
) -> list[tuple[str, Mapping[str, Sequence[Any]]]]:
    """The config's rows and, with ``groups``, each group's (``config / group``), as
    ``foilkit compare`` tests them."""
    found = [(config, rows)]
    column = benchmark.group_column
    if groups and column in rows:
        found += [
            (f"{config} / {group}", subset_columns(rows, column, group))
            for group in group_names(rows[column])
        ]
    return found


def benchmark_items(
    args: argparse.Namespace,
) -> tuple[str, list[Items], list[tuple[str, str]]]:
    """Before a run: the benchmark's name, each chosen config's :class:`Items` (built from the
    annotations without videos, or read from ``--dataset``), and the configs left out, why."""
    from foilkit.evaluation import load_benchmark_split  # the builders and scorers: heavy

    name = args.benchmark
    if name is None and args.dataset is not None:
        from foilkit.builders.card import exported_benchmark

        name = exported_benchmark(args.dataset)
    if name is None:
        raise UserError(
            "name a benchmark (--benchmark NAME [--config ...]), an exported folder "
            "(--dataset PATH) or one or two run folders"
        )
    benchmark = BENCHMARKS.get(name)
    found, skipped = [], []
    for config in benchmark.configs_for(chosen_configs(args)):
        if headline(benchmark, config) is None:
            skipped.append((config, "a retrieval pool, no per-item test"))
            continue
        with _quiet_videos():  # no video is looked for: the structure needs none
            split = load_benchmark_split(
                benchmark,
                config,
                dataset=args.dataset,
                annotations=args.annotations,
                on_missing="keep",
            )
        for label, rows in scopes(benchmark, config, split.data.to_dict(), args.groups):
            found.append(config_items(benchmark, config, rows, label))
    return name, found, skipped


@contextmanager
def _quiet_videos() -> Iterator[None]:
    """The builders' report of rows without a video left unsaid (their warning would name an
    --on-missing the user never gave)."""
    log = logging.getLogger("foilkit.builders.videos")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _credits(benchmark: Any, config: str, rows: Mapping[str, Any]) -> np.ndarray:
    """Each row's credit in the config's headline outcome (1: right), as foilkit compare pairs
    them."""
    metric, outcome, _ = headline(benchmark, config)
    credits = item_credits(
        metric.metric, metric.inputs(rows), rows["score_kind"][0], dict(metric.options)
    )
    return np.asarray(credits[PAIRED_OUTCOMES[metric.metric][outcome]], dtype=np.float64)


def run_figures(args: argparse.Namespace, q: power.Question) -> tuple[str, list[dict[str, Any]]]:
    """From one or two run folders: per config they share, the observed figures."""
    folders = [RunFolder(Path(run)) for run in args.runs]
    results = [RunResults.load(folder) for folder in folders]
    if len({r.benchmark for r in results}) > 1:
        raise UserError(
            f"{args.runs[0]} evaluated {results[0].benchmark}, {args.runs[1]} evaluated "
            f"{results[1].benchmark}: pair runs of one benchmark"
        )
    benchmark = results[0].spec
    configs = [c for c in results[0].configs if all(c in r.configs for r in results)]
    if args.configs:
        configs = [c for c in configs if c in args.configs]
    sections = []
    for config in configs:
        if headline(benchmark, config) is None:
            continue
        if len(folders) == 2:
            runs = paired_rows(folders[0], folders[1], config)
        else:
            scores = folders[0].load_scores(config)
            if scores is None:
                continue
            table = scores.to_dict()
            keep = [i for i, error in enumerate(table["error"]) if not error]
            runs = ({name: [values[i] for i in keep] for name, values in table.items()},)
        for scoped in zip(*(scopes(benchmark, config, rows, args.groups) for rows in runs)):
            label, first = scoped[0]
            items = config_items(benchmark, config, first, label)
            credits = [_credits(benchmark, config, rows) for _, rows in scoped]
            if len(credits) == 2:
                figures = power.observed_paired_figures(
                    credits[0] == 1, credits[1] == 1, items.cluster, q
                )
            else:
                figures = _one_run_figures(args, items, credits[0], q)
            sections.append(_section(items, figures, args.versus or items.chance))
    if not sections:
        raise UserError(f"{', '.join(args.runs)}: no config with per-item scores to size")
    return results[0].benchmark, sections


def _one_run_figures(
    args: argparse.Namespace, items: Items, credit: np.ndarray, q: power.Question
) -> list[power.Figure]:
    """One run: against chance (or ``--versus``) from its credits, and a paired comparison with
    a model like it (discordance from its observed accuracy unless given)."""
    figures = []
    null = args.versus or items.chance
    if null is not None:
        figures += power.observed_versus_figures(credit, items.cluster, null, q)
    accuracy = float(np.clip((credit == 1).mean(), 0.01, 0.99))
    discordance = args.discordance or power.discordance_from_accuracy(accuracy)
    figures += power.paired_figures(items.sizes, discordance, _with_icc(q, credit, items))
    return figures


def _with_icc(q: power.Question, credit: np.ndarray, items: Items) -> power.Question:
    """``q`` with the run's own within-video correlation of credits (from its design effect:
    ``1 + (m - 1) icc``, ``m`` the size-weighted mean items per video)."""
    sizes = items.sizes
    weighted = float((sizes**2).sum() / sizes.sum())
    if weighted <= 1:
        return q
    effect = power.Resampled.of(credit, items.cluster).design_effect
    icc = min(0.95, max(0.0, (effect - 1) / (weighted - 1)))
    return replace(q, icc=icc)


def before_figures(args: argparse.Namespace, q: power.Question) -> tuple[str, list[dict[str, Any]]]:
    """Before a run: per config, the paired and the one-model figures under the assumptions."""
    name, configs, skipped = benchmark_items(args)
    sections = []
    for items in configs:
        chance = items.chance
        accuracy = args.accuracy or (0.6 if chance is None else chance + (1 - chance) / 2)
        discordance = args.discordance or power.discordance_from_accuracy(accuracy)
        figures = power.paired_figures(items.sizes, discordance, q)
        null = args.versus or chance
        if null is not None:
            figures += power.versus_figures(items.sizes, null, q)
        section = _section(items, figures, null)
        section["assumed_accuracy"] = round(accuracy, 4)
        sections.append(section)
    sections += [{"config": config, "skipped": why} for config, why in skipped]
    return name, sections


def _section(items: Items, figures: list[power.Figure], null: float | None) -> dict[str, Any]:
    return {
        "config": items.config,
        "metric": items.metric,
        "outcome": items.outcome,
        "n_items": items.n_items,
        "n_clusters": int(items.sizes.size),
        "chance": None if items.chance is None else round(items.chance, 4),
        "versus": None if null is None else round(null, 4),
        "figures": figures,
    }


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_writable(args.out, "--out")
    if len(args.runs) > 2:
        raise UserError(f"give one or two run folders, not {len(args.runs)}")
    if args.runs and (args.benchmark or args.dataset):
        raise UserError(
            "size either run folders or a benchmark before a run: --benchmark/--dataset "
            "do not go with RUN folders"
        )
    if args.effect is not None and not 0 < args.effect < 100:
        raise UserError(f"--effect {args.effect:g}: an accuracy difference in points, in (0, 100)")
    if args.simulations < 1:
        raise UserError(f"--simulations {args.simulations}: at least 1")
    if not 0 <= args.icc < 1:
        raise UserError(f"--icc {args.icc:g}: a correlation in [0, 1)")
    q = power.Question(
        args.alpha,
        args.power,
        None if args.effect is None else args.effect / 100,
        args.icc,
        args.simulations,
        args.simulation_seed,
    )
    out = None if args.out is None else claim_folder(args.out, POWER)  # new, empty or foilkit's
    name, sections = run_figures(args, q) if args.runs else before_figures(args, q)
    plot = args.plot or (str(out / "power.png") if out else None)
    if plot is not None:
        plot_power(name, sections, q, Path(plot))
    summary = {
        "benchmark": name,
        "runs": list(args.runs),
        "alpha": q.alpha,
        "power": q.power,
        "effect": args.effect,
        "configs": [_json_section(s) for s in sections],
        "plot": plot,
    }
    if out is not None:
        (out / "power.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if args.json:
        print_json(summary)
    else:
        print(table(name, sections, q))
    return 0


def _json_section(section: Mapping[str, Any]) -> dict[str, Any]:
    if "figures" not in section:  # a config left out, and why
        return dict(section)
    return {**section, "figures": [f.to_record() for f in section["figures"]]}


#: The terminal table's columns.
COLUMNS = ("config", "question", "method", "items", "videos", "MDE (points)", "assumptions")


def table(name: str, sections: Sequence[Mapping[str, Any]], q: power.Question) -> str:
    """The figures as a text table, one row per config, question and method, and what the
    methods are."""
    columns = list(COLUMNS)
    if q.effect is not None:
        columns[-1:-1] = [f"power at {100 * q.effect:g}", "n_required"]
    rows = []
    notes = []
    for section in sections:
        if "skipped" in section:
            notes.append(f"{section['config']}: {section['skipped']}")
            continue
        for f in section["figures"]:
            row = [
                section["config"],
                "A vs B" if f.question == "paired" else f"vs {100 * section['versus']:g}%",
                f.method,
                str(f.n_items),
                str(f.n_clusters),
                "—" if f.mde is None else f"{f.mde:.2f}",
            ]
            if q.effect is not None:
                row += [
                    "" if f.power_at_effect is None else f"{f.power_at_effect:.3f}",
                    "—" if f.n_required is None else str(f.n_required),
                ]
            row.append(_assumptions(f))
            rows.append(row)
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    rows = [columns, ["-" * w for w in widths], *rows]
    lines = [
        f"foilkit power: {name}, alpha = {q.alpha:g}, power = {q.power:g}",
        *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows),
        "",
        "MDE: the smallest accuracy difference (points) the test detects with the power above; "
        "—: none it can (a paired effect is at most the share of discordant items).",
        *(f"{method}: {text}" for method, text in power.METHODS.items()),
        *notes,
    ]
    return "\n".join(line.rstrip() for line in lines)


def _assumptions(figure: power.Figure) -> str:
    shown = {k: v for k, v in figure.assumptions.items() if k not in ("simulations", "seed")}
    if figure.achieved_power is not None:
        shown["achieved power"] = figure.achieved_power
    return ", ".join(
        f"{k.replace('_', ' ')} {v:g}" if isinstance(v, float) else f"{k.replace('_', ' ')} {v}"
        for k, v in shown.items()
    )


def plot_power(
    name: str, sections: Sequence[Mapping[str, Any]], q: power.Question, path: Path
) -> Path:
    """Power against the effect (points), one panel per config, a curve per question and
    method, the target power dotted and each MDE marked."""
    from foilkit.report import _pyplot

    plt = _pyplot()
    shown = [s for s in sections if "figures" in s]
    fig, axes = plt.subplots(
        len(shown) or 1, 1, figsize=(6.5, 2.8 * max(1, len(shown))), squeeze=False
    )
    for ax, section in zip(axes[:, 0], shown, strict=False):
        figures = section["figures"]
        mdes = [f.mde for f in figures if f.mde is not None]
        top = min(100.0, 2.5 * max(mdes)) if mdes else 20.0
        effects = np.linspace(0, top, 26)[1:] / 100
        for f in figures:
            curve = [_safe(f.curve, e) for e in effects]
            label = f"{'A vs B' if f.question == 'paired' else 'vs chance'}: {f.method}"
            (line,) = ax.plot(100 * effects, curve, label=label)
            if f.mde is not None:
                ax.axvline(f.mde, color=line.get_color(), linestyle=":", linewidth=0.8)
        ax.axhline(q.power, color="0.3", linestyle="--", linewidth=0.8)
        ax.set_ylim(0, 1.02)
        ax.set_title(
            f"{name} / {section['config']} ({section['n_items']} items, "
            f"{section['n_clusters']} videos)",
            fontsize=9,
        )
        ax.set_ylabel("power")
        ax.legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel(f"effect (accuracy difference, points); alpha = {q.alpha:g}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _safe(curve: Any, effect: float) -> float:
    """The curve's power at ``effect``; NaN where the design cannot have it (an effect above the
    discordance, or an accuracy above 1; a figure without a curve: outcomes that never vary)."""
    if curve is None:
        return math.nan
    try:
        return curve(effect)
    except ValueError:
        return math.nan
