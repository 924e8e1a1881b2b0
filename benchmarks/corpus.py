"""A synthetic corpus shaped like the real benchmarks, generated once into a cache folder.

The videos are H.264 mp4s of known temporal content (``foilkit.synthetic.videos``) at the size
of the real sources: 320x240, 30 fps, 15 s in the full corpus. On top of one set of videos,
three *shapes* lay out rows in the canonical foilkit schema the way each benchmark does:

- ``vitatecs``: about 1.4 items per video (2 of every 5 videos carry two aspects), each a
  caption and one counterfactual; the aspects of one video share its caption.
- ``vilma``: one item per video with a main caption and foil and a proficiency caption and
  foil (ViLMA's P and T); every other item is a time window inside the video.
- ``rtime``: two items per video, the forward view and its time-reversed copy, each with its
  own caption and the other's caption as the foil (RTime's binary setting).

Captions name the video's index, so no two videos share a text (as in the real data, where
text reuse across videos is rare): the engine gains nothing from repeated texts here.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from foilkit.synthetic import videos as synthetic
from foilkit.synthetic.build_once import build_once
from foilkit.synthetic.videos import COLOURS, DIRECTIONS, SyntheticScene

OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
COLOUR_NAMES = tuple(COLOURS)


@dataclass(frozen=True)
class CorpusSize:
    """How many videos, and how long and large each is."""

    videos: int
    seconds: float
    fps: int = 30
    width: int = 320
    height: int = 240

    @property
    def num_frames(self) -> int:
        return round(self.seconds * self.fps)


SIZES = {
    "smoke": CorpusSize(videos=3, seconds=1.5),
    "quick": CorpusSize(videos=32, seconds=8.0),
    "full": CorpusSize(videos=300, seconds=15.0),
    # VATEX's clips (VITATECS' other source): 10 s at 640x360, the shape GPU decoding is for
    "vatex": CorpusSize(videos=300, seconds=10.0, width=640, height=360),
}


@dataclass(frozen=True)
class CorpusVideo:
    index: int
    path: str
    scene: SyntheticScene
    seconds: float


def scene_of(index: int) -> SyntheticScene:
    """The scene of video ``index``: a square of every colour moving every way, at a speed that
    changes every 20 videos, so no two videos of the corpus are the same file (a content-keyed
    cache would otherwise serve repeats without decoding them)."""
    colour = COLOUR_NAMES[index % len(COLOUR_NAMES)]
    direction = DIRECTIONS[(index // len(COLOUR_NAMES)) % len(DIRECTIONS)]
    level = index // (len(COLOUR_NAMES) * len(DIRECTIONS))
    return SyntheticScene(colour=colour, direction=direction, speed=1 / (1 + 0.1 * level))


def caption_of(scene: SyntheticScene, index: int, *, reversed: bool = False) -> str:
    """What the video (or its time-reversed copy) shows, naming the clip so texts stay unique."""
    direction = OPPOSITE[scene.direction] if reversed else scene.direction
    return f"a {scene.colour} square moves {direction} in clip {index}"


def _other_colour(colour: str) -> str:
    return COLOUR_NAMES[(COLOUR_NAMES.index(colour) + 2) % len(COLOUR_NAMES)]


# VITATECS' aspects: each turns a video's caption into a counterfactual that differs in it.
ASPECT_FOILS: dict[str, Callable[[SyntheticScene, int], str]] = {
    "direction": lambda scene, i: caption_of(scene, i, reversed=True),
    "intensity": lambda scene, i: caption_of(scene, i).replace(" square ", " square slowly ", 1),
    "localization": lambda scene, i: caption_of(scene, i) + " at the top of the frame",
    "compositionality": lambda scene, i: caption_of(scene, i).replace(
        scene.colour, _other_colour(scene.colour), 1
    ),
    "type": lambda scene, i: caption_of(scene, i).replace("square", "circle", 1),
}
ASPECTS = tuple(ASPECT_FOILS)


def _row(video: CorpusVideo, item: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"v{video.index:04d}-{item}",
        "video": video.path,
        "start": None,
        "end": None,
        "reversed": False,
        "proficiency_caption": None,
        "proficiency_foils": None,
        **fields,
    }


def vitatecs_rows(corpus: Sequence[CorpusVideo]) -> list[dict[str, Any]]:
    """About 1.4 items per video: videos 0 and 2 of every 5 have two aspects."""
    rows = []
    for video in corpus:
        count = 2 if video.index % 5 in (0, 2) else 1
        for k in range(count):
            aspect = ASPECTS[(video.index + k) % len(ASPECTS)]
            foil = ASPECT_FOILS[aspect](video.scene, video.index)
            caption = caption_of(video.scene, video.index)
            rows.append(_row(video, aspect, caption=caption, foils=[foil], aspect=aspect))
    return rows


def vilma_rows(corpus: Sequence[CorpusVideo]) -> list[dict[str, Any]]:
    """One item per video with main and proficiency texts; every other item is a window."""
    rows = []
    for video in corpus:
        windowed = video.index % 2 == 1
        colour = video.scene.colour
        rows.append(
            _row(
                video,
                "main",
                start=round(0.1 * video.seconds, 3) if windowed else None,
                end=round(0.9 * video.seconds, 3) if windowed else None,
                caption=caption_of(video.scene, video.index),
                foils=[caption_of(video.scene, video.index, reversed=True)],
                proficiency_caption=f"there is a {colour} square in clip {video.index}",
                proficiency_foils=[
                    f"there is a {_other_colour(colour)} square in clip {video.index}"
                ],
            )
        )
    return rows


def rtime_rows(corpus: Sequence[CorpusVideo]) -> list[dict[str, Any]]:
    """The forward view and its reversal, each with its caption and the other's as the foil."""
    rows = []
    for video in corpus:
        forward = caption_of(video.scene, video.index)
        backward = caption_of(video.scene, video.index, reversed=True)
        rows.append(_row(video, "forward", caption=forward, foils=[backward]))
        rows.append(_row(video, "reversed", caption=backward, foils=[forward], reversed=True))
    return rows


