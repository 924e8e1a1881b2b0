"""What ``foilkit evaluate`` computes for each benchmark, as data.

A :class:`Benchmark` names its builder and configs, what ``--config all`` evaluates, the
metadata column that makes the rows of its paper's table (aspect, subtest, foil type), the
column items cluster by for the bootstrap (several items share a video), and per config the
:class:`MetricSpec` list: which ``foilkit.metrics`` function, with which options (tie policy),
how per-sample score rows become its inputs, and which of its outputs fill which table column.

The mapping functions only rearrange the scorer's per-sample columns (schema:
``caption_score``, ``foil_scores``, ``proficiency_*``, metadata) or its views x texts matrix;
every number comes from the metric functions themselves, called as
``foilkit.metrics.<name>.<name>.<name>(**inputs, score_kind=..., **options, n_resamples=...,
seed=...)`` (plus ``cluster=`` the cluster column's values, unless the inputs set it) and
returning a flat dict where each reported key ``k`` comes with ``k_ci`` = ``[low, high]`` and
the item count ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Per-sample rows as columns: name -> one value per scored (error-free) row.
Columns = Mapping[str, Sequence[Any]]


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a benchmark's paper, computed from a run's per-sample scores.

    Attributes:
        metric: the ``foilkit.metrics`` module and function name.
        inputs: per-sample columns (or, with ``matrix=True``, ``{"scores": views x texts,
            "ids": ..., "texts": ...}``) -> the function's data keyword arguments.
        columns: report column label -> key of the function's result.
        options: keyword options (tie policy, ...); ``score_kind`` is added from the run.
        matrix: computed from the scorer's retrieval matrix (``foilkit.score_matrix``).
        per_group: also computed on each group's items (the table's rows).
    """

    metric: str
    inputs: Callable[[Mapping[str, Any]], dict[str, Any]]
    columns: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)
    matrix: bool = False
    per_group: bool = True


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as ``foilkit evaluate`` sees it (see the module docstring)."""

    name: str
    title: str
    builder: str | None
    configs: tuple[str, ...]
    all_configs: tuple[str, ...]
    metrics: Callable[[str], tuple[MetricSpec, ...]]
    group_column: str | None = None
    group_label: str = "group"
    cluster_column: str | None = "video_path"
    split: str = "test"
    paper_table: str = ""
    #: label of a report row averaging the overall rows of ``all_configs`` (each config's values
    #: weigh the same), shown when a run has them all: ViLMA's "Avg.", "the average of combined
    #: scores (P+T) among each task" (and of P and T alike).
    summary: str | None = None

    def configs_for(self, config: str | None) -> tuple[str, ...]:
        """The configs ``--config`` names: one config, ``all`` (see ``all_configs``) or the default."""
        if config in (None, "all"):
            return self.all_configs
        if config not in self.configs:
            raise ValueError(
                f"{self.name} has no config {config!r}; choose from {('all', *self.configs)}"
            )
        return (config,)


# --- per-sample columns -> metric inputs ----------------------------------------------------------


def _pairwise(rows: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "caption_scores": list(rows["caption_score"]),
        "foil_scores": [list(f) for f in rows["foil_scores"]],
    }


def _aspects(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Caption-vs-counterfactual pairs with each item's aspect (``macro_accuracy``: the mean over
    aspects, VITATECS Table 3's "Avg.")."""
    return {**_pairwise(rows), "groups": list(rows["aspect"])}


def _proficiency(rows: Mapping[str, Any]) -> dict[str, Any]:
    """ViLMA's pairs, with each item's subtest (the ``macro_*`` results average the subtests)."""
    return {
        **_pairwise(rows),
        "proficiency_caption_scores": list(rows["proficiency_caption_score"]),
        "proficiency_foil_scores": [list(f) for f in rows["proficiency_foil_scores"]],
        "groups": list(rows["subtest"]),
    }


