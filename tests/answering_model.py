"""A tiny video LLM that answers multiple-choice questions with letters, for generate mode's tests.

The tiny random models write random tokens, which no answer parser reads. This one is the tiny
LLaVA-NeXT-Video with its output head steered towards the option letters: the first answer
token is almost always ``A`` or ``B`` (which one depends on the prompt and the draw), a letter
is followed by the end of the turn, and now and then another token slips in, so answers are
parsed, sometimes unparseable, and differ between seeds when sampled.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.scorers.requests import Decoding, Generations


def letter_answering_model(out: Path) -> Path:
    """Save the steered model with its processor in ``out``; returns ``out``."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from foilkit.synthetic.models import tiny_model_path

    source = tiny_model_path("llava-next-video")
    model = AutoModelForImageTextToText.from_pretrained(source)
    processor = AutoProcessor.from_pretrained(source)
    tokenizer = processor.tokenizer
    (a,), (b,) = (tokenizer(letter, add_special_tokens=False).input_ids for letter in "AB")
    end = tokenizer.eos_token_id
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        head[b] *= 150
        noise = torch.randn(head.shape[1], generator=torch.Generator().manual_seed(0))
        head[a] = head[b] + 0.3 * noise
        head[end] *= 40
        # a letter's own embedding points at the end of the turn: one letter, then stop
        model.get_input_embeddings().weight[[a, b]] = head[end] / head[end].norm() * 5
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def assert_greedy_answer_follows_the_logits(adapter, frames, texts, timestamps=None) -> None:
    """A one-token greedy answer of the ``generate`` mode ``adapter`` (its in-process backend)
    is the token a full forward over the whole rendered prompt ranks first, decoded as the
    adapter keeps answers (special tokens dropped, spaces stripped; an end token: no answer);
    ``timestamps``: the frames' times, which a model with a time axis is given."""
    import torch

    from foilkit.scorers.generate import generate_requests
    from foilkit.scorers.requests import Decoding, TextsRequest

    one_token = Decoding(max_new_tokens=1)
    asked = TextsRequest(texts, frames, timestamps=timestamps)
    request = generate_requests(asked, "vitatecs", one_token)[0]
    (generated,) = adapter.generate([request])
    inputs = adapter.model_inputs(request, adapter.chat_prompt(request.messages))
    with torch.inference_mode():
        first = int(adapter.model(**inputs).logits[0, -1].argmax())
    if first in adapter._end_ids():
        assert generated == Generations(("",), (0,))
    else:
        text = adapter.tokenizer.decode([first], skip_special_tokens=True).strip()
        assert generated == Generations((text,), (1,))
    assert_the_prefix_answers_as_the_whole_prompt(adapter, frames, texts, timestamps)
    assert_the_batch_answers_as_one_at_a_time(adapter, frames, texts, timestamps)


def assert_the_prefix_answers_as_the_whole_prompt(adapter, frames, texts, timestamps=None) -> None:
    """Greedy answers of several tokens to every order of the options about a view and about
    its reversal, asked together: each view's prefix is encoded once (where the family's cache
    can be reused, ``prefix_reuse``), and every answer is the one ``model.generate`` gives on
    the question's whole prompt, as the adapter generated before it reused the prefix."""
    from foilkit.scorers.generate import generate_requests
    from foilkit.scorers.requests import Decoding, TextsRequest

    decoding = Decoding(max_new_tokens=3)
    backward = timestamps[::-1] if timestamps is not None else None
    requests = [
        *generate_requests(
            TextsRequest(texts, frames, timestamps=timestamps), "vitatecs", decoding
        ),
        *generate_requests(
            TextsRequest(texts, frames.flip(0), timestamps=backward), "vitatecs", decoding
        ),
    ]
    encoded = []
    encode_prefix = adapter._encode_prefix

    def counting(request, prefix):
        encoded.append(prefix)
        return encode_prefix(request, prefix)

    adapter._encode_prefix = counting
    try:
        answers = adapter.generate(requests)
    finally:
        del adapter._encode_prefix  # back to the class's method
    today = [adapter._generate_whole(r, adapter.chat_prompt(r.messages)) for r in requests]
    assert answers == today
    if adapter.prefix_reuse != "full" and not adapter._instruction_tokenizers:
        assert len(encoded) == 2  # one prefix forward per view


