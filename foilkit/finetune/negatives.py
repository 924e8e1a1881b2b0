"""The hard-negative policy's choices, shared by the run's options (:mod:`foilkit.finetune.train`)
and the training data (:mod:`foilkit.finetune.data`) without either importing the other."""

#: ``reversed``: each item's reversed view and caption in its batch; ``none``: the ablation.
HARD_NEGATIVES = ("reversed", "none")
#: With reversed hard negatives, items without a reversed caption: ``error`` before training,
#: or ``keep`` them, each alone in its batch (:mod:`foilkit.finetune.data`, rule 3).
IRREVERSIBLE = ("error", "keep")
#: Aspects whose foil describes the reversed playback of the item's video
#: (:func:`foilkit.finetune.data.training_items`, rule 2).
REVERSAL_ASPECTS = ("direction", "order")
