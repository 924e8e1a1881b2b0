"""The table of model families foilkit scores, derived from the installed ``transformers``.

Which families exist is transformers' word, not ours: every model type that maps to an
image-text-to-text model and has a video processor (``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
& VIDEO_PROCESSOR_MAPPING_NAMES``), the omni models (a video processor, and listed as multimodal
LMs but not as image-text-to-text models: Qwen2.5-Omni, Qwen3-Omni, scored through their thinker),
plus the video-text encoders and the image-text dual
encoders foilkit claims. For each, the adapter registry is asked which adapter claims a config
built from ``AutoConfig.for_model(model_type)`` (no weights), and the row says:

* ``tested``: a tiny twin (:data:`foilkit.synthetic.models.TINY_MODELS`) is scored end to end
  by the test file the row names (with the twin's note where it departs from a checkpoint);
* ``refused``: foilkit refuses the family, with the one-line reason it gives;
* ``untested``: an adapter claims it but no twin has been scored yet (:data:`UNTESTED_WHY` says
  why, where what the twin needs is out of reach).

``foilkit models`` prints this table, the docs' model families table
(``docs/model-families.md``) is :func:`readme_table` (``python docs/hooks.py`` or ``python -m
foilkit.synthetic.models.families --update-readme docs/model-families.md`` writes it there;
``--readme`` prints it), and ``tests/test_families_table.py`` checks every row.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: Native video-text encoders foilkit claims by ``model_type``.
VIDEO_TEXT_ENCODERS = ("xclip", "videoprism", "pe_video", "pe_audio_video")
#: Image-text cross-encoders scored frame by frame (BLIP ITM); the dual encoders are those the
#: dual-encoder adapter claims (its ``MODEL_TYPES``).
IMAGE_TEXT_CROSS_ENCODERS = ("blip",)
#: Families foilkit refuses, listed so their refusal is checked: an image-only LLaVA (its
#: processor has no video processor) and the embedding models of ``UNSUPPORTED``.
REFUSED = ("llava", "embedding_gemma2")
#: Architectures a bare ``AutoConfig.for_model`` config lacks but the claiming adapter reads.
ARCHITECTURES: dict[str, str] = {"blip": "BlipForImageTextRetrieval"}


#: The conformance tests of the open video LLMs (LLaVA-OneVision, InternVL, ...).
OPEN_VLMS = "tests/scorers/test_conformance_open_vlms.py"
#: The conformance tests of the omni models (scored through their thinker) and the families whose
#: chat templates live on the Hub only.
OMNI = "tests/scorers/test_conformance_omni.py"
#: The conformance tests of LFM3-VL and Kimi K2.5 (chat templates reconstructed).
LFM_KIMI = "tests/scorers/test_conformance_lfm_kimi.py"
#: The conformance tests of the MiniCPM families, whose Hub-only chat template and named tokens
#: the twins reconstruct (:mod:`foilkit.synthetic.models.minicpm` says from which sources).
MINICPM = "tests/scorers/test_conformance_minicpm.py"
MINICPM_V4_6 = "MiniCPM-V 4.6's chat template and named tokens (assumed shared)"
MINICPM_NOTE = (
    "{own} reconstructed from llama-cpp-python's MiniCPM-V 4.6 handler and vLLM, not read from "
    "the Hub (thinking off unless enable_thinking)"
)


@dataclass(frozen=True)
class Twin:
    """A tiny twin of a family: its name in the registry and the test that scores it; ``note``:
    what a user should know of how it departs from a real checkpoint (one line)."""

    name: str
    test: str
    note: str = ""


#: model_type -> its tiny twin and the test file that scores it end to end in its modes.
TWINS: dict[str, Twin] = {
    "clip": Twin("clip", "tests/scorers/test_families.py"),
    "siglip": Twin("siglip", "tests/scorers/test_families.py"),
    "align": Twin("align", "tests/scorers/test_dual_encoder_families.py"),
    "tipsv2": Twin("tipsv2", "tests/scorers/test_dual_encoder_families.py"),
    "siglip2": Twin("siglip2", "tests/scorers/test_conformance_qwen_dual.py"),
    "chinese_clip": Twin("chinese-clip", "tests/scorers/test_conformance_qwen_dual.py"),
    "metaclip_2": Twin("metaclip-2", "tests/scorers/test_conformance_qwen_dual.py"),
    "altclip": Twin("altclip", "tests/scorers/test_conformance_qwen_dual.py"),
    "blip": Twin("blip-itm", "tests/scorers/test_families.py"),
    "xclip": Twin("xclip", "tests/scorers/test_families.py"),
    "videoprism": Twin("videoprism", "tests/scorers/test_video_text_encoders.py"),
    "pe_video": Twin("pe-video", "tests/scorers/test_video_text_encoders.py"),
    "pe_audio_video": Twin("pe-audio-video", "tests/scorers/test_video_text_encoders.py"),
    "gemma4": Twin("gemma4", "tests/scorers/test_families.py"),
    "qwen2_vl": Twin("qwen2-vl", "tests/scorers/test_families.py"),
    "qwen3_5": Twin("qwen3.5", "tests/scorers/test_families.py"),
    "qwen2_5_vl": Twin("qwen2.5-vl", "tests/scorers/test_video_llm_fidelity.py"),
    "qwen3_vl": Twin("qwen3-vl", "tests/scorers/test_conformance_qwen_dual.py"),
    "qwen3_vl_moe": Twin("qwen3-vl-moe", "tests/scorers/test_conformance_qwen_dual.py"),
    "qwen3_5_moe": Twin("qwen3.5-moe", "tests/scorers/test_conformance_qwen_dual.py"),
    "qwen4_exp": Twin("qwen4-exp", "tests/scorers/test_conformance_qwen_dual.py"),
    # Cosmos3 Omni's Reasoner is a Qwen3-VL read with Qwen3-VL's processor
    "cosmos3_omni": Twin("cosmos3-omni", "tests/scorers/test_conformance_qwen_dual.py"),
    "llava_next_video": Twin("llava-next-video", "tests/scorers/test_families.py"),
    "instructblipvideo": Twin("instructblip-video", "tests/scorers/test_video_llm_families.py"),
    "instructblip": Twin("instructblip", "tests/scorers/test_video_llm_families.py"),
    "llava": Twin("llava", "tests/scorers/test_video_llm_families.py"),  # refused there
    "llava_onevision": Twin("llava-onevision", OPEN_VLMS),
    "internvl": Twin("internvl", OPEN_VLMS),
    "video_llava": Twin("video-llava", OPEN_VLMS),
    "smolvlm": Twin("smolvlm", OPEN_VLMS),
    "video_llama_3": Twin("video-llama-3", OPEN_VLMS),
    "perception_lm": Twin("perception-lm", OPEN_VLMS),
    "molmo2": Twin("molmo2", OPEN_VLMS),
    "glm4v": Twin("glm4v", "tests/scorers/test_conformance_more_vlms.py"),
    "glm46v": Twin("glm46v", "tests/scorers/test_conformance_more_vlms.py"),
    "glmga": Twin("glmga", "tests/scorers/test_conformance_more_vlms.py"),
    "glm5_next": Twin("glm5-next", "tests/scorers/test_conformance_more_vlms.py"),
    "ernie4_5_vl_moe": Twin("ernie4.5-vl", "tests/scorers/test_conformance_more_vlms.py"),
    "exaone4_5": Twin("exaone4.5", "tests/scorers/test_conformance_more_vlms.py"),
    "hyperclovax_vision_v2": Twin(
        "hyperclovax-vision-v2", "tests/scorers/test_conformance_more_vlms.py"
    ),
    "cosmos3_edge": Twin("cosmos3-edge", "tests/scorers/test_conformance_more_vlms.py"),
    "muse_glimmer": Twin("muse-glimmer", "tests/scorers/test_conformance_more_vlms.py"),
    "muse_spark": Twin("muse-spark", "tests/scorers/test_conformance_more_vlms.py"),
    "minimax_m3_vl": Twin("minimax-m3-vl", "tests/scorers/test_conformance_more_vlms.py"),
    "gemma4_unified": Twin("gemma4-unified", "tests/scorers/test_conformance_more_vlms.py"),
    # refused there: its video forward is broken in transformers 5.23
    "nemotron_h_omni": Twin("nemotron-h-omni", "tests/scorers/test_conformance_more_vlms.py"),
    # refused there: its checkpoints read images only
    "cohere_compass": Twin("cohere-compass", "tests/scorers/test_conformance_cohere.py"),
    # refused there: transformers 5.23 writes its video in a layout the checkpoint never read
    "dots3_note": Twin("dots3-note", "tests/scorers/test_conformance_more_vlms.py"),
    "lfm3_vl": Twin(
        "lfm3-vl",
        LFM_KIMI,
        note="its chat template is not public: reconstructed from LFM2-VL's turns and Qwen3-VL's "
        "vision parts; the video part written bare, so per-frame segments are never nested",
    ),
    # refused there: its video forward is broken in transformers 5.23
    "kimi_k25": Twin("kimi-k2.5", LFM_KIMI),
    "qwen2_5_omni": Twin("qwen2.5-omni", OMNI),
    "qwen3_omni_moe": Twin("qwen3-omni-moe", OMNI),
    "minicpmv4_6": Twin(
        "minicpmv4.6", MINICPM, MINICPM_NOTE.format(own="chat template and named tokens")
    ),
    "minicpmv4_7": Twin("minicpmv4.7", MINICPM, MINICPM_NOTE.format(own=MINICPM_V4_6)),
    "minicpm_ocr": Twin("minicpm-ocr", MINICPM, MINICPM_NOTE.format(own=MINICPM_V4_6)),
}

#: Why a family is still untested, where what its twin needs is out of reach (none is today; a
#: new transformers pin may add families whose twins cannot yet be built).
UNTESTED_WHY: dict[str, str] = {}

COLUMNS = ("model_type", "adapter", "modes", "twin", "timestamps", "frames", "status", "reason")


@dataclass(frozen=True)
class Family:
    """One row of the table."""

    model_type: str
    adapter: str | None
    modes: tuple[str, ...]
    twin: str | None
    test: str | None
    timestamps: str  # how frame times reach the processor; "" (shown "-") for a refused family
    frames: str  # the frames it expects; "" (shown "-") for a refused family
    status: str  # tested | refused | untested
    reason: str = ""  # refused, untested: why; tested: its twin's note (:attr:`Twin.note`)


def video_model_types() -> list[str]:
    """Every model type transformers lists as a video-capable image-text-to-text model, the omni
    models (:func:`omni_model_types`), then the video-text and image-text encoders foilkit
    claims, and those it refuses (:data:`REFUSED`)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    video_llms = sorted(
        set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES) & set(VIDEO_PROCESSOR_MAPPING_NAMES)
        | set(omni_model_types())
    )
    from foilkit.scorers.adapters.dual_encoder import MODEL_TYPES as DUAL_ENCODERS

    encoders = [*VIDEO_TEXT_ENCODERS, *DUAL_ENCODERS, *IMAGE_TEXT_CROSS_ENCODERS]
    return list(dict.fromkeys([*video_llms, *encoders, *REFUSED]))