def assert_entail_follows_the_logits(adapter, frames, texts, timestamps=None) -> None:
    """Each text's score in the ``entail`` mode ``adapter`` (the video prefix encoded once) is
    P(Yes) / (P(Yes) + P(No)) of one full forward over the whole rendered entailment question."""
    import pytest
    import torch

    from foilkit.scorers.requests import TextsRequest

    request = TextsRequest(texts, frames, timestamps=timestamps)
    scored = adapter.score([request])[0]
    prefix, questions = adapter.prompt_texts(texts)
    yes, no = adapter._entail_ids
    for position, question in enumerate(questions):
        inputs = adapter.model_inputs(request, prefix + question)
        with torch.inference_mode():
            last = adapter.model(**inputs).logits[0, -1]
        expected = float(last[[yes, no]].float().softmax(0)[0])
        assert scored.scores[position] == pytest.approx(expected, abs=1e-5)
    assert all(0.0 < score < 1.0 for score in scored.scores)


#: own questions about a view, of several lengths, two of them of one length (a batch of its
#: own where a family batches only questions of one length), TempCompass-shaped
OWN_QUESTIONS = (
    "Is it moving?",
    "Question 1: in which direction does the square move in this video, as it plays?",
    "Question 2: in which direction does the square move in this video, as it plays?",
    "Which of the captions describes the video best, read from start to end?",
)


def assert_the_batch_answers_as_one_at_a_time(adapter, frames, texts, timestamps=None) -> None:
    """Greedy questions about several views (the frames, their reversal and, where the family
    takes any number of frames, their first half: a shorter prefix), TempCompass-shaped (own
    questions of several lengths) and VITATECS-shaped (every option order, after another
    prefix), answer the same decoded in batches across views, in batches of one view at a time
    (``batch_across_views=False``) and one question at a time on the prefix cache (which
    answers as ``model.generate`` on the whole prompt:
    :func:`assert_the_prefix_answers_as_the_whole_prompt`). Where the family batches
    (``batching``, recorded in ``describe()``), batches of several questions ran, holding
    several views' questions where it batches across views (``across_views``), and each
    question's next-token logits in a batch of several views' questions are those of the
    question alone on its own view's prefix cache
    (:func:`assert_a_batch_reads_each_question_on_its_own_view`)."""
    from foilkit.scorers.generate import generate_requests
    from foilkit.scorers.requests import Decoding, TextsRequest

    decoding = Decoding(max_new_tokens=4)
    letters = tuple("AB")
    listed = "\n".join(f"{letter}. {text}" for letter, text in zip(letters, texts))
    requests = []
    for view, times in _views(adapter, frames, timestamps):
        for question in OWN_QUESTIONS:
            asked = TextsRequest(
                texts, view, timestamps=times, question=f"{question}\n{listed}", answers=letters
            )
            requests += generate_requests(asked, "", decoding)
        asked = TextsRequest(texts, view, timestamps=times)
        requests += generate_requests(asked, "vitatecs", decoding)
    record = adapter.describe()["batched_decoding"]
    assert record["batching"] == adapter.batching
    before = adapter.decode_batches, adapter.cross_view_batches
    batched = adapter.generate(requests)
    across = adapter.cross_view_batches - before[1]
    size = adapter.generate_batch_size
    adapter.batch_across_views = False  # the questions of one view (one prefix) at a time
    try:
        per_view = adapter.generate(requests)
        assert adapter.cross_view_batches - before[1] == across
        assert adapter.describe()["batched_decoding"].get("across_views", "off") == "off"
        adapter.generate_batch_size = 1  # one question at a time, on the prefix cache
        one_at_a_time = adapter.generate(requests)
    finally:
        adapter.generate_batch_size, adapter.batch_across_views = size, True
    assert batched == per_view == one_at_a_time
    if adapter.batching == "off":
        assert record["why"] and "across_views" not in record
        assert adapter.decode_batches == before[0]
        return
    assert adapter.decode_batches > before[0]
    assert record["across_views"] == adapter.batching and across > 0
    assert_a_batch_reads_each_question_on_its_own_view(adapter, requests)


