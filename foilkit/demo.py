"""``foilkit demo``: the whole pipeline, offline on a fresh machine, in < 3 minutes on 2 CPUs.

It renders a small synthetic temporal benchmark whose captions are true and whose foils are
false *by construction* (:mod:`foilkit.synthetic.videos`): which way a square moves
(``direction``), which of two squares appears first (``order``) and how fast a square moves
(``speed``). The benchmark is written in the exported Hub layout (parquet per config plus a
dataset card, videos beside it as relative paths), then evaluated with tiny local models and
the temporal controls through :func:`foilkit.evaluation.evaluate`, the code path of
``foilkit evaluate``; a side-by-side report with plots closes the run.

The tiny models are random, so their accuracies are chance-level: the demo shows the
machinery (decode once, score, metrics with confidence intervals, controls, report), not a
finding about any model. Then (:mod:`foilkit.finetune.demo`) a tiny CLIP with CLIP4Clip's
temporal module is fine-tuned on a train split of new synthetic videos, with RTime's reversed
videos as hard negatives and without them, and both are evaluated on the same test split (the
hard-negative model also under the reversed and shuffled controls), the two compared by a
paired test: what ``foilkit finetune`` buys.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foilkit.folders import DEMO, claim_folder
from foilkit.synthetic.items import demo_items

#: Benchmark name of the synthetic benchmark (:mod:`foilkit.builders.synthetic`).
DEMO_BENCHMARK = "synthetic"
#: Tiny model families the demo scores (``foilkit.synthetic.models``): a frame-based dual encoder
#: (order-invariant by construction) and a native video-text encoder.
DEMO_MODELS = ("clip", "xclip")
#: The temporal controls run beside the normal frame order (``None``).
DEMO_CONTROLS = (None, "reversed", "shuffled")


def write_demo_benchmark(out_dir: str | os.PathLike) -> Path:
    """Render the videos and write the benchmark in the exported Hub layout; returns ``out_dir``.

    ``out_dir/videos/<aspect>/<name>.mp4`` holds the videos; each config (``direction``,
    ``order``, ``speed`` and ``all``) is ``out_dir/<config>/test-00000-of-00001.parquet`` with
    the canonical foilkit columns and ``video`` stored as a path relative to ``out_dir/videos``;
    ``out_dir/README.md`` is the dataset card whose YAML ``configs:`` lets
    ``datasets.load_dataset(out_dir, config)`` read it back; ``out_dir/eval.yaml`` registers its
    leaderboard tasks (``direction``, ``order``, ``speed``, ``average``, and each again under
    every temporal control: ``direction_reversed``, ...).
    """
    import datasets

    from foilkit.builders.hub import write_eval_yaml
    from foilkit.builders.schema import TEXT, canonical_features
    from foilkit.synthetic.videos import write_video

    out = Path(out_dir)
    videos = out / "videos"
    rows = []
    for index, item in enumerate(demo_items()):
        scene = item["scene"]
        name = f"{item['aspect']}/{index:03d}_{scene.kind}_{scene.colour}_{scene.direction}.mp4"
        if not (videos / name).is_file():
            write_video(videos / name, scene)
        rows.append(
            {
                "id": f"{item['aspect']}-{index:03d}",
                "video": name,
                "video_path": name,
                "caption": item["caption"],
                "foils": item["foils"],
                "start": None,
                "end": None,
                "reversed": False,
                "aspect": item["aspect"],
            }
        )
    features = canonical_features(aspect=TEXT)
    configs = {
        aspect: [r for r in rows if r["aspect"] == aspect]
        for aspect in dict.fromkeys(r["aspect"] for r in rows)
    }
    configs["all"] = rows
    for config, config_rows in configs.items():
        path = out / config / "test-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        # An explicit batch size: the default estimate would stat the (relative) video paths.
        datasets.Dataset.from_list(config_rows, features=features).to_parquet(path, batch_size=100)
    (out / "README.md").write_text(_card(configs), encoding="utf-8")
    write_eval_yaml(out, DEMO_BENCHMARK, {name: ["test"] for name in configs})
    return out


def _card(configs: dict[str, list[dict[str, Any]]]) -> str:
    import yaml

    from foilkit.builders.card import BENCHMARK_KEY, card_configs

    header = {
        BENCHMARK_KEY: DEMO_BENCHMARK,
        "license": "cc0-1.0",
        "pretty_name": "foilkit synthetic temporal benchmark",
        "task_categories": ["video-text-to-text"],
        "configs": card_configs(
            {name: {"test": f"{name}/test-*.parquet"} for name in configs}, default="all"
        ),
    }
    counts = "\n".join(f"| {name} | {len(rows)} |" for name, rows in configs.items())
    return (
        f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n"
        "# foilkit synthetic temporal benchmark\n\n"
        "Procedurally rendered videos (`foilkit.synthetic.videos`) with a true caption and a "
        "temporal foil each: the direction a square moves, the order in which two squares appear, "
        "and how fast a square moves. Captions are true and foils false by construction.\n\n"
        "Videos are stored as paths relative to the `videos/` folder beside this card; pass it as "
        "the video root (`foilkit evaluate --videos <folder>/videos`).\n\n"
        f"| config | rows |\n|---|---|\n{counts}\n"
    )


def run_demo(
    out_dir: str | os.PathLike,
    *,
    models: Sequence[str] = DEMO_MODELS,
    controls: Sequence[str | None] = DEMO_CONTROLS,
    num_frames: int = 8,
    n_resamples: int = 1000,
    num_workers: int = 0,
    progress: bool = True,
    finetune: bool = True,
    seed: int = 0,
) -> Path:
    """Build the synthetic benchmark, evaluate each tiny model under each control, write the report.

    Returns the path of the side-by-side ``report.md``; each evaluation's run folder is
    ``out_dir/runs/<model>[-<control>]``. ``finetune``: also fine-tune (with ``seed``) and
    evaluate the temporal CLIPs of :mod:`foilkit.finetune.demo` (``out_dir/finetune/``, runs
    ``out_dir/runs/clip-finetuned*``), and the paired test of the two in the report (and
    ``out_dir/comparison.json``). ``progress``: the scoring engine's bars when stderr is
    a terminal, one ``demo: ...`` line per phase when not; the libraries' own bars (datasets,
    transformers, huggingface_hub) never.
    """
    import transformers  # noqa: F401  (imported now so that its progress bars are switched off too)

    from foilkit.evaluation import evaluate
    from foilkit.progress import library_progress_bars
    from foilkit.report import write_side_by_side
    from foilkit.scorers.options import ScoreOptions
    from foilkit.synthetic.models import tiny_model_path

    out = claim_folder(out_dir, DEMO)  # new, empty or an earlier demo's (foilkit.folders)
    bars = progress and sys.stderr.isatty()  # the engine's bars; else one line per phase

    def say(text: str) -> None:  # without bars, one ``demo: <text>`` line on stderr per phase
        if progress and not bars:
            print(f"demo: {text}", file=sys.stderr, flush=True)

    runs, extra = [], []
    with library_progress_bars(enabled=False):
        say("rendering the synthetic benchmark")
        benchmark = write_demo_benchmark(out / "benchmark")

        def evaluate_model(
            model: str, *, run_name: str, label: str, control: str | None, cache: bool = False
        ) -> Path:
            """One demo run: ``model`` on the whole benchmark into ``runs/<run_name>``;
            ``cache``: share the embedding cache (not for fine-tuned folders, whose weights
            change with every demo run)."""
            options = ScoreOptions(
                num_frames=num_frames,
                control=control,
                num_workers=num_workers,
                progress=bars,
                cache_dir=str(out / "embedding-cache") if cache else None,
                use_cache=cache,
            )
            return evaluate(
                DEMO_BENCHMARK,
                model,
                config="all",
                dataset=benchmark,
                videos=benchmark / "videos",
                out_dir=out / "runs" / run_name,
                overwrite=True,
                n_resamples=n_resamples,
                label=label,
                score_options=options,
            ).run_dir

        plan = list(itertools.product(models, controls))
        for index, (family, control) in enumerate(plan, start=1):
            label = family if control is None else f"{family} ({control})"
            say(f"[{index}/{len(plan)}] evaluating {label}")
            run_name = family if control is None else f"{family}-{control}"
            model = str(tiny_model_path(family))
            runs.append(
                evaluate_model(model, run_name=run_name, label=label, control=control, cache=True)
            )
        if finetune:
            from foilkit.finetune.demo import finetune_demo_runs, paired_test_lines

            def evaluate_finetuned(
                model: str, *, run_name: str, label: str, control: str | None
            ) -> Path:
                say(f"evaluating {label}")
                return evaluate_model(model, run_name=run_name, label=label, control=control)

            runs += finetune_demo_runs(
                out / "finetune", evaluate_finetuned, say=say, progress=bars, seed=seed
            )
            say("testing the fine-tuned models against each other (paired)")
            extra = paired_test_lines(out / "runs", out, n_resamples=n_resamples)
        say("writing the side-by-side report")
        title = "foilkit demo: tiny models and temporal controls"
        if finetune:
            title += "; a temporal CLIP fine-tuned with and without reversed hard negatives"
        return write_side_by_side(runs, out, title=title, extra=extra)
