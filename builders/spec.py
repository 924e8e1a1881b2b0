"""What ``foilkit evaluate`` computes for a benchmark, as data: :class:`Benchmark`.

Each benchmark declares its spec beside its builder (``BENCHMARK`` in
``foilkit.builders.vitatecs``, ``vilma``, ``rtime``, ``contrast_sets``; the synthetic demo
benchmark's in ``foilkit.builders.synthetic``), and :data:`foilkit.builders.BENCHMARKS` registers
them by name. A :class:`Benchmark` names its builder and configs (:meth:`Benchmark.of_builder`
takes them from the builder's ``BUILDER_CONFIGS``, so the two cannot disagree), what
``--config all`` evaluates, the metadata column that makes the rows of its paper's table
(aspect, subtest, foil type), the column items cluster by for the bootstrap (several items share
a video), and per config the :class:`MetricSpec` list: which ``foilkit.metrics`` function, with
which options (tie policy), how per-sample score rows become its inputs, and which of its outputs
fill which table column.

The mapping functions only rearrange the scorer's per-sample columns (schema:
``caption_score``, ``foil_scores``, ``proficiency_*``, metadata) or its views x texts matrix;
every number comes from the metric functions themselves, called as
``foilkit.metrics.<name>.<name>.<name>(**inputs, score_kind=..., **options, n_resamples=...,
seed=...)`` (plus ``cluster=`` the cluster column's values, unless the inputs set it) and
returning a flat dict where each reported key ``k`` comes with ``k_ci`` = ``[low, high]`` and
the item count ``n``.

This module imports nothing heavy: the registry and ``foilkit --help`` read it freely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foilkit.answers import AnswerParser, CaptionQuestion, ChoicePrompt, JudgeProtocol
from foilkit.benchmark_registry import BUILDERS
from foilkit.protocol import Protocol


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
        chance: report column label -> the value a random guess scores on average (a fraction;
            the plots' chance line). A column without one (retrieval recall, whose chance
            depends on the pool size) gets no line.
        probability_options: options added only for runs whose scores are probabilities
            (``score_kind == "probability"``): VELOCITI's StrictVLE threshold, which no other
            score kind can be held to; its column stays empty for the other runs.
    """

    metric: str
    inputs: Callable[[Mapping[str, Any]], dict[str, Any]]
    columns: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)
    matrix: bool = False
    per_group: bool = True
    chance: Mapping[str, float] = field(default_factory=dict)
    probability_options: Mapping[str, Any] = field(default_factory=dict)

    def options_for(self, score_kind: str) -> dict[str, Any]:
        """The options the metric runs with on scores of ``score_kind``."""
        extra = self.probability_options if score_kind == "probability" else {}
        return {**self.options, **extra}


# --- what the Hub reads beyond the features ---------------------------------------------------


@dataclass(frozen=True)
class CardMetadata:
    """A benchmark's dataset-card metadata for the Hub: task categories, sources, paper."""

    task_categories: tuple[str, ...]
    source_datasets: tuple[str, ...]
    paper: str


@dataclass(frozen=True)
class HubTask:
    """One leaderboard task of a benchmark: a number a run reports, under a stable id.

    ``config`` is the dataset config holding the task's items (``eval.yaml``'s ``config``);
    ``sources`` are where a run's ``results.json`` holds the value, tried in order:
    ``(run config, group or None for the config's overall result, result key)``. A task whose
    value is the mean of other tasks (ViLMA's Table 2 ``Avg.``) names them in ``mean_of``. A
    control task (``control`` set) is the same number measured under a temporal control: a check
    of the model, never a result of the paper's task, so it has its own id (see
    :func:`control_task`).
    """

    id: str
    config: str
    description: str
    sources: tuple[tuple[str, str | None, str], ...] = ()
    mean_of: tuple[str, ...] = ()
    control: str | None = None