def _views(adapter, frames, timestamps) -> list[tuple]:
    """The views the batch check asks about, with their frames' times: the frames, their
    reversal, and their first half (an even count of at least two) where the family takes any
    number of frames."""
    backward = timestamps[::-1] if timestamps is not None else None
    views = [(frames, timestamps), (frames.flip(0), backward)]
    half = len(frames) // 4 * 2
    fixed = adapter.plain_prompt is not None and adapter.plain_prompt.frames is not None
    if half >= 2 and not fixed:
        views.append((frames[:half], timestamps[:half] if timestamps is not None else None))
    return views


def assert_a_batch_reads_each_question_on_its_own_view(adapter, requests) -> None:
    """The first answer token's logits of greedy ``requests`` about several views (and two
    prefixes of each) decoded in one batch (where the family batches ``same-length``, those of
    one question length and one prefix length) equal those of each question alone on its own
    view's prefix cache, encoded anew just before (to within float rounding: a wrong position,
    a pad seen, would move them further); each question reads differently about another of the
    views (so a row continuing another view's cache would fail; a tiny model may read a view and
    its reversal alike, not the shorter view)."""
    import torch

    rows, encoded = [], {}
    with torch.inference_mode():
        for request in requests:
            prefix, ids = adapter._split(request, adapter.chat_prompt(request.messages))
            key = (id(request.frames), prefix)
            if key not in encoded:
                adapter._view = None
                encoded[key] = (request, prefix, adapter._prefix_cache(request, prefix))
            rows.append((key, ids))
    adapter._view = None
    if adapter.batching == "same-length":
        shapes = [(len(ids), encoded[key][2].length) for key, ids in rows]
        common = max(set(shapes), key=shapes.count)
        rows = [row for row, shape in zip(rows, shapes) if shape == common]
    else:
        assert len({len(ids) for _, ids in rows}) > 1  # the questions are padded
        assert len({encoded[key][2].length for key, _ in rows}) > 1  # and the prefixes
    views = {key[0] for key, _ in rows}
    assert len(views) > 1 and len(rows) > len(views)  # several views, several questions each
    first = []
    batch_logits = adapter._batch_logits

    def reading(ids, mask, positions, past, deltas):
        logits = batch_logits(ids, mask, positions, past, deltas)
        if not first:  # the questions' step, before any answer token
            first.append(logits)
        return logits

    adapter._batch_logits = reading
    try:
        with torch.inference_mode():
            adapter._decode_batch(
                [encoded[key][2] for key, _ in rows],
                [ids for _, ids in rows],
                Decoding(max_new_tokens=1),
            )
            alone = []
            for key, ids in rows:  # the view's prefix encoded again: the model's state is its
                request, prefix, _ = encoded[key]
                cache, _ = adapter._encode_prefix(request, prefix)
                alone.append(adapter._continue(cache, ids)[-1])
    finally:
        del adapter._batch_logits  # back to the class's method
    alone = torch.stack(alone)
    tolerance = 1e-5 * max(float(alone.abs().max()), 1.0)
    assert float((first[0] - alone).abs().max()) <= tolerance
    for a, (key_a, ids_a) in enumerate(rows):  # the question about another view reads apart
        others = [
            b for b, (key_b, ids_b) in enumerate(rows) if ids_b == ids_a and key_b[0] != key_a[0]
        ]
        assert any(float((alone[a] - alone[b]).abs().max()) > tolerance for b in others)
