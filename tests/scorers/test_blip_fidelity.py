"""The BLIP ITM adapter matches BLIP's own video scoring (salesforce/BLIP eval_retrieval_video.py).

``blip_video_itm`` below is this test's port of the ITM part of BLIP's ``evaluation()``: texts
tokenized to 35 tokens padded to that length, ``[ENC]`` written over the first token, each
video's frames through the vision tower and their features joined into one sequence, the
text encoder cross-attending to it, the ITM head's raw match logit at the first position. It
runs on the sub-modules of HF's ``BlipForImageTextRetrieval`` (``vision_model``,
``text_encoder``, ``itm_head``), which hold the same weights as BLIP's ``visual_encoder``,
``text_encoder`` and ``itm_head``; the adapter with BLIP's options must give its numbers and
decisions, and foilkit's original definition (per-frame probability, averaged) must not.
"""

from __future__ import annotations

import pytest
import torch

from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters.blip_itm import enc_token_id
from foilkit.scorers.requests import TextsRequest

BLIP_TEXT_TOKENS = 35  # eval_retrieval_video.py, line 49
BLIP_OPTIONS = {
    "pooling": "joined-frames",
    "itm_output": "logit",
    "max_text_tokens": BLIP_TEXT_TOKENS,
    "first_token": "enc",
}
NUM_ITEMS, NUM_FRAMES = 24, 4
# float64: the test model's large weights (see build_tiny_blip_itm_hub_layout) amplify float32
# rounding past 1e-5, which would blur the comparison with the port
DTYPE = torch.float64
# caption and foil pairs in the tiny tokenizer's vocabulary (every word one token)
PAIRS = (
    ("a red square moves to the left", "a red square moves to the right"),
    ("the woman opens the door before she sits", "the woman sits before she opens the door"),
    ("the ball rolls slowly from the right to the left", "the ball rolls from the left"),
    ("he closes the window while she is cooking", "he opens the window while she is cooking"),
    ("a person puts the cup on the table", "a person takes the cup off the table"),
    ("the bird flies from the tree to the roof", "the bird flies from the roof to the tree"),
)
# 40 words, past BLIP's 35 tokens; the two differ only after the 35th token
LONG = " ".join(["the man is walking to the left of the red car"] * 3) + " then he"
LONG_TEXTS = (LONG + " turns around and sits down", LONG + " stops at the light and smiles")


def blip_video_itm(model, tokenizer, first_token_id, pixel_values, texts):
    """BLIP's ``evaluation()`` ITM logits (no match, match) of every video x text: ``B x K x 2``.

    ``pixel_values``: ``B x N x C x H x W``, N frames per video.
    """
    tokens = tokenizer(
        list(texts),
        padding="max_length",
        truncation=True,
        max_length=BLIP_TEXT_TOKENS,
        return_tensors="pt",
    )
    text_ids, text_atts = tokens.input_ids.clone(), tokens.attention_mask
    text_ids[:, 0] = first_token_id
    videos, frames, channels, height, width = pixel_values.shape
    video_feat = model.vision_model(
        pixel_values=pixel_values.view(-1, channels, height, width)
    ).last_hidden_state
    video_feat = video_feat.view(videos, -1, video_feat.shape[-1])  # frames joined, in order
    logits = []
    for video in video_feat:
        encoder_output = video.repeat(len(texts), 1, 1)
        output = model.text_encoder(
            text_ids,
            attention_mask=text_atts,
            encoder_hidden_states=encoder_output,
            encoder_attention_mask=torch.ones(encoder_output.shape[:-1], dtype=torch.long),
        )
        logits.append(model.itm_head(output.last_hidden_state[:, 0, :]))
    return torch.stack(logits)


@pytest.fixture(scope="module")
def hub_layout_model(tmp_path_factory) -> str:
    """A tiny BLIP ITM whose ``[ENC]`` row sits after ``[DEC]`` as on the Hub's checkpoints."""
    from foilkit.synthetic.models import build_tiny_blip_itm_hub_layout

    return str(build_tiny_blip_itm_hub_layout(tmp_path_factory.mktemp("blip-itm-hub")))


@pytest.fixture(scope="module")
def blip(hub_layout_model):
    """``blip(**options)``: the adapter on the test model with BLIP's options, some replaced."""
    return lambda **options: load_adapter(
        hub_layout_model, device="cpu", dtype=DTYPE, **{**BLIP_OPTIONS, **options}
    )


@pytest.fixture(scope="module")
def items():
    """``NUM_ITEMS`` views of ``NUM_FRAMES`` random frames, each with a caption and a foil."""
    generator = torch.Generator().manual_seed(0)
    views = torch.randint(
        0, 256, (NUM_ITEMS, NUM_FRAMES, 3, 32, 32), generator=generator, dtype=torch.uint8
    )
    return [(view, PAIRS[index % len(PAIRS)]) for index, view in enumerate(views)]


def port(adapter, view, texts) -> torch.Tensor:
    """``blip_video_itm`` of one view on the adapter's model: ``K x 2`` logits."""
    pixel_values = adapter.image_processor(list(view), return_tensors="pt")["pixel_values"]
    enc = adapter.model.config.text_config.bos_token_id + 1  # [ENC] follows [DEC]: models/blip.py
    with torch.inference_mode():
        return blip_video_itm(
            adapter.model, adapter.tokenizer, enc, pixel_values[None].to(DTYPE), texts
        )[0].double()


def adapter_scores(adapter, items) -> torch.Tensor:
    requests = [TextsRequest(texts, view) for view, texts in items]
    return torch.tensor([result.scores for result in adapter.score(requests)], dtype=DTYPE)