def _multiple_choice(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Option scores back in published order: the caption's score at ``label``, foils around it."""
    scores = []
    for caption_score, foil_scores, label in zip(
        rows["caption_score"], rows["foil_scores"], rows["label"], strict=True
    ):
        options = list(foil_scores)
        options.insert(int(label), caption_score)
        scores.append(options)
    return {"scores": scores, "labels": [int(label) for label in rows["label"]]}


def _binary_blocks(rows: Mapping[str, Any]) -> dict[str, Any]:
    """RTime-Binary's 2x2 block per source video: [forward, reversed] views x [forward, reverse] captions.

    Sources with only one of their two views scored (the other's video failed) are left out.

    A forward row holds (its view, forward caption) and (its view, reverse caption) as its
    caption and foil; a reversed row holds (its view, reverse caption) and (its view, forward caption).
    """
    views: dict[str, dict[str, tuple[float, float]]] = {}
    for source, direction, caption, foils in zip(
        rows["source_id"],
        rows["direction"],
        rows["caption_score"],
        rows["foil_scores"],
        strict=True,
    ):
        if len(foils) != 1:
            raise ValueError(
                f"RTime source {source!r} ({direction}): expected one foil score, got {list(foils)}"
            )
        forward_caption, reverse_caption = (
            (caption, foils[0]) if direction == "forward" else (foils[0], caption)
        )
        views.setdefault(source, {})[direction] = (forward_caption, reverse_caption)
    blocks = [
        [list(pair["forward"]), list(pair["reverse"])] for pair in views.values() if len(pair) == 2
    ]
    return {"scores": blocks, "cluster": None}  # one block per source video: nothing to cluster


def _retrieval(matrix: Mapping[str, Any]) -> dict[str, Any]:
    """The views x texts matrix with its ground truth: view ``i`` matches every text equal to caption ``i``."""
    texts = list(matrix["texts"])
    positions: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        positions.setdefault(text, []).append(index)
    return {"scores": matrix["scores"], "ground_truth": [positions[text] for text in texts]}


# --- the benchmarks -------------------------------------------------------------------------------

ACCURACY = {"accuracy": "accuracy"}
PAIRWISE_STRICT = MetricSpec(
    "pairwise_foil_accuracy", _aspects, {"accuracy": "macro_accuracy"}, {"ties": "strict"}
)  # VITATECS' scripts: caption > counterfactual; several aspects: their mean (Table 3 "Avg.")
#: ViLMA's tests whose Table 2 column is the mean of their subtests; the others pool their items
#: (random baseline, Situation Awareness T: 37.96 is the item-weighted mean of 34.42 over 704 items
#: and 50.00 over 207, not their mean 42.2; CLIP, Change of State T: 55.2 is the subtest mean).
VILMA_SUBTEST_MEAN_TESTS = frozenset({"change_of_state"})
VILMA_POOLED = MetricSpec(
    "proficiency_combined_accuracy", _proficiency,
    {"P": "proficiency_accuracy", "T": "main_accuracy", "P+T": "combined_accuracy"},
    {"ties": "first"},  # ViLMA's argmax over [caption, foils]
)  # fmt: skip
VILMA_SUBTEST_MEAN = MetricSpec(
    "proficiency_combined_accuracy", _proficiency,
    {"P": "macro_proficiency_accuracy", "T": "macro_main_accuracy", "P+T": "macro_combined_accuracy"},
    {"ties": "first"},
)  # fmt: skip
RECALL = MetricSpec(
    "retrieval_recall", _retrieval,
    {"T2V R@1": "t2v_r1", "T2V R@5": "t2v_r5", "T2V R@10": "t2v_r10",
     "V2T R@1": "v2t_r1", "V2T R@5": "v2t_r5", "V2T R@10": "v2t_r10"},
    matrix=True, per_group=False,
)  # fmt: skip
BINARY = MetricSpec(
    "binary_retrieval_accuracy",
    _binary_blocks,
    {"T2V": "t2v_accuracy", "V2T": "v2t_accuracy"},
    per_group=False,
)
MULTIPLE_CHOICE = MetricSpec("multiple_choice_accuracy", _multiple_choice, ACCURACY)

BENCHMARKS: dict[str, Benchmark] = {
    "vitatecs": Benchmark(
        "vitatecs", "VITATECS", "vitatecs",
        ("direction", "intensity", "sequence", "localization", "compositionality", "type", "all"), ("all",),
        lambda config: (PAIRWISE_STRICT,), group_column="aspect", group_label="aspect",
        paper_table="Table 3: accuracy (%) per temporal aspect",
    ),
    "vilma": Benchmark(
        "vilma", "ViLMA", "vilma",
        ("action_counting_easy", "action_counting_difficult", "situation_awareness_action_replacement",
         "situation_awareness_actor_swapping", "change_of_state_action", "change_of_state_pre_state",
         "change_of_state_post_state", "change_of_state_reverse", "rare_actions_action_replacement",
         "rare_actions_object_replacement", "spatial_relations_prepositions", "action_counting",
         "situation_awareness", "change_of_state", "rare_actions", "spatial_relations"),
        ("action_counting", "situation_awareness", "change_of_state", "rare_actions", "spatial_relations"),
        lambda config: (VILMA_SUBTEST_MEAN if config in VILMA_SUBTEST_MEAN_TESTS else VILMA_POOLED,),
        group_column="subtest", group_label="subtest",
        paper_table="Table 2: proficiency (P), main test (T) and combined (P+T) accuracy per subtest",
        summary="Avg.",
    ),
    "rtime": Benchmark(
        "rtime", "RTime", "rtime", ("origin", "hard", "binary"), ("origin", "hard", "binary"),
        lambda config: (BINARY,) if config == "binary" else (RECALL,), cluster_column="source_id",
        paper_table="Tables 3-4: R@K on RTime-Origin and RTime-Hard, accuracy on RTime-Binary",
    ),
    "contrast_sets": Benchmark(
        "contrast_sets", "MSR-VTT contrast sets", "contrast_sets", ("verb_lm", "verb_human", "gender", "random"),
        ("verb_lm", "verb_human"), lambda config: (MULTIPLE_CHOICE,), group_column="foil_type",
        group_label="foil type", paper_table="Table 2: multiple-choice accuracy per contrast set",
    ),
    "synthetic": Benchmark(
        "synthetic", "foilkit synthetic temporal benchmark", None, ("direction", "order", "speed", "all"), ("all",),
        lambda config: (PAIRWISE_STRICT,), group_column="aspect", group_label="aspect",
        paper_table="accuracy (%) per temporal aspect, VITATECS-style (a tie counts as wrong)",
    ),
}  # fmt: skip


def list_benchmarks() -> list[str]:
    """Names of the benchmarks ``foilkit evaluate`` knows."""
    return sorted(BENCHMARKS)


def get_benchmark(name: str) -> Benchmark:
    """The :class:`Benchmark` registered as ``name``."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(BENCHMARKS)}")
    return BENCHMARKS[name]
