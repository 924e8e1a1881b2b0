"""A train split for the synthetic benchmark: new videos, none of them in its test split.

The demo's test split (:func:`foilkit.synthetic.items.demo_items`) shows 64x48 clips of 24 frames at
8 fps. The train split shows the same kinds of scene (a square moving in one of four
directions, two squares appearing in an order, a square moving slowly or quickly) at other
speeds, frame sizes and lengths: no training video equals a test video (a scene the test
split has is never rendered at the test split's geometry).

It is written in RTime's layout: each video gives a forward row and a reversed row
(``reversed=True``, the same file played backwards) whose caption is true of the reversed
playback ("moves to the left" for a square moving right; the other colour first; the same
pace in the opposite direction). ``foilkit finetune --hard-negatives reversed`` puts each
forward row and its reversed row in one batch; ``none`` batches all rows at random.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

from foilkit.synthetic.items import COLOURS, MOVES, OPPOSITE, demo_items

#: Render geometries (width, height, frames). The test split's own, 64x48 x 24 frames, is
#: used only for scenes that differ from every test scene (another speed); see ``_held_out``.
TEST_GEOMETRY = (64, 48, 24)
GEOMETRIES = (TEST_GEOMETRY, (72, 48, 24), (64, 48, 20), (64, 56, 24), (64, 48, 32), (56, 48, 28))
#: Speeds of the moving square: the test split uses 1.0 (direction), 0.4 and 1.0 (speed).
DIRECTION_SPEEDS = (0.9, 1.0, 0.8, 0.95, 0.85)
PACES = {"slowly": (0.3, 0.4, 0.5), "quickly": (0.8, 0.9, 1.0)}
TRAIN_SPLIT = "train"


def train_items(variants: int = 5) -> list[dict[str, Any]]:
    """Forward items of the train split: scene, render geometry, caption, reversed caption, aspect.

    ``variants``: renderings per scene content (colour x direction, colour pair, colour x pace x
    direction), each with its own geometry and speed.
    """
    from foilkit.synthetic.videos import SyntheticScene

    test_scenes = {item["scene"] for item in demo_items()}
    geometries = itertools.cycle(GEOMETRIES)
    items: list[dict[str, Any]] = []

    def add(aspect: str, scene: SyntheticScene, caption: str, reversed_caption: str) -> None:
        """The item, at the next geometry in turn, never the test split's for a scene the test
        split has."""
        geometry = next(geometries)
        while geometry == TEST_GEOMETRY and scene in test_scenes:
            geometry = next(geometries)
        texts = {"caption": caption, "reversed_caption": reversed_caption}
        items.append({"aspect": aspect, "geometry": geometry, "scene": scene, **texts})

    def motion(aspect: str, scene: SyntheticScene, pace: str = "") -> None:
        """A moving square's item: reversed, it moves the other way at the same pace."""
        moves = f"a {scene.colour} square moves {pace}"
        add(aspect, scene, moves + MOVES[scene.direction], moves + MOVES[OPPOSITE[scene.direction]])

    for colour, direction in itertools.product(COLOURS, MOVES):
        for k in range(variants):
            speed = DIRECTION_SPEEDS[k % len(DIRECTION_SPEEDS)]
            motion("direction", SyntheticScene("motion", colour, direction, speed=speed))
    for first, second in itertools.permutations(COLOURS, 2):
        for _ in range(variants):
            scene = SyntheticScene("order", first, second_colour=second)
            appear = "a {} square appears, then a {} square"
            add("order", scene, appear.format(first, second), appear.format(second, first))
    for colour, (pace, speeds), direction in itertools.product(
        COLOURS, PACES.items(), ("right", "left")
    ):
        for k in range(variants):
            scene = SyntheticScene("motion", colour, direction, speed=speeds[k % len(speeds)])
            motion("speed", scene, f"{pace} ")
    return items


def static_content(scene: Any) -> str:
    """What a frame-averaging model sees of a scene: the same for a video and its reversal.

    A moving square: its colour, the axis it moves along and whether it is slow (a slow square
    covers a shorter stretch: another mean frame); not which way it moves. An order scene: the
    colours on the left and on the right; not which appears first. Two videos with the same
    static content differ only in time. ``foilkit finetune --distinct-by static_content`` keeps
    them out of each other's batch.
    """
    if scene.kind == "order":
        return "order: " + " and ".join(sorted((scene.colour, scene.second_colour)))
    axis = "horizontal" if scene.direction in ("left", "right") else "vertical"
    pace = "slow" if scene.speed <= max(PACES["slowly"]) else "fast"
    return f"motion: {scene.colour}, {axis}, {pace}"


