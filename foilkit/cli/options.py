"""Flags that several commands share, declared once so that each means the same everywhere.

A command's ``configure`` calls these on its parser (or an argument group of it); the flags'
names, types, defaults and destinations are the same in every command that has them.
"""

from __future__ import annotations

import argparse

from foilkit.errors import UserError

#: A parser or one of its argument groups: both have ``add_argument``.
Adder = argparse.ArgumentParser | argparse._ArgumentGroup


def add_video_root(parser: Adder) -> None:
    """``--video-root``: the folders video files may come from (score, evaluate, build, finetune,
    report); repeatable, so ``args.video_root`` is a list (``None`` when not given). A command
    that reads one root (``build``) takes it with :func:`one_video_root`."""
    parser.add_argument(
        "--video-root",
        action="append",
        metavar="DIR",
        help="folder holding the videos, repeatable: relative video paths resolve against it, "
        "and every video path, absolute ones too, must lie inside one (symlinks followed), else "
        "its row is an error (default: the --dataset folder when it is local, else none)",
    )


def one_video_root(roots: list[str] | None, command: str) -> str | None:
    """The one ``--video-root`` of a command that reads a single layout; several are an error."""
    if roots is not None and len(roots) > 1:
        raise UserError(
            f"foilkit {command} reads one --video-root (the layout its dataset card gives), got "
            f"{len(roots)}: {' '.join(roots)}; pass one"
        )
    return None if roots is None else roots[0]


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
