"""RTime step 3: diverse rewrites of each human caption, checked (§3.1.3, Tab. 9, Fig. 10).

The paper asks GPT-4 for nine rewrites of every human-written caption, "diverse in sentence
structure and vocabulary while retaining the key semantic information", and adds them to the
training split only (validation and test keep the human captions). Its sanity check (Fig. 10)
compares the cosine similarity of rewrite and caption with that of the caption and a random
caption of another video. foilkit turns the check into a filter and adds two more:

* **similarity**: a rewrite whose sentence-embedding cosine with its caption is below
  ``min_similarity`` is rejected (0.6 with all-MiniLM-L6-v2 keeps 99.3% of the published
  GPT-4 rewrites of 300 RTime test captions and none of 300 random caption pairs);
* **time**: a rewrite that drops an order word class of the caption ("then", "first") or
  brings in the opposite of its direction (:mod:`~foilkit.generation.rtime.temporal_words`) is
  rejected. Similarity
  alone cannot do this: the caption of the *reversed* video has a mean cosine of 0.78 with the
  forward caption, barely below a rewrite's 0.84;
* **reversal**: where the caption of the reversed video (the *opposite* caption) is known, as
  it is for every RTime row, a rewrite whose cosine with the opposite caption is at least its
  cosine with its own caption plus ``reversal_margin`` describes the reversed video and is
  rejected. A true rewrite is nearer its own caption (0.84 against 0.70 on average); the
  opposite caption, or a paraphrase of it, is nearer the opposite one. The margin, 0.05, was
  set on the 9,000 published validation rewrites: the smallest (in steps of 0.01) under which
  at least 95.5% pass every check (95.7%; 0.04: 95.4%). On the 18,000 test ones it keeps 95.2%
  (96.1% without it) and
  rejects 96.9% of the reversed videos' captions offered as rewrites (32% without it) and
  79.5% of GPT-4's rewrites *of* those captions (34% without it);
* **event order**: a rewrite that tells two of its caption's events in the other order ("A,
  then B" as "B and A", "before" swapped for "after") is rejected, from the dependency parse
  (:mod:`~foilkit.generation.rtime.event_order`); unlike the reversal check it needs no
  opposite caption, so it works on new data. Events the rewrite tells with other verbs are
  matched to the caption's when their phrases' cosine reaches ``event_match`` (0.6, chosen
  before measuring and not tuned). Its figures, on the test videos none of these checks was
  tuned on and on hand-written reversals of their captions, are the quality report's
  (``foilkit generate quality rtime-rewrites``).

Two checks of the reply come first: a candidate that is a refusal ("I cannot help with that.")
is rejected as ``refusal``, and when the reply does not hold exactly the number of rewrites
asked for, every candidate of it is rejected (``on_wrong_count="reject"``, the default): a
reply with a preamble, a commentary line or a missing rewrite cannot be trusted line by line.

Every candidate is kept in the result with its similarity and the reasons it was rejected, so
the filters can be audited and re-run with other thresholds without asking the LLM again.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.files import atomic_open
from foilkit.generation.llm_replies import is_refusal
from foilkit.generation.prompts import PromptTemplate, prompt_hash
from foilkit.generation.rtime import load_prompt
from foilkit.generation.rtime.event_order import EventOrder, EventParser, matched, unmatched
from foilkit.generation.rtime.replies import first_unique, parse_reply, read_text
from foilkit.generation.rtime.temporal_words import TemporalLexicon, Tokenizer
from foilkit.generation.similarity import pairwise_cosines

if TYPE_CHECKING:
    from foilkit.generation.llm import ChatClient

REWRITE_PROMPT = "rewrite_caption"
REWRITES_PER_CAPTION = 9  # "rewrite nine extra sentences"
DEFAULT_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MIN_SIMILARITY = 0.6
DEFAULT_REVERSAL_MARGIN = 0.05  # set on the RTime validation split (see the module doc)
DEFAULT_EVENT_MATCH = 0.6  # chosen before measuring, not tuned (see the module doc)
REVERSAL_REASON = "nearer the opposite caption"
ORDER_REASON = "reverses the order of events"
HISTOGRAM_EDGES = tuple(round(-1.0 + 0.05 * i, 2) for i in range(41))  # cosine in [-1, 1]
WRONG_COUNT_POLICIES = ("reject", "keep")
REFUSAL_REASON = "refusal"


@dataclass(frozen=True)
class Rewrite:
    """A candidate rewrite, its cosine with the caption (and with the opposite caption, where
    one was known) and why it was rejected (if it was)."""

    text: str
    similarity: float
    reasons: tuple[str, ...] = ()
    opposite_similarity: float | None = None

    @property
    def accepted(self) -> bool:
        return not self.reasons


@dataclass(frozen=True)
class RewriteFilter:
    """The checks of a rewrite against its caption: embedding similarity, time, event order
    and reversal.

    Attributes:
        embedder: a sentence-transformers model (``encode(texts, normalize_embeddings=True)``).
        min_similarity: rewrites below this cosine are rejected.
        lexicon, tokenize: the temporal lexicon and the tokenizer it matches on; ``None``
            disables the temporal check.
        reversal_margin: a rewrite whose cosine with the opposite caption (where one is given)
            reaches its cosine with its own caption plus this margin is rejected; ``None``
            disables the reversal check.
        sentence_model: the embedder's id, recorded in provenance.
        order_parser: texts -> their :class:`~foilkit.generation.rtime.event_order.EventOrder`
            (:func:`~foilkit.generation.rtime.event_order.spacy_event_parser`); a rewrite
            ordering two of the caption's events the other way is rejected. ``None`` disables
            the event-order check.
        event_match: the event-order check matches an event the rewrite tells with another
            verb ("removed his sunglasses" for "took off his sunglasses") to the caption's
            when their phrases' cosine (by ``embedder``) reaches this and each is the other's
            nearest; ``None`` matches events by verb only.
    """

    embedder: Any
    min_similarity: float = DEFAULT_MIN_SIMILARITY
    lexicon: TemporalLexicon | None = None
    tokenize: Tokenizer | None = None
    sentence_model: str = DEFAULT_SENTENCE_MODEL
    reversal_margin: float | None = DEFAULT_REVERSAL_MARGIN
    order_parser: EventParser | None = None
    event_match: float | None = DEFAULT_EVENT_MATCH

    def __post_init__(self) -> None:
        if (self.lexicon is None) != (self.tokenize is None):
            raise ValueError("the temporal check needs both a lexicon and a tokenizer")

    def judge(
        self,
        candidates: Sequence[tuple[str, Sequence[str]]],
        *,
        opposites: Sequence[str | None] | None = None,
    ) -> list[list[Rewrite]]:
        """For each ``(caption, rewrites)``, the rewrites with similarity and reasons.

        ``opposites`` gives, aligned with ``candidates``, the caption of the reversed video
        (``None`` where there is none); the reversal check needs it.
        """
        opposites = list(opposites) if opposites is not None else [None] * len(candidates)
        if len(opposites) != len(candidates):
            raise ValueError(f"{len(opposites)} opposite captions for {len(candidates)} captions")
        pairs = [(caption, text) for caption, texts in candidates for text in texts]
        checked = self.reversal_margin is not None
        opposite_pairs = [
            (opposite, text)
            for (_, texts), opposite in zip(candidates, opposites)
            if checked and opposite is not None
            for text in texts
        ]
        cosines = pairwise_cosines(self.embedder, pairs + opposite_pairs).tolist()
        similarities, opposite_similarities = (
            iter(cosines[: len(pairs)]),
            iter(cosines[len(pairs) :]),
        )
        tokens: dict[str, Any] = {}
        if self.tokenize is not None:
            texts = list(dict.fromkeys(text for pair in pairs for text in pair))
            tokens = dict(zip(texts, self.tokenize(texts)))
        orders: dict[str, Any] = {}
        if self.order_parser is not None:
            texts = list(dict.fromkeys(text for pair in pairs for text in pair))
            orders = dict(zip(texts, self.order_parser(texts)))
            orders = self._matched(orders, pairs)
        judged = []
        for (caption, texts), opposite in zip(candidates, opposites):
            rewrites = []
            for text in texts:
                similarity = next(similarities)
                reasons = []
                if similarity < self.min_similarity:
                    reasons.append(f"similarity {similarity:.3f} < {self.min_similarity}")
                if self.lexicon is not None:
                    violations = self.lexicon.violations(tokens[caption], tokens[text])
                    reasons += [str(violation) for violation in violations]
                if orders:
                    reversed_pairs = orders[caption].reversals(orders[(caption, text)])
                    if reversed_pairs:
                        told = ", ".join(f"{a} before {b}" for a, b in reversed_pairs)
                        reasons.append(f"{ORDER_REASON} (caption: {told})")
                opposite_similarity = None
                if checked and opposite is not None:
                    opposite_similarity = next(opposite_similarities)
                    if opposite_similarity >= similarity + self.reversal_margin:
                        reasons.append(
                            f"{REVERSAL_REASON} ({opposite_similarity:.3f} >= {similarity:.3f}"
                            f" + {self.reversal_margin})"
                        )
                rewrites.append(Rewrite(text, similarity, tuple(reasons), opposite_similarity))
            judged.append(rewrites)
        return judged

    def _matched(
        self, orders: dict[str, EventOrder], pairs: Sequence[tuple[str, str]]
    ) -> dict[Any, EventOrder]:
        """``orders`` plus, per ``(caption, rewrite)``, the rewrite's order with the events it
        tells by other verbs matched to the caption's (``event_match``): every phrase to
        compare is embedded once."""
        if self.event_match is None:
            return {**orders, **{pair: orders[pair[1]] for pair in pairs}}
        phrases: set[str] = set()
        for caption, text in pairs:
            caption_left, text_left = unmatched(orders[caption], orders[text])
            if caption_left and text_left:
                phrases.update(orders[caption].phrases[i] for i in caption_left)
                phrases.update(orders[text].phrases[i] for i in text_left)
        listed = sorted(phrases)
        vectors = (
            dict(zip(listed, self.embedder.encode(listed, normalize_embeddings=True)))
            if listed
            else {}
        )

        def cosines(a: Sequence[str], b: Sequence[str]) -> list[list[float]]:
            return [[float(vectors[x] @ vectors[y]) for y in b] for x in a]

        matched_orders: dict[Any, EventOrder] = dict(orders)
        for caption, text in pairs:
            matched_orders[(caption, text)] = matched(
                orders[caption], orders[text], cosines, self.event_match
            )
        return matched_orders


@dataclass(frozen=True)
class CaptionRewrites:
    """The rewrites of one caption: every candidate, judged, and where they came from
    (``failed``: its request was parked as failed, so there are none)."""

    id: str
    caption: str
    rewrites: tuple[Rewrite, ...]
    model: str
    prompt_hash: str
    request_key: str
    unreadable: tuple[str, ...] = ()
    failed: bool = False  # the request was parked as failed: no reply to judge

    @property
    def accepted(self) -> list[Rewrite]:
        return [rewrite for rewrite in self.rewrites if rewrite.accepted]

    @property
    def rejected(self) -> list[Rewrite]:
        return [rewrite for rewrite in self.rewrites if not rewrite.accepted]


def rewrite_captions(
    client: ChatClient,
    captions: Sequence[tuple[str, str]],
    rewrite_filter: RewriteFilter,
    *,
    count: int = REWRITES_PER_CAPTION,
    template: PromptTemplate | None = None,
    on_wrong_count: str = "reject",
    opposites: Sequence[str | None] | None = None,
    park: bool = False,
) -> list[CaptionRewrites]:
    """Ask for ``count`` rewrites of each ``(id, caption)`` and judge them.

    ``opposites``, aligned with ``captions``, are the captions of the reversed videos (``None``
    where unknown), for the filter's reversal check. Candidates are the first ``count``
    distinct readable lines of the reply that differ from the caption. Refusal lines are
    rejected; a reply whose readable lines are not exactly
    ``count`` has all its candidates rejected (``on_wrong_count="keep"`` judges them one by
    one instead). A reply with no readable line raises
    :class:`~foilkit.generation.rtime.replies.ReplyFormatError` naming the request and the
    caption id, after the other replies were cached. With ``park``, a caption whose request
    fails after its retries gets no rewrite (``failed``) and is recorded in the client's
    ``failures`` (else its error is raised).
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if opposites is not None and len(opposites) != len(captions):
        raise ValueError(f"{len(opposites)} opposite captions for {len(captions)} captions")
    if on_wrong_count not in WRONG_COUNT_POLICIES:
        raise ValueError(
            f"on_wrong_count must be one of {WRONG_COUNT_POLICIES}, got {on_wrong_count!r}"
        )
    template = template or load_prompt(REWRITE_PROMPT)
    requests = [template.render(caption=caption, count=count) for _, caption in captions]
    completions = client.complete_many(requests, park=park) if requests else []
    candidates, unreadable, reply_reasons = [], [], []
    for (caption_id, caption), completion in zip(captions, completions):
        if completion.failed:  # parked: nothing to judge
            candidates.append((caption, []))
            unreadable.append(())
            reply_reasons.append(())
            continue
        asked = f"rewrites of caption {caption_id!r}"
        texts, lines = parse_reply(completion, read_text, asked=asked)
        candidates.append((caption, first_unique(texts, exclude=[caption])[:count]))
        unreadable.append(tuple(lines))
        wrong = len(texts) != count and on_wrong_count == "reject"
        reply_reasons.append((f"reply has {len(texts)} rewrites, {count} asked",) if wrong else ())
    judged = [
        [
            replace(
                r, reasons=reasons + ((REFUSAL_REASON,) if is_refusal(r.text) else ()) + r.reasons
            )
            for r in rewrites
        ]
        for rewrites, reasons in zip(
            rewrite_filter.judge(candidates, opposites=opposites), reply_reasons
        )
    ]
    return [
        CaptionRewrites(
            id=caption_id,
            caption=caption,
            rewrites=tuple(rewrites),
            model=client.config.model,
            prompt_hash=prompt_hash(messages),
            request_key=completion.key,
            unreadable=lines,
            failed=completion.failed,
        )
        for (caption_id, caption), messages, completion, rewrites, lines in zip(
            captions, requests, completions, judged, unreadable
        )
    ]