def omni_model_types() -> list[str]:
    """Model types with a video processor that transformers lists as multimodal LMs (any input
    to text, ``MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES``) but not as image-text-to-text models:
    the omni models, whose text-writing part (a thinker) is the image-text-to-text model."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
        MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES,
    )
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    multimodal = set(MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES) & set(VIDEO_PROCESSOR_MAPPING_NAMES)
    return sorted(multimodal - set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES))


def bare_config(model_type: str) -> Any:
    """``AutoConfig.for_model(model_type)`` (no weights), with the architectures
    :data:`ARCHITECTURES` names."""
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type)
    if model_type in ARCHITECTURES:
        config.architectures = [ARCHITECTURES[model_type]]
    return config


def claiming_adapter(config: Any) -> str | None:
    """The adapter that claims ``config`` (foilkit's matching order), ``None`` when none does."""
    from foilkit.scorers.adapters import ADAPTERS, matching_order

    return next((name for name in matching_order() if ADAPTERS.get(name).matches(config)), None)


def refusal(model_type: str, adapter: str | None) -> str | None:
    """foilkit's one-line reason for refusing ``model_type`` on its config alone, ``None`` when
    it is not refused: no adapter claims it, or the video-llm adapter claims it but its video
    path is broken in the installed transformers, or its checkpoints read images only, or its
    processor (that of the video variant transformers pairs it with) takes no video."""
    from foilkit.scorers.adapters import UNSUPPORTED

    if adapter is None:
        why = f": {UNSUPPORTED[model_type]}" if model_type in UNSUPPORTED else ""
        return f"no adapter claims model_type {model_type!r}{why}"
    if adapter != "video-llm":
        return None
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    from foilkit.scorers.adapters.video_llm import (
        broken_video,
        image_only,
        takes_video,
        video_refusal,
        video_variant,
    )

    broken = broken_video(model_type) or image_only(model_type)
    if broken is not None:
        return broken
    name = PROCESSOR_MAPPING_NAMES.get(video_variant(model_type) or model_type)
    processor_class = getattr(transformers, name, None) if name else None
    if processor_class is None or takes_video(processor_class):
        # no class to judge by (AutoProcessor finds it on load), or it takes video: whether its
        # chat template writes the video part is known only from a checkpoint's files
        return None
    # the reason the adapter gives on load, for a processor of this class (no video processor)
    return video_refusal(object.__new__(processor_class), model_type, None)


def _facts(adapter: str | None, model_type: str) -> tuple[str, str]:
    """Whether frame times reach the processor, and the frames the family expects."""
    if adapter == "video-llm":
        from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

        from foilkit.scorers.adapters.video_llm import PLAIN_PROMPTS, RATE_KEYWORD, video_variant

        plain = PLAIN_PROMPTS.get(video_variant(model_type) or model_type)
        frames = str(plain.frames) if plain is not None and plain.frames else "any"
        times = "video_metadata (fps, frame times)"
        if PROCESSOR_MAPPING_NAMES.get(model_type) in RATE_KEYWORD:
            times += " and the fps keyword"
        return times, frames
    if adapter in ("videoprism", "pe-video"):
        from foilkit.scorers.adapters import ADAPTERS

        fixed = getattr(ADAPTERS.get(adapter), "fixed_frames", False)
        return "no", "the model's own count" if fixed else "its processor's default"
    if adapter == "xclip":
        return "no", "its config's num_frames"
    return "no", "any (one embedding per frame)" if adapter else ""


def family(model_type: str) -> Family:
    """The row of ``model_type``."""
    from foilkit.scorers.adapters import ADAPTERS

    try:
        config = bare_config(model_type)
    except Exception as error:  # a config class that needs an extra package
        reason = f"AutoConfig.for_model failed: {type(error).__name__}: {error}".splitlines()[0]
        return Family(model_type, None, (), None, None, "", "", "untested", reason)
    adapter = claiming_adapter(config)
    modes = tuple(ADAPTERS.get(adapter).modes) if adapter else ()
    twin = TWINS.get(model_type)
    timestamps, frames = _facts(adapter, model_type)
    why = refusal(model_type, adapter)
    if why is not None:
        status = "refused"
        # no frame reaches a refused family's processor: neither how many nor how timed
        timestamps = frames = ""
    elif twin is not None:
        status, why = "tested", twin.note
    else:
        status = "untested"
        why = UNTESTED_WHY.get(model_type)
    return Family(
        model_type,
        adapter,
        modes,
        twin.name if twin else None,
        twin.test if twin else None,
        timestamps,
        frames,
        status,
        why or "",
    )


def families() -> list[Family]:
    """Every row, in :func:`video_model_types` order."""
    return [family(model_type) for model_type in video_model_types()]


def counts(rows: list[Family]) -> dict[str, int]:
    """How many rows have each status, and in all."""
    out = {"families": len(rows)}
    for status in ("tested", "refused", "untested"):
        out[status] = sum(row.status == status for row in rows)
    return out


def _cells(row: Family) -> list[str]:
    return [
        row.model_type,
        row.adapter or "-",
        ", ".join(row.modes) or "-",
        f"`{row.twin}`" if row.twin else "-",
        row.timestamps or "-",
        row.frames or "-",
        row.status,
        note(row, code="`").replace("|", "\\|"),
    ]


def note(row: Family, code: str = "") -> str:
    """What the table says of ``row`` after its status: its reason (refused, untested) or its
    test, then what its twin's note says (tested); ``code`` quotes the test's path."""
    if row.status != "tested":
        return row.reason or (f"{code}{row.test}{code}" if row.test else "no tiny twin yet")
    test = f"{code}{row.test}{code}"
    return f"{test}: {row.reason}" if row.reason else test


def readme_table(rows: list[Family] | None = None) -> str:
    """The Markdown table the README's "Supported model families" section holds."""
    import transformers

    rows = families() if rows is None else rows
    header = [
        "model_type",
        "adapter",
        "modes",
        "tiny twin",
        "frame times",
        "frames",
        "status",
        "test / reason",
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_cells(row)) + " |" for row in rows),
    ]
    tally = counts(rows)
    lines.append("")
    lines.append(
        f"transformers {transformers.__version__}: {tally['families']} families, "
        f"{tally['tested']} tested, {tally['refused']} refused, {tally['untested']} untested."
    )
    return "\n".join(lines) + "\n"


