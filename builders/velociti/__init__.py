"""VELOCITI (Saravanan et al., CVPR 2025): a VidSitu clip, a positive and a negative caption.

Upstream: the Hub dataset ``katha-ai-iiith/VELOCITI``, which the official code reads with
``load_dataset("katha-ai-iiith/VELOCITI")["test"]`` (``data.py``): one table of rows
``{test_name, video_id, event, pos, neg}``, the eight tests of ``clip_eval.py`` /
``vidllm_eval.py`` told apart by ``test_name``. This builder reads the repository's annotation
tables (parquet, JSON Lines or JSON; never the video archive) from a download or a local clone.
A row's ``id`` is ``<test_name>-<row number within its test>``, in file order.

The licence (CC BY-NC-SA 4.0 with an added clause) forbids tuning any model on VELOCITI:
``foilkit finetune`` refuses it (:attr:`foilkit.builders.spec.Benchmark.tuning_forbidden`).
"""

from __future__ import annotations

from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, pairwise_inputs
from foilkit.builders.velociti.answers import QUESTIONS
from foilkit.builders.velociti.protocols import PROTOCOLS

#: The tests ``clip_eval.py`` and ``vidllm_eval.py`` evaluate, by their ``test_name``.
TESTS = tuple(
    "agent_random agent_bind action_adv action_bind action_manner control coref chrono".split()
)

#: The licence's added clause, as the VELOCITI README states it.
NO_TUNING = (
    "VELOCITI's licence (CC BY-NC-SA 4.0 with an additional clause) says it 'may never be used "
    "to tune the parameters of any model, and is strictly a test set'"
)

#: ``metrics.py``: ClassicVLE ``pos > neg`` (a tie is wrong) for any score kind; StrictVLE
#: ``pos > 0.5 and neg < 0.5`` only for probabilities (an entailment probability).
VLE = MetricSpec(
    "pairwise_foil_accuracy",
    pairwise_inputs,
    {"ClassicVLE": "accuracy", "StrictVLE": "strict_entailment_accuracy"},
    {"ties": "strict"},
    chance={"ClassicVLE": 0.5},
    probability_options={"entailment_threshold": 0.5},
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = tuple(
    HubTask(
        f"{test}_{kind.lower()}",
        test,
        f"VELOCITI {test}: {kind}VLE ({what})",
        ((test, None, key), ("all", test, key)),
    )
    for test in TESTS
    for kind, key, what in (
        ("Classic", "accuracy", "positive caption scored above the negative"),
        (
            "Strict",
            "strict_entailment_accuracy",
            "entailment probability of the positive above 0.5 and of the negative below it",
        ),
    )
)

#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    ("extended|VidSitu",),
    "https://arxiv.org/abs/2406.10889",
)

BENCHMARK = Benchmark.of_builder(
    "velociti",
    all_configs=("all",),
    metrics=lambda config: (VLE,),
    group_column="test_name",
    group_label="test",
    paper_table="Table 2: ClassicVLE and StrictVLE (%) per test",
    tuning_forbidden=NO_TUNING,
    protocols=PROTOCOLS,
    questions=QUESTIONS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/velociti",
    video_layout=(
        "As the official code reads them (`data.py`: `<frames_root>/<video_id>.mp4`): "
        "`<video_root>/<video_id>.mp4`, the clips of the repository's `velociti_videos.zip` "
        "unzipped into one folder (e.g. `v_-0Qs5OQb1Ew_seg_10_20.mp4`)."
    ),
)