def write_train_split(out_dir: str | os.PathLike, *, variants: int = 5) -> Path:
    """Render the train videos and write ``out_dir`` as a Hub-layout dataset with a ``train`` split.

    ``out_dir/videos/`` holds the videos; ``out_dir/<config>/train-00000-of-00001.parquet``
    (configs ``direction``, ``order``, ``speed``, ``all``) the canonical rows, ``video`` as a
    path relative to ``out_dir/videos``; ``out_dir/README.md`` the card with YAML ``configs:``.
    Videos already rendered are kept.
    """
    import datasets
    import yaml

    from foilkit.builders.card import card_configs
    from foilkit.builders.schema import TEXT, canonical_features
    from foilkit.synthetic.videos import write_video

    out = Path(out_dir)
    rows = []
    for index, item in enumerate(train_items(variants)):
        scene, (width, height, frames) = item["scene"], item["geometry"]
        what = (
            f"{scene.colour}_{scene.second_colour}"
            if scene.kind == "order"
            else f"{scene.colour}_{scene.direction}_{scene.speed:g}"
        )
        name = f"{item['aspect']}/{index:03d}_{what}_{width}x{height}x{frames}.mp4"
        if not (out / "videos" / name).is_file():
            write_video(out / "videos" / name, scene, width=width, height=height, num_frames=frames)
        base = {
            "video": name,
            "video_path": name,
            "start": None,
            "end": None,
            "aspect": item["aspect"],
            "static_content": static_content(scene),
        }
        caption, reversed_caption = item["caption"], item["reversed_caption"]
        for suffix, said, foil, flipped in (
            ("", caption, reversed_caption, False),
            ("-reversed", reversed_caption, caption, True),
        ):
            row = {"id": f"train-{index:03d}{suffix}", "caption": said, "foils": [foil]}
            rows.append({**base, **row, "reversed": flipped})
    features = canonical_features(aspect=TEXT, static_content=TEXT)
    configs = {
        aspect: [r for r in rows if r["aspect"] == aspect]
        for aspect in ("direction", "order", "speed")
    }
    configs["all"] = rows
    for config, config_rows in configs.items():
        path = out / config / f"{TRAIN_SPLIT}-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_list(config_rows, features=features).to_parquet(path, batch_size=100)
    header = {
        "license": "cc0-1.0",
        "pretty_name": "foilkit synthetic temporal benchmark (train split)",
        "configs": card_configs(
            {name: {TRAIN_SPLIT: f"{name}/{TRAIN_SPLIT}-*.parquet"} for name in configs},
            default="all",
        ),
    }
    (out / "README.md").write_text(
        f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n"
        "# foilkit synthetic temporal benchmark: train split\n\n"
        "New renderings (other frame sizes, lengths and speeds than the test split) of the "
        "synthetic benchmark's scenes, in RTime's layout: a forward row and a reversed row "
        "(`reversed=True`, the same file played backwards, with the caption true of that "
        "playback) per video. Videos are paths relative to `videos/`.\n",
        encoding="utf-8",
    )
    return out


#: Weight scales (``initializer_factor``) of the towers of :func:`write_base_model`.
VISION_INIT_FACTOR = 5.0
TEXT_INIT_FACTOR = 5.0


def write_base_model(out_dir: str | os.PathLike, *, seed: int = 0) -> Path:
    """A tiny random CLIP to fine-tune in the demo: ``tiny_model_path("clip")``'s config and
    processor, its image and text towers drawn with ``initializer_factor`` 5 (a random model
    all the same).

    At the default scale the tiny towers give nearly the same embedding to every frame (cosine
    > 0.999 between any two synthetic frames) and to captions that differ in one word (0.99
    for "to the left" / "to the right"), so contrastive training has almost nothing to start
    from. At 5 frames and such captions differ; at 10 and above the text tower saturates and
    gives some caption/foil pairs exactly the same embedding ("a red square moves slowly /
    quickly to the right"), which no training separates. The joint projections keep their
    scale, so frame embeddings stay comparable to the frame-position embeddings.
    """
    import torch
    from transformers import AutoProcessor, CLIPConfig, CLIPModel

    from foilkit.synthetic.models import tiny_model_path

    source = tiny_model_path("clip")
    config = CLIPConfig.from_pretrained(source)
    config.vision_config.initializer_factor = VISION_INIT_FACTOR
    config.text_config.initializer_factor = TEXT_INIT_FACTOR
    out = Path(out_dir)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        CLIPModel(config).save_pretrained(out)
    AutoProcessor.from_pretrained(source).save_pretrained(out)
    return out
