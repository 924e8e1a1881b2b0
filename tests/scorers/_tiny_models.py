"""TEMPORARY: tiny models for the scorer tests until foilkit.testing.models lands (then delete this file)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

_ROOT = Path(tempfile.mkdtemp(prefix="foilkit-tiny-"))
_WORDS = ("a red green blue yellow white square moves to the right left up down then appears first second video "
          "shows which of following best describes content respond with single letter describe in one sentence "
          "you are given short clip and two three sentences select that the or").split()


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "<unk>", "<s>", "</s>", "<video>", "<image>", *_WORDS, *"ABCDEFGHIJ()?:.,"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", extra_special_tokens={"video_token": "<video>", "image_token": "<image>"})


@functools.cache
def tiny_model_path(name: str) -> Path:
    import torch
    import transformers as T

    torch.manual_seed(0)
    out = _ROOT / name
    text = dict(vocab_size=128, hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=64, eos_token_id=3, bos_token_id=2, pad_token_id=0)
    vision = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8)
    size = dict(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    if name == "clip":
        T.CLIPModel(T.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)).save_pretrained(out)
        T.CLIPProcessor(image_processor=T.CLIPImageProcessor(**size), tokenizer=_tokenizer()).save_pretrained(out)
    elif name == "xclip":
        cfg = T.XCLIPConfig(text_config=text, projection_dim=16, prompt_layers=1, prompt_attention_heads=4,
                            vision_config=dict(vision, num_frames=8, mit_hidden_size=16, mit_intermediate_size=37,
                                               mit_num_hidden_layers=1, mit_num_attention_heads=4))
        T.XCLIPModel(cfg).save_pretrained(out)
        T.XCLIPProcessor(image_processor=T.VideoMAEImageProcessor(**size), tokenizer=_tokenizer()).save_pretrained(out)
    elif name == "blip-itm":
        cfg = T.BlipConfig(text_config=dict(text, encoder_hidden_size=32, sep_token_id=3), vision_config=vision,
                           projection_dim=16, image_text_hidden_size=16)
        T.BlipForImageTextRetrieval(cfg).save_pretrained(out)
        T.BlipProcessor(image_processor=T.BlipImageProcessor(size={"height": 32, "width": 32}),
                        tokenizer=_tokenizer()).save_pretrained(out)
    elif name == "gpt2":
        T.GPT2LMHeadModel(T.GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                       bos_token_id=2, eos_token_id=3)).save_pretrained(out)
        _tokenizer().save_pretrained(out)
    elif name == "llava-next-video":
        tok = _tokenizer()
        chat = ("{% for message in messages %}{{ message['role'] | upper }}: {% for c in message['content'] %}"
                "{% if c['type'] == 'video' %}<video>\n{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
                "{% endfor %}\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")
        cfg = T.LlavaNextVideoConfig(
            text_config=dict(text, model_type="llama", num_key_value_heads=2, max_position_embeddings=512),
            vision_config=dict(vision, model_type="clip_vision_model"), video_token_index=4, image_token_index=5,
            spatial_pool_stride=2, image_grid_pinpoints=[[32, 32]], vision_feature_layer=-1)
        T.LlavaNextVideoForConditionalGeneration(cfg).save_pretrained(out)
        T.LlavaNextVideoProcessor(
            video_processor=T.LlavaNextVideoVideoProcessor(**size),
            image_processor=T.LlavaNextImageProcessor(**size, image_grid_pinpoints=[[32, 32]]),
            tokenizer=tok, chat_template=chat, patch_size=8, vision_feature_select_strategy="default",
            num_additional_image_tokens=1).save_pretrained(out)
    else:
        raise KeyError(name)
    return out
