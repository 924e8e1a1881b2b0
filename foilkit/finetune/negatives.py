"""The hard-negative policy's choices and batch rule, shared by the run's options
(:mod:`foilkit.finetune.train`) and the training data (:mod:`foilkit.finetune.data`) without
either importing the other."""

#: ``reversed``: each item's reversed view and caption in its batch; ``none``: the ablation.
HARD_NEGATIVES = ("reversed", "none")
#: With reversed hard negatives, items without a reversed caption: ``error`` before training,
#: or ``keep`` them, each alone in its batch (:mod:`foilkit.finetune.data`, rule 3).
IRREVERSIBLE = ("error", "keep")
#: Aspects whose foil describes the reversed playback of the item's video
#: (:func:`foilkit.finetune.data.training_items`, rule 2).
REVERSAL_ASPECTS = ("direction", "order")


def check_batch(hard_negatives: str, batch_size: int) -> None:
    """Raise ``ValueError`` for an unknown policy, or a batch that holds no negative or would
    part an item from its reversal."""
    if hard_negatives not in HARD_NEGATIVES:
        raise ValueError(
            f"unknown hard_negatives {hard_negatives!r}; choose from {list(HARD_NEGATIVES)}"
        )
    if batch_size < 2 or (hard_negatives == "reversed" and batch_size % 2):
        raise ValueError(
            f"batch_size must be >= 2, and even with reversed hard negatives (an item and its "
            f"reversal fill two places), got {batch_size}"
        )