def aspect_tasks(aspects: Sequence[str], what: str) -> tuple[HubTask, ...]:
    """A task per aspect (its config's mean, or its group of ``all``) and ``average``, their
    mean (VITATECS' Table 3 "Avg."), for a benchmark scored VITATECS-style."""
    return (
        *(
            HubTask(
                aspect,
                aspect,
                f"{what} accuracy on the {aspect} aspect (a tie counts as wrong)",
                ((aspect, None, "macro_accuracy"), ("all", aspect, "accuracy")),
            )
            for aspect in aspects
        ),
        HubTask(
            "average",
            "all",
            f"{what}: mean of the per-aspect accuracies (Avg.)",
            (("all", None, "macro_accuracy"),),
        ),
    )


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as ``foilkit evaluate`` sees it (see the module docstring).

    Attributes:
        name: the registry name (``foilkit evaluate <name>``).
        title: the benchmark's name in reports (its builder's ``PRETTY_NAME``; ``None`` with
            ``configs`` ``None`` and a builder: read from the builder when first asked for).
        builder: the builder that builds it (``foilkit.builders.BUILDERS``), ``None`` for a
            benchmark only read from an exported folder.
        configs: every config ``--config`` accepts (the builder's, in its order).
        all_configs: what ``--config all`` (and no ``--config``) evaluates.
        metrics: config -> the metrics computed on it.
        summary: label of a report row averaging the overall rows of ``all_configs`` (each
            config's values weigh the same), shown when a run has them all: ViLMA's "Avg.",
            "the average of combined scores (P+T) among each task" (and of P and T alike).
        unscored: configs the builder builds but ``foilkit evaluate`` cannot score, each with
            why: naming one is an error saying so.
        judged: configs scored only with an LLM judge configured (TempCompass' captioning),
            each with why and how: naming one without a judge is an error saying so.
        tuning_forbidden: the licence clause that forbids training on the benchmark (VELOCITI's:
            "strictly a test set"): ``foilkit finetune`` refuses it, quoting this. Empty: none.
        redistribution_forbidden: why an export of the benchmark must not be pushed to the Hub
            (TemporalBench's gated, research-only terms): pushing it is refused with this.
        protocols: model family -> the paper protocol of the benchmark's own published code
            (``builders/<name>/protocols.py``), which :mod:`foilkit.scorers.protocols` resolves;
            a family missing scores with the uniform values, said so. None: the benchmark is
            not a published one (the synthetic benchmark).
        answer_parsers: the answer parser ``generate`` mode reads the benchmark's answers with
            when neither its protocol nor ``--parser`` names one, by config (``None``: every
            config): the rules of the benchmark's own rating script for the question its rows
            ask.
        parsers: the benchmark's answer parsers by name (``builders/<name>/answers.py``), which
            ``--parser`` and the protocols name; :func:`foilkit.scorers.parsers.get_parser`
            finds them through the registry.
        judges: the official LLM judges of its answers, by the parser whose answers each reads.
        prompts: its named multiple-choice questions (the ``prompt`` protocol setting), which
            :func:`foilkit.scorers.prompts.choice_prompt` finds through the registry.
        questions: its questions about one caption, by role (``foilkit.answers.ENTAIL``,
            ``JOINED_VIDEO``), which :func:`foilkit.scorers.prompts.caption_question` finds.
        reductions: its text LMs' perplexity functions by name (``text-lm``'s ``reduction``),
            which :func:`foilkit.scorers.adapters.text_lm.reference_reduction` finds.
        questions_only: its rows whose options mean nothing without their question (only a
            model that asks questions scores them), as the scorer's refusal names them, then
            optionally what a text-only model can score instead (empty: none).
        card: its dataset card's Hub metadata (task categories, sources, paper; ``None``: none).
        hub_tasks: its documented leaderboard task ids (values are percentages, higher is
            better): changing one breaks every leaderboard.
        hub_repo: the Hub dataset repository holding its canonical export, the one whose
            ``eval.yaml`` is registered (allow-listed by the Hub) and whose leaderboard every
            result of the benchmark joins (``foilkit push-results``' default ``dataset.id``;
            ``foilkit build --push-to-hub`` uploads ``eval.yaml`` only there unless
            ``--register``). Empty: none (the synthetic benchmark, TemporalBench).
        video_layout: Markdown: where each row's video must be under the video root (its
            builder's ``VIDEO_LAYOUT``, for its dataset card and ``foilkit build --help``).
    """

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
    summary: str | None = None
    unscored: Mapping[str, str] = field(default_factory=dict)
    judged: Mapping[str, str] = field(default_factory=dict)
    tuning_forbidden: str = ""
    redistribution_forbidden: str = ""
    protocols: Mapping[str, Protocol] = field(default_factory=dict)
    answer_parsers: Mapping[str | None, str] = field(default_factory=dict)
    parsers: Mapping[str, AnswerParser] = field(default_factory=dict)
    judges: Mapping[str, JudgeProtocol] = field(default_factory=dict)
    prompts: Mapping[str, ChoicePrompt] = field(default_factory=dict)
    questions: Mapping[str, CaptionQuestion] = field(default_factory=dict)
    reductions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    questions_only: tuple[str, ...] = ()
    card: CardMetadata | None = None
    hub_tasks: tuple[HubTask, ...] = ()
    hub_repo: str = ""
    video_layout: str = ""

    def __post_init__(self) -> None:
        if self.builder is not None and self.title is None and self.configs is None:
            # read from the builder when first asked (__getattr__): the spec, its parsers and
            # prompts are read without importing the builder's module (and ``datasets``)
            object.__delattr__(self, "title")
            object.__delattr__(self, "configs")
            return
        self._check_all_configs()

    def __getattr__(self, name: str) -> Any:
        """``title`` and ``configs`` of :meth:`of_builder`'s spec, from its builder's
        ``PRETTY_NAME`` and ``BUILDER_CONFIGS`` (imported now, once)."""
        if name not in ("title", "configs") or "builder" not in vars(self):
            raise AttributeError(name)
        builder = BUILDERS.get(self.builder)
        object.__setattr__(self, "title", builder.PRETTY_NAME)
        object.__setattr__(self, "configs", tuple(c.name for c in builder.BUILDER_CONFIGS))
        self._check_all_configs()
        return vars(self)[name]

    def _check_all_configs(self) -> None:
        unknown = [
            config
            for config in self.all_configs
            if config not in self.configs or config in self.unscored or config in self.judged
        ]
        if unknown or not self.all_configs:
            raise ValueError(
                f"benchmark {self.name!r}: all_configs {self.all_configs} must be a non-empty "
                f"selection of its configs {self.configs}"
            )

    @classmethod
    def of_builder(
        cls,
        name: str,
        *,
        all_configs: Sequence[str],
        metrics: Callable[[str], tuple[MetricSpec, ...]],
        **fields: Any,
    ) -> Benchmark:
        """The spec of the benchmark whose builder is registered as ``name``
        (:data:`foilkit.builders.BUILDERS`): its title and configs are the builder's
        ``PRETTY_NAME`` and ``BUILDER_CONFIGS`` names, read when first asked for."""
        return cls(
            name=name,
            title=None,
            builder=name,
            configs=None,
            all_configs=tuple(all_configs),
            metrics=metrics,
            **fields,
        )

    def configs_for(
        self, config: str | Sequence[str] | None, *, judge: bool = False
    ) -> tuple[str, ...]:
        """The configs ``--config`` names, in order, each once: one config or several; ``all``
        (alone or among them) stands for ``all_configs``, and so does none. ``judge``: whether
        an LLM judge is configured (the ``judged`` configs need one)."""
        names = [config] if isinstance(config, str) else list(config or ["all"])
        unknown = [name for name in names if name != "all" and name not in self.configs]
        if unknown:
            raise ValueError(
                f"{self.name} has no config {', '.join(map(repr, unknown))}; "
                f"choose from {', '.join(('all', *self.configs))} (several: --config a,b)"
            )
        for name in names:
            if name in self.unscored:
                raise ValueError(
                    f"{self.name} config {name!r} is not scored: {self.unscored[name]}"
                )
            if name in self.judged and not judge:
                raise ValueError(
                    f"{self.name} config {name!r} needs an LLM judge: {self.judged[name]}"
                )
        chosen = (self.all_configs if name == "all" else (name,) for name in names)
        return tuple(dict.fromkeys(name for group in chosen for name in group))


# --- per-sample columns -> metric inputs shared by several benchmarks -----------------------------


def pairwise_inputs(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Each item's caption score against its foils' scores (``pairwise_foil_accuracy``)."""
    return {
        "caption_scores": list(rows["caption_score"]),
        "foil_scores": [list(f) for f in rows["foil_scores"]],
    }


def aspect_inputs(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Caption-vs-counterfactual pairs with each item's aspect (``macro_accuracy``: the mean over
    aspects, VITATECS Table 3's "Avg.")."""
    return {**pairwise_inputs(rows), "groups": list(rows["aspect"])}


def option_inputs(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Each item's option scores back in published order (the caption's score at ``label``, the
    foils' around it) and its true option (``multiple_choice_accuracy``)."""
    scores = []
    for caption_score, foil_scores, label in zip(
        rows["caption_score"], rows["foil_scores"], rows["label"], strict=True
    ):
        options = list(foil_scores)
        options.insert(int(label), caption_score)
        scores.append(options)
    return {"scores": scores, "labels": [int(label) for label in rows["label"]]}


def grouped_option_inputs(
    groups: str, dimensions: str
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """:func:`option_inputs` with each item's group (column ``groups``) and fine-grained
    dimension (column ``dimensions``): the breakdowns of ``multiple_choice_accuracy`` that
    TempCompass' per-aspect and per-dimension statistics and TOMATO's categorized scores are."""

    def inputs(rows: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **option_inputs(rows),
            "groups": list(rows[groups]),
            "dimensions": list(rows[dimensions]),
        }

    return inputs


def group_names(values: Sequence[Any]) -> list[Any]:
    """The groups of a group column's ``values``, in first-seen order. A list-valued column is
    multi-label (Vinoground's categories: its major one, then its minor ones): each of an item's
    labels is a group of its own, so an item can count in several groups."""
    labels = (
        label
        for value in values
        for label in (value if isinstance(value, (list, tuple)) else [value])
    )
    return list(dict.fromkeys(labels))


def subset_columns(
    columns: Mapping[str, Sequence[Any]], column: str, value: Any
) -> dict[str, list[Any]]:
    """The rows of per-sample ``columns`` whose ``column`` equals ``value``, or holds it where
    the column is multi-label (one group's items, for a per-group metric or test)."""
    keep = [
        i
        for i, v in enumerate(columns[column])
        if (value in v if isinstance(v, (list, tuple)) else v == value)
    ]
    return {name: [values[i] for i in keep] for name, values in columns.items()}


#: VITATECS' scripts: caption > counterfactual (a tie counts as wrong); several aspects: their
#: mean (Table 3 "Avg."). Also the synthetic benchmark's metric, which is VITATECS-style.
PAIRWISE_STRICT = MetricSpec(
    "pairwise_foil_accuracy",
    aspect_inputs,
    {"accuracy": "macro_accuracy"},
    {"ties": "strict"},
    chance={"accuracy": 0.5},  # one counterfactual per caption: a coin flip
)
