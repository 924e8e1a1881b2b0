"""MSR-VTT contrast sets (Park et al.): 5-way multiple choice with a verb-based hard negative.

Upstream: ``msrvtt/msrvtt_lm_contrast_set.tsv`` (the verb foil made by a language model) and
``msrvtt/msrvtt_human_contrast_set.tsv`` (made by people), columns ``clip, ending0..ending4,
label``: one of the four negatives is the contrast-set foil, the others are random captions of
other videos. ``options`` keeps the endings in published order, ``label`` indexes the true one,
``caption = options[label]`` and ``foils`` are the other options in published order.

The paper's ``random`` and ``gender`` MC come from the MSR-VTT multiple-choice test file of Yu
et al. (2018), which is not redistributed here: the user supplies it (``multiple_choice_file``, in
the layout :func:`.multiple_choice.read_multiple_choice_file` reads: ``clip, ending0..ending4,
label``, tab- or comma-separated). ``random`` is that file as it is; ``gender`` replaces one
random negative of each item with the gender swap of its true caption (paper Table 6,
:func:`.multiple_choice.swap_gender`), drawing with ``seed``, and drops the clips whose caption
has no gender word (2,477 of 2,990 remain in the paper).
"""

from __future__ import annotations

from foilkit.builders.contrast_sets.protocols import PROTOCOLS
from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, option_inputs

PUBLISHED = {"verb_lm": "msrvtt_lm_contrast_set.tsv", "verb_human": "msrvtt_human_contrast_set.tsv"}

FROM_MULTIPLE_CHOICE_FILE = ("gender", "random")

#: Option scores back in published order: the caption's score at ``label``, foils around it.
MULTIPLE_CHOICE = MetricSpec(
    "multiple_choice_accuracy",
    option_inputs,
    {"accuracy": "accuracy"},
    chance={"accuracy": 0.2},  # one of five endings
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = tuple(
    HubTask(
        name,
        name,
        f"MSR-VTT contrast set {name}: 5-way multiple-choice accuracy",
        ((name, None, "accuracy"),),
    )
    for name in (*PUBLISHED, *FROM_MULTIPLE_CHOICE_FILE)  # the builder's configs, in order
)

#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("multiple-choice", "zero-shot-classification"),
    ("extended|MSR-VTT",),
    "https://aclanthology.org/2022.naacl-main.261",
)

BENCHMARK = Benchmark.of_builder(
    "contrast_sets",
    all_configs=tuple(PUBLISHED),
    metrics=lambda config: (MULTIPLE_CHOICE,),
    group_column="foil_type",
    group_label="foil type",
    paper_table="Table 2: multiple-choice accuracy per contrast set",
    protocols=PROTOCOLS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/contrast-sets",
    video_layout=(
        "`<video_root>/<clip>.mp4`, the MSR-VTT video named by its clip id (e.g. `video9770.mp4`)."
    ),
)