#: The README lines around the generated table.
README_MARKERS = ("<!-- families table: generated, do not edit -->", "<!-- end families table -->")


def spliced_readme(readme: str, table: str) -> str:
    """``readme`` with the text between :data:`README_MARKERS` replaced by ``table``."""
    start, end = README_MARKERS
    if start not in readme or end not in readme:
        raise ValueError(f"the README lacks the markers {start!r} ... {end!r}")
    head, rest = readme.split(start, 1)
    return f"{head}{start}\n{table}{end}{rest.split(end, 1)[1]}"


def as_json(rows: list[Family]) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts."""
    return [{**asdict(row), "modes": list(row.modes)} for row in rows]


def main(argv: list[str] | None = None) -> None:
    """``python -m foilkit.synthetic.models.families [--readme | --json | --update-readme
    README.md]``."""
    import json

    parser = argparse.ArgumentParser(prog="python -m foilkit.synthetic.models.families")
    parser.add_argument("--readme", action="store_true", help="print the README's Markdown table")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--update-readme",
        metavar="README",
        help="rewrite the generated table of this README (between its markers) in place",
    )
    args = parser.parse_args(argv)
    rows = families()
    if args.update_readme:
        path = Path(args.update_readme)
        path.write_text(
            spliced_readme(path.read_text(encoding="utf-8"), readme_table(rows)), encoding="utf-8"
        )
    elif args.json:
        print(json.dumps({"counts": counts(rows), "families": as_json(rows)}, indent=2))
    else:
        print(readme_table(rows), end="")


if __name__ == "__main__":
    main()
