"""foilkit's encoders and text LMs against ports of the benchmarks' own scoring scripts.

Each reference is ported here from its file (ilkerkesen/ViLMA@746912b, lscpku/VITATECS@58bff59,
OpenAI CLIP's tokenizer from clip-anytorch) and run beside foilkit on the same tiny weights,
texts and frames: ViLMA's GPT-2 / OPT perplexity (``models/text/run.py``), ViLMA's CLIP score
(``models/image/run_clip.py``), ViLMA's X-CLIP score (``models/video/run_xclip.py``), CLIP's text
truncation (``clip.tokenize``) and CLIP4Clip's ``max_words`` (VITATECS
``X-CLIP/dataloaders/dataloader_vitatecs.py``).
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
import torch

import foilkit
from foilkit.scorers.adapters.dual_encoder import DualEncoderAdapter
from foilkit.scorers.adapters.text_lm import TextLMAdapter
from foilkit.scorers.adapters.xclip import XClipAdapter
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic import clip_vocab
from foilkit.synthetic.models import NUM_FRAMES, build_tiny_opt

RUN = {"num_workers": 0, "progress": False}
# Caption / foil sets in the benchmarks' style; one literal "<|endoftext|>" (GPT-2's EOS = pad)
# and one single-word text exercise run.py's quirks.
ITEMS = [
    (
        "a man is walking to the left of the red car",
        ["a man is walking to the right of the red car"],
    ),
    (
        "the woman opens the door before she sits down",
        ["the woman opens the door after she sits down"],
    ),
    (
        "two dogs run around the yard three times",
        ["two dogs run around the yard five times", "two dogs run around the yard once"],
    ),
    ("a person puts the cup on the table", ["a person takes the cup off the table"]),
    (
        "the ball rolls slowly from the right to the left",
        ["the ball rolls quickly from the right to the left"],
    ),
    (
        "the girl is throwing a ball up and catching it",
        ["the girl is catching a ball and throwing it up"],
    ),
    ("a boy pushes the box away from the camera", ["a boy pulls the box towards the camera"]),
    ("he closes the window while she is cooking", ["he opens the window while she is cooking"]),
    ("the water flows back into the glass", ["the water flows out of the glass"]),
    ("a cat jumps onto the sofa and sleeps", ["a cat jumps off the sofa and wakes up"]),
    (
        "five people are dancing together on a stage",
        ["five people are sitting together on a stage"],
    ),
    ("the car stops at the red light", ["the car starts at the red light"]),
    ("a chef cuts the onion before frying it", ["a chef cuts the onion after frying it"]),
    ("she picks up the phone and answers it", ["she puts down the phone and ignores it"]),
    ("the bird flies from the tree to the roof", ["the bird flies from the roof to the tree"]),
    ("children are playing football in the park", ["children are watching football in the park"]),
    ("dancing", ["sleeping"]),
    ("a man waves<|endoftext|> to the camera", ["a man waves to the camera"]),
]


def _normalized(features) -> torch.Tensor:
    """A ``get_text_features`` result (a tensor or an output's ``pooler_output``), L2-normalised."""
    return torch.nn.functional.normalize(getattr(features, "pooler_output", features), dim=-1)


def _frames(count: int, seed: int) -> torch.Tensor:
    """``count`` random uint8 frames, T x C x H x W, larger than the models' 32x32 inputs."""
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.integers(0, 256, size=(count, 3, 48, 64), dtype=np.uint8))


# --- 1. ViLMA's text-only baselines: models/text/run.py ------------------------------------------