@pytest.fixture(scope="module")
def reference(blip, items) -> torch.Tensor:
    """The port's ITM logits of every item's caption and foil: ``items x 2 x 2``."""
    adapter = blip()
    return torch.stack([port(adapter, view, texts) for view, texts in items])


def decisions(scores: torch.Tensor) -> list[bool]:
    """Whether the caption (text 0) scores strictly above the foil, as eval_alpro.py counts it."""
    return (scores[:, 0] > scores[:, 1]).tolist()


def test_joined_frames_reproduces_blip_video_evaluation(blip, items, reference):
    adapter = blip()
    scores = adapter_scores(adapter, items)
    expected = reference[..., 1]  # the raw match logit
    torch.testing.assert_close(scores, expected, rtol=1e-5, atol=1e-6)
    assert decisions(scores) == decisions(expected)
    assert adapter.score_kind == "logit"


def test_match_probability_is_the_softmax_of_the_same_logits(blip, items, reference):
    adapter = blip(itm_output="probability")
    expected = reference.softmax(-1)[..., 1]
    torch.testing.assert_close(adapter_scores(adapter, items), expected, rtol=1e-5, atol=1e-6)
    assert adapter.score_kind == "probability"


@pytest.mark.parametrize(
    "departure",
    [
        {"pooling": "frame-mean"},  # per-frame ITM logit, averaged
        {"pooling": None, "itm_output": None, "max_text_tokens": None, "first_token": None},
    ],
    ids=["frame-mean", "foilkit-original"],
)
def test_frame_mean_decides_differently_from_blip(blip, items, reference, departure):
    """The per-frame mean is a different score: some caption-foil decisions flip."""
    ours = decisions(adapter_scores(blip(**departure), items))
    differ = [i for i, (a, b) in enumerate(zip(ours, decisions(reference[..., 1]))) if a != b]
    assert differ, "frame-mean made every decision BLIP's joined-frames evaluation makes"


def test_texts_are_truncated_at_blip_35_tokens(blip, items):
    adapter = blip()
    assert len(adapter.tokenizer(LONG_TEXTS[0]).input_ids) > BLIP_TEXT_TOKENS + 5
    view = items[0][0]
    (truncated,) = adapter.score([TextsRequest(LONG_TEXTS, view)])
    expected = port(adapter, view, LONG_TEXTS)[:, 1]
    torch.testing.assert_close(
        torch.tensor(truncated.scores, dtype=DTYPE), expected, rtol=1e-5, atol=1e-6
    )
    assert truncated.scores[0] == pytest.approx(truncated.scores[1], rel=1e-6)  # same first 35

    untruncated = blip(max_text_tokens=None)
    (whole,) = untruncated.score([TextsRequest(LONG_TEXTS, view)])
    assert whole.scores[0] != pytest.approx(whole.scores[1], rel=1e-6)
    assert untruncated.describe()["text_truncation"] == 128  # the tiny text tower's positions


def test_enc_first_token_changes_scores(blip, items):
    enc, cls = blip(first_token="enc"), blip(first_token="cls")
    assert enc.describe()["first_token_id"] == len(enc.tokenizer) + 1  # the row after [DEC]
    assert cls.describe()["first_token_id"] is None
    assert not torch.allclose(adapter_scores(enc, items[:4]), adapter_scores(cls, items[:4]))


def test_enc_needs_a_token_or_an_embedding_row(blip, tiny_model):
    """The tokenizer's own ``[ENC]`` wins; with neither it nor a row after ``[DEC]``, an error."""
    adapter = blip()
    adapter.tokenizer.add_special_tokens({"additional_special_tokens": ["[ENC]"]})
    own = adapter.tokenizer.convert_tokens_to_ids("[ENC]")
    assert enc_token_id(adapter.tokenizer, adapter.model.config.text_config, "m") == own
    with pytest.raises(ValueError, match=r"\[ENC\].*bos_token_id"):
        load_adapter(tiny_model("blip-itm"), device="cpu", dtype=DTYPE, first_token="enc")


@pytest.mark.parametrize("pooling", ["frame-mean", "joined-frames"])
def test_vision_tower_runs_once_per_distinct_frame(blip, items, pooling):
    adapter = blip(pooling=pooling)
    batches = []
    hook = adapter.model.vision_model.register_forward_hook(
        lambda module, args, output: batches.append(len(output.last_hidden_state))
    )
    view, texts = items[0]
    try:
        results = adapter.score(
            [
                TextsRequest(texts, view),
                TextsRequest(texts, view.flip(0)),  # its reversal: the same frames
                TextsRequest(LONG_TEXTS, view),  # a second group of texts on the view
            ]
        )
    finally:
        hook.remove()
    assert batches == [NUM_FRAMES]
    # neither pooling sees frame order: a view and its reversal score alike
    assert results[0].scores == pytest.approx(results[1].scores, rel=1e-5)


def test_options_are_checked_and_recorded(blip):
    for name, value in (("pooling", "mean"), ("itm_output", "softmax"), ("first_token", "ENC")):
        with pytest.raises(ValueError, match=f"unknown {name} '{value}'"):
            blip(**{name: value})
    record = blip().describe()
    assert {name: record[name] for name in BLIP_OPTIONS} == BLIP_OPTIONS
    assert record["score_kind"] == "logit" and record["text_truncation"] == BLIP_TEXT_TOKENS
    default = blip(**dict.fromkeys(BLIP_OPTIONS)).describe()
    assert {name: default[name] for name in BLIP_OPTIONS} == {
        "pooling": "frame-mean",
        "itm_output": "probability",
        "max_text_tokens": None,
        "first_token": "cls",
    }
    assert default["score_kind"] == "probability"