SHAPES: dict[str, Callable[[Sequence[CorpusVideo]], list[dict[str, Any]]]] = {
    "vitatecs": vitatecs_rows,
    "vilma": vilma_rows,
    "rtime": rtime_rows,
}


def default_cache_root() -> Path:
    """``$FOILKIT_CACHE/benchmarks``, else ``~/.cache/foilkit/benchmarks``."""
    base = os.environ.get("FOILKIT_CACHE") or Path.home() / ".cache" / "foilkit"
    return Path(base) / "benchmarks"


def _fingerprint(size: CorpusSize) -> str:
    """The corpus's identity: its size and the sources of the scenes and the renderer (a change
    to either regenerates)."""
    digest = hashlib.sha256(json.dumps(asdict(size), sort_keys=True).encode())
    for module in (__file__, synthetic.__file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:12]


def _write_one(job: tuple[str, int, CorpusSize]) -> None:
    path, index, size = job
    synthetic.write_video(
        path,
        scene_of(index),
        width=size.width,
        height=size.height,
        num_frames=size.num_frames,
        fps=size.fps,
    )


def corpus(size: CorpusSize, root: str | os.PathLike | None = None) -> list[CorpusVideo]:
    """The corpus's videos, generated on first use (in parallel, into a staging folder that is
    renamed into place, so an interrupted generation never leaves a partial corpus)."""
    root = Path(root) if root is not None else default_cache_root()
    folder = root / f"corpus-{size.videos}x{size.seconds:g}s-{_fingerprint(size)}"
    videos = [
        CorpusVideo(i, str(folder / f"video_{i:04d}.mp4"), scene_of(i), size.seconds)
        for i in range(size.videos)
    ]

    def write(staging: Path) -> None:
        jobs = [(str(staging / Path(video.path).name), video.index, size) for video in videos]
        with ProcessPoolExecutor(max_workers=os.cpu_count()) as pool:
            list(pool.map(_write_one, jobs))
        (staging / "corpus.json").write_text(json.dumps(asdict(size), indent=2))

    build_once(folder, write)
    return videos
