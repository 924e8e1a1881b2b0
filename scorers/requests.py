"""The small request dataclasses through which the engine and the model adapters meet.

Adapters never see datasets, files, processes or caches; the engine never sees a model's
inputs. A request carries what a model needs to score (frames as uint8 tensors, texts), a
result carries the numbers back.

Generative modes meet a backend (the in-process model, or a served one) through
:class:`GenerateRequest` (frames, timestamps, chat messages, :class:`Decoding`) and
:class:`Generations` (the answers' texts, one per sample): whatever generates them, the same
requests give the answers that :mod:`foilkit.scorers.generate` parses into scores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

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

    ``reference`` is the question and its ground-truth answer as a benchmark's official LLM
    judge is shown them (TempCompass' ``judge_question`` / ``judge_answer``:
    :mod:`foilkit.scorers.judge`); ``None`` where the row has none.
    """

    texts: tuple[str, ...]
    frames: torch.Tensor | None = field(default=None, repr=False)
    timestamps: tuple[float, ...] | None = None
    question: str | None = None
    answers: tuple[str, ...] | None = None
    reference: tuple[str, str] | None = None

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
    ``answers``: a generative mode's answers behind the scores, as read (:class:`Answer`).
    ``fault``: ``(message, cause)`` when the request could not be scored alone (a served
    model's reply past its size bound, a refusal where log-probabilities were needed): its
    rows fail with it and the run goes on; ``None``: scored.
    """

    scores: tuple[float, ...]
    details: dict[str, tuple[float, ...]] = field(default_factory=dict)
    answers: tuple[Answer, ...] = ()
    fault: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        for name, values in self.details.items():
            if len(values) != len(self.scores):
                raise ValueError(
                    f"detail {name!r} has {len(values)} values for {len(self.scores)} scores"
                )


@dataclass(frozen=True)
class Answer:
    """One generated answer as it was read: the text, the outcome (``parsed`` by the rules,
    ``judged`` by the LLM judge, ``unparseable``, ``refused``:
    :data:`foilkit.scorers.parsers.OUTCOMES`), the index of the request's text it chose
    (``None``: none), which cyclic order of the options and which sample it answered, and,
    where the judge was asked, its last reply and verdict (``correct``, ``incorrect``, a
    letter; ``None``: it settled nothing)."""

    text: str
    outcome: str
    choice: int | None
    order: int
    sample: int
    judge_reply: str | None = None
    judge_verdict: str | None = None


#: The decoding settings, as protocols, options and records name them.
DECODING_SETTINGS = ("temperature", "top_p", "num_samples", "max_new_tokens")


@dataclass(frozen=True)
class Decoding:
    """How answers are generated: greedy (``temperature`` 0, the default) or sampled at
    ``temperature`` with nucleus ``top_p``, ``num_samples`` answers per question, at most
    ``max_new_tokens`` tokens each; ``seed`` makes sampling repeatable (each request draws from
    its own seed, :meth:`GenerateRequest.sample_seed`, so an answer does not depend on the
    process or batch that generated it). No other sampler runs (no top-k, no repetition
    penalty), whatever a checkpoint's ``generation_config.json`` says."""

    temperature: float = 0.0
    top_p: float = 1.0
    num_samples: int = 1
    max_new_tokens: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise ValueError(
                f"temperature must be >= 0 (0: greedy; --temperature), got {self.temperature}"
            )
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1] (--top-p), got {self.top_p}")
        for name in ("num_samples", "max_new_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{name} must be a whole number >= 1 ({flag}), got {value!r}")
        if self.greedy and self.num_samples > 1:
            raise ValueError(
                f"num_samples={self.num_samples} with greedy decoding gives the same answer "
                "every time: pass a temperature above 0 (--temperature 0.2) to sample, or "
                "--num-samples 1"
            )

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_record(self) -> dict[str, Any]:
        """The settings as ``run.json`` and cache keys hold them."""
        return {"strategy": "greedy" if self.greedy else "sample", **asdict(self)}


@dataclass(frozen=True)
class GenerateRequest:
    """Generate answers to ``messages`` about one view.

    ``messages`` are chat messages in the content-part format transformers' chat templates and
    OpenAI-compatible servers share (``{"role": ..., "content": [{"type": "text", "text": ...},
    ...]}``); the view's frames (uint8 ``T x C x H x W``, at ``timestamps``) go where a
    ``{"type": "video"}`` part stands. ``decoding``: how, and how many answers.
    """

    messages: tuple[dict[str, Any], ...]
    frames: torch.Tensor | None = field(default=None, repr=False)
    timestamps: tuple[float, ...] | None = None
    decoding: Decoding = field(default_factory=Decoding)

    def __post_init__(self) -> None:
        TextsRequest(("",), self.frames, self.timestamps)  # the same checks of frames and times

    def sample_seed(self) -> int:
        """The seed this request's answers are drawn with: the decoding seed, the messages, the
        frames' pixels and times, hashed. The same question about the same frames draws the
        same answers in any process or batch, and after a resumption; another question, another
        order of its options or another video draws its own."""
        digest = hashlib.sha256(
            json.dumps([self.decoding.seed, list(self.messages), self.timestamps]).encode()
        )
        if self.frames is not None:
            digest.update(str(tuple(self.frames.shape)).encode())
            digest.update(self.frames.contiguous().cpu().numpy().tobytes())
        return int.from_bytes(digest.digest()[:4], "big") >> 1


@dataclass(frozen=True)
class Generations:
    """A request's answers, one text per sample (``decoding.num_samples`` of them, in order),
    and the tokens each took (``num_tokens``; empty where the backend does not say);
    ``fault``: ``(message, cause)`` of a request that got no answers (:class:`TextScores`)."""

    texts: tuple[str, ...]
    num_tokens: tuple[int, ...] = ()
    fault: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if self.num_tokens and len(self.num_tokens) != len(self.texts):
            raise ValueError(f"{len(self.num_tokens)} token counts for {len(self.texts)} texts")


def presented_metadata(timestamps: Sequence[float]) -> dict[str, Any]:
    """The ``video_metadata`` of frames shown in order at their real sampling interval.

    The interval is the sampled span over the gaps between frames (``(last - first) / (T - 1)``
    of the sorted timestamps), whatever order the frames are shown in; frame ``k`` of the shown
    order is placed at ``first + k * interval``. transformers reads the rate as
    ``VideoMetadata.sampled_fps`` (Qwen2.5-VL's ``second_per_grid_ts``) and the times as
    ``frames_indices / fps`` (Qwen3-VL's timestamps); a served model is sent the same
    (:func:`foilkit.scorers.openai_client.video_metadata`). A single frame has no interval:
    1 fps.
    """
    count = len(timestamps)
    first, last = min(timestamps), max(timestamps)
    fps = (count - 1) / (last - first) if count > 1 and last > first else 1.0
    return {
        "total_num_frames": count,
        "fps": fps,
        "frames_indices": [first * fps + k for k in range(count)],
        "duration": count / fps,
    }
