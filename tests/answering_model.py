"""A tiny video LLM that answers multiple-choice questions with letters, for generate mode's tests.

The tiny random models write random tokens, which no answer parser reads. This one is the tiny
LLaVA-NeXT-Video with its output head steered towards the option letters: the first answer
token is almost always ``A`` or ``B`` (which one depends on the prompt and the draw), a letter
is followed by the end of the turn, and now and then another token slips in, so answers are
parsed, sometimes unparseable, and differ between seeds when sampled.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.scorers.requests import Generations


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
    """Greedy questions about two views, TempCompass-shaped (own questions of several lengths)
    and VITATECS-shaped (every option order), answer the same decoded in batches as one at a
    time on the prefix cache (which answers as ``model.generate`` on the whole prompt:
    :func:`assert_the_prefix_answers_as_the_whole_prompt`); where the family batches
    (``batching``, recorded in ``describe()``), batches of several questions ran, and
    each question's next-token logits in a left-padded batch are those of the question alone
    on the prefix cache (to within float rounding: a wrong position, a pad seen, would move
    them further than the answers of a tiny random model show)."""
    from foilkit.scorers.generate import generate_requests
    from foilkit.scorers.requests import Decoding, TextsRequest

    decoding = Decoding(max_new_tokens=4)
    backward = timestamps[::-1] if timestamps is not None else None
    letters = tuple("AB")
    listed = "\n".join(f"{letter}. {text}" for letter, text in zip(letters, texts))
    requests = []
    for view, times in ((frames, timestamps), (frames.flip(0), backward)):
        for question in OWN_QUESTIONS:
            asked = TextsRequest(
                texts, view, timestamps=times, question=f"{question}\n{listed}", answers=letters
            )
            requests += generate_requests(asked, "", decoding)
        asked = TextsRequest(texts, view, timestamps=times)
        requests += generate_requests(asked, "vitatecs", decoding)
    record = adapter.describe()["batched_decoding"]
    assert record["batching"] == adapter.batching
    before = adapter.decode_batches
    batched = adapter.generate(requests)
    size = adapter.generate_batch_size
    adapter.generate_batch_size = 1  # one question at a time, on the prefix cache
    try:
        one_at_a_time = adapter.generate(requests)
    finally:
        adapter.generate_batch_size = size
    assert batched == one_at_a_time
    if adapter.batching == "off":
        assert record["why"] and adapter.decode_batches == before
        return
    assert adapter.decode_batches > before
    _assert_the_padded_batch_reads_each_question_alone(adapter, requests[: len(OWN_QUESTIONS)])


def _assert_the_padded_batch_reads_each_question_alone(adapter, requests) -> None:
    """The first answer token's logits of ``requests`` (greedy, one view, one prefix) decoded in
    one batch (the questions of one length only where the family batches ``same-length``) equal
    those of each question alone on the prefix cache."""
    import torch

    split = [adapter._split(r, adapter.chat_prompt(r.messages)) for r in requests]
    assert all(one is not None and one[0] == split[0][0] for one in split)
    continuations = [ids for _, ids in split]
    if adapter.batching == "same-length":
        lengths = [len(ids) for ids in continuations]
        common = max(set(lengths), key=lengths.count)
        continuations = [ids for ids in continuations if len(ids) == common]
    else:
        assert len({len(ids) for ids in continuations}) > 1  # the batch is padded
    assert len(continuations) > 1
    first = []
    batch_logits = adapter._batch_logits

    def reading(ids, mask, positions, past, deltas):
        logits = batch_logits(ids, mask, positions, past, deltas)
        if not first:  # the questions' step, before any answer token
            first.append(logits)
        return logits

    adapter._batch_logits = reading
    adapter._view = None
    try:
        with torch.inference_mode():
            cache, last = adapter._prefix_cache(requests[0], split[0][0])
            adapter._decode_batch(cache, last, continuations, requests[0].decoding)
            alone = torch.stack([adapter._continue(cache, ids)[-1] for ids in continuations])
    finally:
        del adapter._batch_logits  # back to the class's method
        adapter._view = None
    scale = float(alone.abs().max())
    assert float((first[0] - alone).abs().max()) <= 1e-5 * max(scale, 1.0)
