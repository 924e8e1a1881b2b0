"""Flags that several commands share, declared once so that each means the same everywhere.

A command's ``configure`` calls these on its parser (or an argument group of it); the flags'
names, types, defaults and destinations are the same in every command that has them.
"""

from __future__ import annotations

import argparse
import re

#: A parser or one of its argument groups: both have ``add_argument``.
Adder = argparse.ArgumentParser | argparse._ArgumentGroup


def add_video_root(parser: Adder) -> None:
    """``--video-root``: where relative video paths resolve (score, evaluate, build, finetune,
    report)."""
    parser.add_argument("--video-root", help="folder that relative video paths are relative to")


def add_build_source(parser: Adder) -> None:
    """``--annotations`` and ``--on-missing``: what a benchmark is built from (build, evaluate)."""
    parser.add_argument(
        "--annotations",
        help="local folder with the annotation files (default: download "
        "them from the upstream repository at the pinned commit)",
    )
    parser.add_argument(
        "--on-missing",
        choices=("error", "skip", "keep"),
        default="error",
        help="a missing video: fail (default), drop its rows, or keep them with video=None",
    )


def add_bootstrap(parser: Adder, resamples: str, seed: str | None = None) -> None:
    """``--n-resamples`` (default 1000) and, when ``seed`` is given, ``--bootstrap-seed``
    (default 0); ``resamples`` and ``seed`` are their help texts, which name the bootstrap."""
    parser.add_argument(
        "--n-resamples", type=int, default=1000, help=f"{resamples} (default: %(default)s)"
    )
    if seed is not None:
        parser.add_argument(
            "--bootstrap-seed", type=int, default=0, help=f"{seed} (default: %(default)s)"
        )


def add_num_workers(parser: Adder, default: int) -> None:
    """``--num-workers``: decoding threads per process (score, evaluate, finetune)."""
    parser.add_argument(
        "--num-workers",
        type=int,
        default=default,
        help="decoding threads per process (0: decode in the model's thread; default: %(default)s)",
    )


def pixel_count(text: str) -> int:
    """A pixel budget given as a count (``8294400``) or a size (``3840x2160``), at least 1."""
    size = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    try:
        pixels = int(size[1]) * int(size[2]) if size else int(text)
    except ValueError:
        pixels = 0
    if pixels < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pixel count >= 1: give a number (8294400) or WIDTHxHEIGHT "
            "(3840x2160)"
        )
    return pixels


def add_max_decode_pixels(parser: Adder) -> None:
    """``--max-decode-pixels``: the decoding memory bound (score, evaluate). Left out, the run
    takes ``ScoreOptions``' default, ``MAX_DECODE_PIXELS`` (not imported: it pulls in torch)."""
    parser.add_argument(
        "--max-decode-pixels",
        type=pixel_count,
        default=argparse.SUPPRESS,
        metavar="PIXELS",
        help="frames of more pixels are scaled down (aspect kept) while decoding, so that no "
        "file's declared size can exhaust memory: a number or WIDTHxHEIGHT (default: 3840x2160, "
        "8294400); torchcodec-cuda cannot scale and fails the rows of such a file",
    )
