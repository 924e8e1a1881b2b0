"""The synthetic benchmark's items: captions true and foils false of their scenes by construction.

The demo's test split (:func:`demo_items`, rendered by :func:`foilkit.demo.write_demo_benchmark`)
and the fine-tuning demo's train split (:mod:`foilkit.finetune.synthetic`, whose scenes it keeps
apart from these) say the same things in the same words.
"""

from __future__ import annotations

import itertools
from typing import Any

#: Caption phrases: the colours, the moves and their opposites, the paces of the speed aspect.
COLOURS = ("red", "green", "blue", "yellow")
MOVES = {"left": "to the left", "right": "to the right", "up": "up", "down": "down"}
OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
SPEEDS = {"slowly": 0.4, "quickly": 1.0}


def demo_items() -> list[dict[str, Any]]:
    """The synthetic benchmark's items: scene, caption and its temporal foil, per aspect.

    ``direction``: "a red square moves to the right" / "... to the left";
    ``order``: "a red square appears, then a blue square" / the reversed order;
    ``speed``: "a red square moves slowly to the right" / "... quickly ...".
    """
    from foilkit.synthetic.videos import SyntheticScene

    items = []
    for colour, direction in itertools.product(COLOURS, MOVES):
        items.append(
            {
                "aspect": "direction",
                "scene": SyntheticScene("motion", colour, direction),
                "caption": f"a {colour} square moves {MOVES[direction]}",
                "foils": [f"a {colour} square moves {MOVES[OPPOSITE[direction]]}"],
            }
        )
    for first, second in itertools.permutations(COLOURS, 2):
        items.append(
            {
                "aspect": "order",
                "scene": SyntheticScene("order", first, second_colour=second),
                "caption": f"a {first} square appears, then a {second} square",
                "foils": [f"a {second} square appears, then a {first} square"],
            }
        )
    for colour, (pace, speed) in itertools.product(COLOURS, SPEEDS.items()):
        other = next(name for name in SPEEDS if name != pace)
        items.append(
            {
                "aspect": "speed",
                "scene": SyntheticScene("motion", colour, "right", speed=speed),
                "caption": f"a {colour} square moves {pace} to the right",
                "foils": [f"a {colour} square moves {other} to the right"],
            }
        )
    return items
