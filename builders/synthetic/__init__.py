"""foilkit's synthetic temporal benchmark: aspects, configs and what ``foilkit evaluate`` computes.

It has no builder: :func:`foilkit.demo.write_demo_benchmark` renders its videos and writes it
in the exported Hub layout (one config per aspect plus ``all``, a ``test`` split), and
:func:`foilkit.finetune.synthetic.write_train_split` a ``train`` split of new renderings, with
the configs declared here (``tests/builders/test_specs.py`` checks that they agree);
``foilkit evaluate synthetic --dataset <folder>`` reads it back.
Captions are true and foils false by construction, so it is scored VITATECS-style.
"""

from __future__ import annotations

from foilkit.builders.spec import PAIRWISE_STRICT, Benchmark, CardMetadata, aspect_tasks

NAME = "synthetic"
TITLE = "foilkit synthetic temporal benchmark"
#: Which way a square moves, which of two squares appears first, how fast a square moves.
ASPECTS = ("direction", "order", "speed")
#: One config per aspect, then ``all`` (the default).
CONFIGS = (*ASPECTS, "all")
DEFAULT_CONFIG = "all"

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = aspect_tasks(ASPECTS, "foilkit synthetic benchmark")
#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(("zero-shot-classification", "video-text-to-text"), ("original",), "")

BENCHMARK = Benchmark(
    NAME,
    TITLE,
    None,
    CONFIGS,
    (DEFAULT_CONFIG,),
    lambda config: (PAIRWISE_STRICT,),
    group_column="aspect",
    group_label="aspect",
    paper_table="accuracy (%) per temporal aspect, VITATECS-style (a tie counts as wrong)",
    card=CARD,
    hub_tasks=HUB_TASKS,
)
