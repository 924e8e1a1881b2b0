"""The small request dataclasses through which the engine and the model adapters meet.

Adapters never see datasets, files, processes or caches; the engine never sees a model's
inputs. A request carries what a model needs to score (frames as uint8 tensors, texts), a
result carries the numbers back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class TextsRequest:
    """Score ``texts`` against one view (``frames``: uint8 ``T x C x H x W``; ``None`` for
    text-only models).

    The texts of one request belong together: a caption and its foils, or the proficiency
    caption and its foils. Scoring modes that compare texts (multiple choice) compare exactly
    these; modes that score each text alone reuse the view's encoding across them.

    ``timestamps`` are the seconds in the source video of each frame, in the order shown (one
    per frame). A temporal control keeps each frame's own timestamp, so a ``reversed`` view
    reports them decreasing and a ``shuffled`` one out of order; models that take a time axis
    see the frames in the order shown at the real sampling interval (see the video LLM adapter).
    ``None`` when the frames' times are unknown.

    ``question`` is a benchmark's own prompt for the item (TempCompass' question with its
    options and answer instruction), and ``answers`` how an answer names each text, in the same
    order (``"A"``, ``"Caption B"``, ``"yes"``): adapters that ask questions score each text by
    its answer to the question; ``None``: the texts are scored themselves.
    """

    texts: tuple[str, ...]
    frames: torch.Tensor | None = field(default=None, repr=False)
    timestamps: tuple[float, ...] | None = None
    question: str | None = None
    answers: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.texts:
            raise ValueError("a TextsRequest needs at least one text")
        if self.frames is not None and (self.frames.ndim != 4 or self.frames.dtype != torch.uint8):
            raise ValueError(
                f"frames must be a uint8 T x C x H x W tensor, got {self.frames.dtype} "
                f"{tuple(self.frames.shape)}"
            )
        if (self.question is None) != (self.answers is None):
            raise ValueError("a question needs the answers that name its texts, and vice versa")
        if self.answers is not None and len(self.answers) != len(self.texts):
            raise ValueError(f"{len(self.answers)} answers for {len(self.texts)} texts")
        if self.timestamps is not None:
            object.__setattr__(self, "timestamps", tuple(float(t) for t in self.timestamps))
            if self.frames is not None and len(self.timestamps) != len(self.frames):
                raise ValueError(
                    f"timestamps has {len(self.timestamps)} values for {len(self.frames)} frames"
                )


@dataclass(frozen=True)
class TextScores:
    """One score per text of a request (same order), plus named per-text details.

    ``details`` holds secondary numbers a mode produces alongside its score, e.g.
    ``{"logprob_sum": [...], "logprob_mean": [...], "num_tokens": [...]}`` for likelihoods.
    """

    scores: tuple[float, ...]
    details: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, values in self.details.items():
            if len(values) != len(self.scores):
                raise ValueError(
                    f"detail {name!r} has {len(values)} values for {len(self.scores)} scores"
                )