def vilma_text_perplexities(
    path: str, texts: list[str], gpt2: bool, batch_size: int = 16
) -> list[float]:
    """models/text/run.py, lines 70-103: the tokenizer's own special tokens, pad = EOS for GPT-2,
    CrossEntropy(ignore_index=pad) over labels[:, 1:], summed, / attention_mask.sum(), exp."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if gpt2:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    criterion = torch.nn.CrossEntropyLoss(reduction="none", ignore_index=tokenizer.pad_token_id)
    scores = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        inputs = tokenizer(text=batch, text_target=batch, return_tensors="pt", padding=True)
        with torch.no_grad():
            logits = model(**inputs).logits
        logits = logits[:, :-1, :].reshape(-1, logits.size(-1))
        labels = inputs["labels"][:, 1:].contiguous()
        lengths = inputs["attention_mask"].sum(dim=-1)
        nll = criterion(logits, labels.view(-1)).reshape_as(labels)
        scores += (nll.sum(dim=1) / lengths).exp().tolist()
    return scores


@pytest.fixture(scope="module")
def text_lms(tiny_model, tmp_path_factory) -> dict[str, tuple[str, bool]]:
    """name -> (path, is GPT-2): the tiny GPT-2 (no BOS added), a tiny OPT (adds BOS ``</s>``)."""
    opt = str(build_tiny_opt(tmp_path_factory.mktemp("opt")))
    return {"gpt2": (tiny_model("gpt2"), True), "opt": (opt, False)}


def _adapter_scores(adapter, items) -> list[tuple[float, ...]]:
    results = adapter.score([TextsRequest((caption, *foils)) for caption, foils in items])
    return [result.scores for result in results]


def _decisions(scores: list[tuple[float, ...]]) -> list[bool]:
    """Perplexity: the caption wins when it is lower than every foil."""
    return [s[0] < min(s[1:]) for s in scores]


@pytest.mark.parametrize("name", ["gpt2", "opt"])
def test_text_lm_vilma_reduction_is_run_py(name, text_lms):
    path, gpt2 = text_lms[name]
    texts = [text for caption, foils in ITEMS for text in (caption, *foils)]
    reference = vilma_text_perplexities(path, texts, gpt2)
    adapter = TextLMAdapter(path, reduction="vilma")
    assert adapter.describe()["reduction"] == "vilma" and adapter.score_kind == "perplexity"
    scores = _adapter_scores(adapter, ITEMS)
    flat = [value for group in scores for value in group]
    assert flat == pytest.approx(reference, rel=1e-5)
    offsets = np.cumsum([0] + [1 + len(foils) for _, foils in ITEMS])
    expected = [tuple(reference[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    assert _decisions(scores) == _decisions(expected)

    # foilkit's own definition (BOS-conditioned mean over every token) is another number, and
    # on these items another decision
    mean = TextLMAdapter(path)
    assert mean.describe()["reduction"] == "mean"
    mean_scores = _adapter_scores(mean, ITEMS)
    assert [v for g in mean_scores for v in g] != pytest.approx(reference, rel=1e-3)
    assert _decisions(mean_scores) != _decisions(expected)


def test_text_lm_vilma_counts_pad_tokens_but_does_not_score_them(text_lms):
    """GPT-2's pad is its EOS: run.py's ignore_index drops a literal ``<|endoftext|>`` from the
    sum, while attention_mask.sum() still counts it; the first token is never scored."""
    path, _ = text_lms["gpt2"]
    adapter = TextLMAdapter(path, reduction="vilma")
    text = "a man waves<|endoftext|> to the camera"
    ids = adapter.tokenizer(text)["input_ids"]
    assert adapter.tokenizer.eos_token_id in ids[1:] and adapter.tokenizer.bos_token_id != ids[0]
    (result,) = adapter.score([TextsRequest((text,))])
    assert result.details["num_input_tokens"] == (len(ids),)
    assert result.details["num_tokens"] == (len(ids) - 1 - ids[1:].count(adapter._ignored),)
    assert result.scores[0] == pytest.approx(  # run.py's arithmetic is the model's float32
        math.exp(-result.details["logprob_sum"][0] / len(ids)), rel=1e-6
    )
    (reference,) = vilma_text_perplexities(path, [text], True)
    assert result.scores[0] == pytest.approx(reference, rel=1e-5)


def test_text_lm_refuses_an_unknown_reduction(tiny_model):
    with pytest.raises(ValueError, match="unknown reduction 'sum'"):
        TextLMAdapter(tiny_model("gpt2"), reduction="sum")


# --- 5. ViLMA's CLIP score: models/image/run_clip.py ---------------------------------------------


def vilma_clip_scores(
    path: str, frames: torch.Tensor, texts: list[str], padding=True
) -> list[float]:
    """models/image/run_clip.py, lines 144-155 (collate: vl_bench/data.py, lines 223-239):
    logits_per_image over [caption, *foils] per frame, softmax over the texts, mean over frames."""
    from transformers import AutoModel, AutoProcessor

    processor = AutoProcessor.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    inputs = processor(text=texts, images=list(frames), return_tensors="pt", padding=padding)
    with torch.no_grad():
        logits = model(**inputs).logits_per_image
    return logits.softmax(dim=1).mean(dim=0).tolist()


@pytest.mark.parametrize(("model", "padding"), [("clip", True), ("siglip", "max_length")])
def test_softmax_mean_is_vilma_run_clip(model, padding, tiny_model):
    """For SigLIP the same formula on its logits (logit_scale * cosine + logit_bias): the bias
    cancels in the softmax over texts; no sigmoid."""
    path = tiny_model(model)
    adapter = DualEncoderAdapter(path, pooling="softmax-mean")
    assert adapter.score_kind == "probability"
    assert adapter.describe()["pooling"] == "softmax-mean"
    assert adapter.describe()["score_kind"] == "probability"
    for seed, (caption, foils) in enumerate(ITEMS[:6]):
        frames = _frames(NUM_FRAMES, seed)
        texts = [caption, *foils]
        (view,) = adapter.encode_views([frames])
        assert view.shape[0] == NUM_FRAMES  # one row per frame
        scores = adapter.similarity(view, adapter.encode_texts(texts)).tolist()
        reference = vilma_clip_scores(path, frames, texts, padding)
        assert scores == pytest.approx(reference, rel=1e-5, abs=1e-7)
        assert sum(scores) == pytest.approx(1.0, abs=1e-6)
        # neither order-free pooling is this score
        for pooling in ("mean", "mean-of-similarities"):
            other = DualEncoderAdapter(path, pooling=pooling)
            (other_view,) = other.encode_views([frames])
            assert other.similarity(other_view, other.encode_texts(texts)).tolist() != (
                pytest.approx(reference, rel=1e-3)
            )


def test_softmax_mean_feeds_vilma_probability_metrics(tiny_model, benchmark, tmp_path):
    """End to end on the ViLMA-style rows: probabilities recorded as such, and the
    probability-mode extras of proficiency_combined_accuracy computed from them.

    ViLMA's bin/eval.py (lines 78-90) defines p_c and p_f as torchmetrics precisions over all
    texts; foilkit's metric takes VALSE's recall-style shares. With one foil per item and
    softmax scores that sum to 1 (no exact 0.5) the two coincide, which is checked here.
    """
    metric = pytest.importorskip(
        "foilkit.metrics.proficiency_combined_accuracy.proficiency_combined_accuracy"
    )
    result = foilkit.score(
        tiny_model("clip"), benchmark, pooling="softmax-mean", out_dir=str(tmp_path / "run"), **RUN
    )
    assert set(result["score_kind"]) == {"probability"}
    rows = [row for row in result if row["proficiency_caption"] is not None]
    captions = [row["caption_score"] for row in rows]
    foils = [row["foil_scores"] for row in rows]
    for row in rows:
        assert row["caption_score"] + sum(row["foil_scores"]) == pytest.approx(1.0, abs=1e-6)
        total = row["proficiency_caption_score"] + sum(row["proficiency_foil_scores"])
        assert total == pytest.approx(1.0, abs=1e-6)
    out = metric.proficiency_combined_accuracy(
        captions,
        foils,
        [row["proficiency_caption_score"] for row in rows],
        [row["proficiency_foil_scores"] for row in rows],
        score_kind="probability",
        n_resamples=0,
    )
    probs = np.array([[c, *f] for c, f in zip(captions, foils)])
    labels = np.zeros_like(probs, dtype=bool)
    labels[:, 0] = True
    # bin/eval.py: precision(probs, labels) and precision(1 - probs, 1 - labels)
    predicted = probs > 0.5
    eval_p_c = (predicted & labels).sum() / predicted.sum()
    eval_p_f = (~predicted & ~labels).sum() / (~predicted).sum()
    assert out["p_c"] == pytest.approx(eval_p_c) and out["p_f"] == pytest.approx(eval_p_f)
    assert out["main_accuracy"] == pytest.approx(np.mean(probs[:, 0] > probs[:, 1]))
    assert 0.0 <= out["auroc"] <= 1.0


def test_dual_encoder_refuses_an_unknown_pooling(tiny_model):
    with pytest.raises(ValueError, match="unknown pooling 'max'"):
        DualEncoderAdapter(tiny_model("clip"), pooling="max")


# --- 8. CLIP's real vocabulary, X-CLIP's end-of-text pooling, text truncation -------------------


def openai_simple_tokenizer():
    """OpenAI CLIP's ``SimpleTokenizer``, loaded from clip-anytorch's file (the package's
    ``__init__`` needs ``pkg_resources``); CLIP4Clip's ``tokenization_clip.py`` is the same code."""
    path = clip_vocab.bpe_vocab_path().parent / "simple_tokenizer.py"
    spec = importlib.util.spec_from_file_location("openai_clip_simple_tokenizer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SimpleTokenizer()


def clip_tokenize(tokenizer, text: str, context_length: int = 77) -> list[int]:
    """``clip.tokenize(text, truncate=True)`` (openai/CLIP clip/clip.py): SOT, BPE, EOT; when too
    long, cut to ``context_length`` and make the last token EOT. Unpadded."""
    sot, eot = tokenizer.encoder["<|startoftext|>"], tokenizer.encoder["<|endoftext|>"]
    tokens = [sot, *tokenizer.encode(text), eot]
    if len(tokens) > context_length:
        tokens = tokens[:context_length]
        tokens[-1] = eot
    return tokens


def clip4clip_words(tokenizer, text: str, max_words: int) -> list[int]:
    """VITATECS X-CLIP/dataloaders/dataloader_vitatecs.py ``_get_text``, lines 75-83: SOT, the
    BPE tokens cut to ``max_words - 2``, then EOT (before the zero padding)."""
    words = ["<|startoftext|>", *tokenizer.tokenize(text)][: max_words - 1] + ["<|endoftext|>"]
    return [tokenizer.encoder[word] for word in words]


LONG_CAPTION = " ".join(["a red square slowly moves to the left and then to the right"] * 12)


@pytest.fixture(scope="module")
def openai_tokenizer():
    reference = openai_simple_tokenizer()
    # CLIP4Clip's SimpleTokenizer adds ``tokenize`` (BPE pieces as strings) to OpenAI's
    reference.tokenize = lambda text: [reference.decoder[i] for i in reference.encode(text)]
    return reference


def test_tiny_clip_tokenizer_is_clips_real_one(tiny_model, openai_tokenizer):
    from transformers import AutoProcessor

    for model in ("clip", "xclip"):
        tokenizer = AutoProcessor.from_pretrained(tiny_model(model)).tokenizer
        assert len(tokenizer) == clip_vocab.VOCAB_SIZE == 49408
        assert (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id) == (
            49406,
            49407,
            49407,
        )
        assert tokenizer.model_max_length == 77
        texts = ["A red square moves to the RIGHT.", "Zoë's café: then… 日本!", *ITEMS[2][1]]
        for text in texts:
            assert tokenizer(text)["input_ids"] == clip_tokenize(openai_tokenizer, text), text


def test_xclip_pools_text_at_the_end_of_text_token(tiny_model):
    from transformers import AutoModel, AutoProcessor

    path = tiny_model("xclip")
    model = AutoModel.from_pretrained(path).eval()
    tokenizer = AutoProcessor.from_pretrained(path).tokenizer
    texts = ["a red square moves left", "a red square moves right", "dancing"]
    inputs = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        output = model.text_model(**inputs)
    end = [ids.index(clip_vocab.EOS_ID) for ids in inputs["input_ids"].tolist()]
    assert end == [6, 6, 2]
    expected = output.last_hidden_state[torch.arange(len(texts)), torch.tensor(end)]
    assert torch.equal(output.pooler_output, expected)
    # the pooled states see the whole text: the direction word changes them
    assert not torch.allclose(output.pooler_output[0], output.pooler_output[1])


def vilma_xclip_logits(path: str, frames: torch.Tensor, texts: list[str]) -> list[float]:
    """models/video/run_xclip.py, lines 131-140 (collate: vl_bench/data.py, lines 197-211):
    ``logits_per_video`` of the item's texts, no softmax."""
    from transformers import AutoModel, AutoProcessor

    processor = AutoProcessor.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    inputs = processor(text=texts, videos=[list(frames)], return_tensors="pt", padding=True)
    with torch.no_grad():
        return model(**inputs).logits_per_video[0].tolist()


def test_xclip_score_ranks_as_vilma_logits(tiny_model):
    """run_xclip.py's score is logit_scale x foilkit's cosine: the same decisions, no option."""
    path = tiny_model("xclip")
    adapter = XClipAdapter(path)
    requests = [
        TextsRequest((caption, *foils), _frames(NUM_FRAMES, seed))
        for seed, (caption, foils) in enumerate(ITEMS[:6])
    ]
    scale = float(adapter.model.logit_scale.detach().exp())
    for request, result in zip(requests, adapter.score(requests)):
        reference = vilma_xclip_logits(path, request.frames, list(request.texts))
        assert [scale * s for s in result.scores] == pytest.approx(reference, rel=1e-4, abs=1e-5)
        assert np.argmax(result.scores) == np.argmax(reference)


def test_tiny_xclip_tells_directions_apart(tiny_model, benchmark):
    """With the toy vocabulary X-CLIP pooled at the highest toy id, a word shared by caption and
    foil, and tied every direction item; with CLIP's ids it pools at the end of the text."""
    result = foilkit.score(tiny_model("xclip"), benchmark, **RUN)
    for row in result:
        assert row["caption_score"] != row["foil_scores"][0], row["id"]


@pytest.mark.parametrize("model", ["clip", "xclip"])
def test_a_caption_longer_than_77_tokens_is_truncated_keeping_eos(
    model, tiny_model, openai_tokenizer
):
    path = tiny_model(model)
    reference = clip_tokenize(openai_tokenizer, LONG_CAPTION)
    assert len(openai_tokenizer.encode(LONG_CAPTION)) > 77 and len(reference) == 77
    assert reference[-1] == clip_vocab.EOS_ID
    if model == "clip":
        adapter = DualEncoderAdapter(path)
        (embedding,) = adapter.encode_texts([LONG_CAPTION])
        with torch.no_grad():
            expected = adapter.model.get_text_features(input_ids=torch.tensor([reference]))
        expected = _normalized(expected)
        assert torch.allclose(embedding, expected[0], atol=1e-6)
    else:
        adapter = XClipAdapter(path)
        request = TextsRequest((LONG_CAPTION, "a red square"), _frames(NUM_FRAMES, 0))
        (result,) = adapter.score([request])
        assert all(map(math.isfinite, result.scores))
    assert adapter.describe()["text_truncation"] == 77
    assert adapter.describe()["max_text_tokens"] is None


def test_max_text_tokens_32_is_clip4clips_max_words(tiny_model, openai_tokenizer):
    """VITATECS' eval_vitatecs.sh runs CLIP4Clip / X-CLIP with --max_words 32: SOT + 30 BPE
    tokens + EOT."""
    path = tiny_model("clip")
    adapter = DualEncoderAdapter(path, max_text_tokens=32)
    assert adapter.describe()["max_text_tokens"] == 32
    reference = clip4clip_words(openai_tokenizer, LONG_CAPTION, 32)
    assert len(reference) == 32 and reference[-1] == clip_vocab.EOS_ID
    inputs = adapter.tokenizer([LONG_CAPTION], truncation=True, max_length=adapter._max_length)
    assert inputs["input_ids"][0] == reference
    (embedding,) = adapter.encode_texts([LONG_CAPTION])
    with torch.no_grad():
        expected = adapter.model.get_text_features(input_ids=torch.tensor([reference]))
    expected = _normalized(expected)
    assert torch.allclose(embedding, expected[0], atol=1e-6)
    assert not torch.allclose(embedding, DualEncoderAdapter(path).encode_texts([LONG_CAPTION])[0])
    with pytest.raises(ValueError, match="exceeds"):
        DualEncoderAdapter(path, max_text_tokens=78)


def test_max_text_tokens_on_siglip_truncates_but_pads_to_the_full_length(tiny_model):
    """SigLIP pools the last position of a text padded to its 64 positions: a shorter
    truncation must not change the padded length."""
    path = tiny_model("siglip")
    adapter = DualEncoderAdapter(path, max_text_tokens=8)
    text = "the ball rolls slowly from the right to the left and back again"
    truncated = adapter.tokenizer([text], truncation=True, max_length=8)
    assert len(truncated["input_ids"][0]) == 8
    padded = adapter.tokenizer.pad(
        truncated, padding="max_length", max_length=64, return_tensors="pt"
    )
    assert padded["input_ids"].shape == (1, 64)
    with torch.no_grad():
        expected = adapter.model.get_text_features(**padded)
    expected = _normalized(expected)
    assert torch.allclose(adapter.encode_texts([text])[0], expected[0], atol=1e-6)


def test_xclip_max_text_tokens(tiny_model):
    adapter = XClipAdapter(tiny_model("xclip"), max_text_tokens=32)
    described = adapter.describe()
    assert described["max_text_tokens"] == 32 and described["text_truncation"] == 32
    request = TextsRequest((LONG_CAPTION, "a red square"), _frames(NUM_FRAMES, 1))
    (result,) = adapter.score([request])
    assert all(map(math.isfinite, result.scores))


@pytest.mark.parametrize(
    ("cls", "model", "options"),
    [
        (
            DualEncoderAdapter,
            "clip",
            {
                "pooling": "mean",
                "max_text_tokens": None,
                "preprocess": "pil",
                "score_scale": "logit",
            },
        ),
        (
            DualEncoderAdapter,
            "clip",
            {
                "pooling": "mean-of-similarities",
                "max_text_tokens": 40,
                "preprocess": "default",
                "score_scale": "cosine",
            },
        ),
        (
            DualEncoderAdapter,
            "clip",
            {
                "pooling": "softmax-mean",
                "max_text_tokens": 32,
                "preprocess": "default",
                "score_scale": "cosine",
            },
        ),
        (XClipAdapter, "xclip", {"max_text_tokens": 20, "score_scale": "logit"}),
        (TextLMAdapter, "gpt2", {"reduction": "mean"}),
        (TextLMAdapter, "gpt2", {"reduction": "vilma"}),
    ],
)
def test_every_option_is_declared_and_described(cls, model, options, tiny_model):
    assert set(options) == set(cls.options)
    described = cls(tiny_model(model), **options).describe()
    for name, value in options.items():
        assert described[name] == value, name


@pytest.mark.parametrize(
    ("cls", "model", "options", "message"),
    [
        (DualEncoderAdapter, "clip", {"preprocess": "opencv"}, "unknown preprocess"),
        (DualEncoderAdapter, "clip", {"score_scale": "percent"}, "unknown score_scale"),
        (
            DualEncoderAdapter,
            "clip",
            {"pooling": "softmax-mean", "score_scale": "logit"},
            "scores probabilities",
        ),
        (XClipAdapter, "xclip", {"score_scale": "percent"}, "unknown score_scale"),
    ],
)
def test_bad_preprocess_and_score_scale_are_named(cls, model, options, message, tiny_model):
    with pytest.raises(ValueError, match=message):
        cls(tiny_model(model), **options)


def test_xclip_logit_scale_is_logits_per_video(tiny_model):
    """``score_scale="logit"``: X-CLIP's ``logits_per_video`` itself (ViLMA's run_xclip.py units),
    ``logit_scale`` times the default cosine."""
    logit = XClipAdapter(tiny_model("xclip"), score_scale="logit")
    cosine = XClipAdapter(tiny_model("xclip"))
    request = TextsRequest(("a red square", "a blue circle"), _frames(NUM_FRAMES, 3))
    (scaled,), (plain,) = logit.score([request]), cosine.score([request])
    scale = float(logit.model.logit_scale.detach().exp())
    assert scale != 1.0
    assert scaled.scores == pytest.approx([scale * value for value in plain.scores], rel=1e-5)