def random_caption_cosines(
    embedder: Any, captions: Sequence[str], *, rng: random.Random
) -> list[float]:
    """Fig. 10's baseline: each caption's cosine with a random *other* caption."""
    distinct = list(dict.fromkeys(captions))
    if len(distinct) < 2:
        return []
    pairs = []
    for index, caption in enumerate(distinct):
        other = rng.randrange(len(distinct) - 1)
        pairs.append((caption, distinct[other + (other >= index)]))
    return pairwise_cosines(embedder, pairs).tolist()


def distribution(values: Sequence[float], *, threshold: float | None = None) -> dict[str, Any]:
    """Count, mean, quantiles and a histogram (edges ``HISTOGRAM_EDGES``) of cosines."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return {"count": 0}
    quantiles = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
    summary = {
        "count": int(values.size),
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
        "quantiles": {str(q): float(v) for q, v in zip(quantiles, np.quantile(values, quantiles))},
        "histogram": {
            "edges": list(HISTOGRAM_EDGES),
            "counts": np.histogram(values, bins=HISTOGRAM_EDGES)[0].tolist(),
        },
    }
    if threshold is not None:
        summary["fraction_at_or_above_threshold"] = float((values >= threshold).mean())
    return summary


def similarity_report(
    results: Sequence[CaptionRewrites],
    rewrite_filter: RewriteFilter,
    *,
    count: int,
    rng: random.Random,
) -> dict[str, Any]:
    """The Fig. 10 check and the filters' tallies, as a JSON-serialisable dict.

    ``count`` is the number of rewrites asked for per caption (for the shortfall tally).
    ``rewrite_vs_caption`` is every candidate's cosine with its caption;
    ``random_caption_vs_caption`` the baseline of :func:`random_caption_cosines` (how many
    unrelated captions would pass the threshold is its ``fraction_at_or_above_threshold``).
    """
    threshold = rewrite_filter.min_similarity
    candidates = [rewrite for result in results for rewrite in result.rewrites]
    accepted = [rewrite for rewrite in candidates if rewrite.accepted]
    baseline = random_caption_cosines(
        rewrite_filter.embedder, [result.caption for result in results], rng=rng
    )
    rejected_by: dict[str, int] = {}
    for rewrite in candidates:
        for reason in rewrite.reasons:
            head = (
                "similarity"
                if reason.startswith("similarity")
                else "wrong count"
                if reason.startswith("reply has")
                else reason.split(" (")[0]
            )
            rejected_by[head] = rejected_by.get(head, 0) + 1
    return {
        "sentence_model": rewrite_filter.sentence_model,
        "min_similarity": threshold,
        "reversal_margin": rewrite_filter.reversal_margin,
        "captions": len(results),
        "candidates": len(candidates),
        "accepted": len(accepted),
        "captions_with_fewer_than_asked": sum(1 for r in results if len(r.accepted) < count),
        "rejections": dict(sorted(rejected_by.items(), key=lambda item: -item[1])),
        "rewrite_vs_caption": distribution([r.similarity for r in candidates], threshold=threshold),
        "accepted_rewrite_vs_caption": distribution([r.similarity for r in accepted]),
        "random_caption_vs_caption": distribution(baseline, threshold=threshold),
    }


def _short_model_name(model: str, limit: int = 40) -> str:
    """A model id or path as an axis label: its last path part, at most ``limit`` characters
    (a long local path would be cut off by the figure's edge)."""
    parts = [p for p in Path(str(model)).parts if p not in ("/", "snapshots")]
    while len(parts) > 1 and re.fullmatch(r"[0-9a-f]{20,}", parts[-1]):
        parts.pop()  # a Hub cache snapshot hash
    name = parts[-1].removeprefix("models--").replace("--", "/") if parts else str(model)
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def plot_similarity(report: dict[str, Any], path: str | os.PathLike) -> None:
    """Fig. 10 as a PNG: histograms of rewrite-vs-caption and random-caption cosines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 3.5))
    for name, label in (
        ("rewrite_vs_caption", "rewrite vs. its caption"),
        ("random_caption_vs_caption", "random caption vs. caption"),
    ):
        histogram = report[name].get("histogram")
        if histogram:
            edges = histogram["edges"]
            axis.stairs(histogram["counts"], edges, fill=True, alpha=0.5, label=label)
    axis.axvline(report["min_similarity"], color="black", linestyle="--", label="threshold")
    axis.set_xlabel(f"cosine similarity ({_short_model_name(report['sentence_model'])})")
    axis.set_ylabel("pairs")
    axis.legend()
    figure.tight_layout()
    with atomic_open(path, "wb") as handle:  # a temporary file renamed over the old one
        figure.savefig(handle, dpi=150, format=Path(path).suffix.lstrip(".").lower() or "png")
    plt.close(figure)


REWRITES_COLUMN = "rewrites"
PROVENANCE_COLUMN = "rewrite_provenance"
REJECTED_COLUMN = "rejected_rewrites"


def rewrite_columns(result: CaptionRewrites, rewrite_filter: RewriteFilter) -> dict[str, Any]:
    """The columns a caption row gains: accepted rewrites, their provenance, the rejected ones.

    ``rewrites`` is named as in the RTime builder's schema; ``rewrite_provenance`` holds one
    JSON object per rewrite, in the same order (as ``foil_provenance`` does for foils), and
    ``rejected_rewrites`` one JSON object per rejected candidate with its reasons.
    """
    import json

    shared = {
        "model": result.model,
        "prompt_hash": result.prompt_hash,
        "request_key": result.request_key,
        "sentence_model": rewrite_filter.sentence_model,
        "min_similarity": rewrite_filter.min_similarity,
        "reversal_margin": rewrite_filter.reversal_margin,
        "event_order_check": rewrite_filter.order_parser is not None,
        "event_match": rewrite_filter.event_match,
        "temporal_lexicon": rewrite_filter.lexicon.source if rewrite_filter.lexicon else None,
    }

    def record(rewrite: Rewrite, **extra: Any) -> str:
        fields = {"text": rewrite.text, "similarity": round(rewrite.similarity, 6), **extra}
        if rewrite.opposite_similarity is not None:
            fields["opposite_similarity"] = round(rewrite.opposite_similarity, 6)
        return json.dumps({**fields, **shared}, sort_keys=True, ensure_ascii=False)

    return {
        REWRITES_COLUMN: [rewrite.text for rewrite in result.accepted],
        PROVENANCE_COLUMN: [record(rewrite) for rewrite in result.accepted],
        REJECTED_COLUMN: [record(r, reasons=list(r.reasons)) for r in result.rejected],
    }
