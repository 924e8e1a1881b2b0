"""``foilkit doctor``: is this machine ready to run foilkit?

Reports the versions of the stack, whether torchcodec can load FFmpeg and decode a video,
whether a GPU is visible, and the offline settings. Exits non-zero naming what is missing. Then
command by command, what each needs beyond the core install (:data:`foilkit.errors.COMMAND_EXTRAS`:
the demo's ``foilkit[demo]``, generate's ``foilkit[generation]``, ...) and the pip command for
what is missing; the last line says which commands are not ready. A missing extra is no failure
(exit 0: the core commands run) unless ``--command`` names a command that needs it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import tempfile

from foilkit.errors import COMMAND_EXTRAS, missing_modules
from foilkit.scorers.record import PACKAGES, package_versions

OFFLINE_VARS = (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
)
FFMPEG_HINT = (
    "torchcodec needs FFmpeg's shared libraries. On Debian/Ubuntu, as root: apt-get install -y "
    "libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 libswresample4"
    "; or score and evaluate with --decoder pyav (PyAV brings its own FFmpeg)"
)


def check_decoding() -> str | None:
    """Decode a freshly written H.264 clip through torchcodec; the error text, or None if it
    works."""
    try:
        from foilkit.scorers.video import SamplingPolicy, VideoView, decode_view
        from foilkit.scorers.video.decoding import ffmpeg_problem
        from foilkit.synthetic.videos import write_video

        problem = ffmpeg_problem("torchcodec")
        if problem is not None:  # one line, not torchcodec's traceback per FFmpeg version
            return problem

        with tempfile.TemporaryDirectory() as folder:
            path = write_video(os.path.join(folder, "doctor.mp4"), num_frames=8)
            frames = decode_view(VideoView(str(path)), SamplingPolicy("uniform", 4)).frames
        if tuple(frames.shape) != (4, 3, 48, 64):
            return f"decoded frames have shape {tuple(frames.shape)}, expected (4, 3, 48, 64)"
    except Exception as error:  # report any failure to load or run FFmpeg, precisely
        return f"{type(error).__name__}: {error}"
    return None


def gpu_description() -> str:
    import torch

    if torch.cuda.is_available():
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        return f"CUDA {torch.version.cuda}: " + ", ".join(names)
    return "none visible (CPU only: fp32, slower but complete)"


def command_needs(command: str) -> list[tuple[str, str | None, list[str]]]:
    """What ``command`` needs of the extras that is not installed: (extra, when it is needed,
    the missing import names), per :data:`foilkit.errors.COMMAND_EXTRAS`."""
    found = [(extra, when, missing_modules(extra)) for extra, when in COMMAND_EXTRAS[command]]
    return [(extra, when, missing) for extra, when, missing in found if missing]


def command_line(command: str, needs: list[tuple[str, str | None, list[str]]]) -> str:
    """``command``'s line: ready, or each extra it lacks, when, and the pip command."""
    if not needs:
        return "ready"
    return "; ".join(
        ("needs" if when is None else when + ":")
        + f" pip install 'foilkit[{extra}]' ({', '.join(missing)} missing)"
        for extra, when, missing in needs
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-decode", action="store_true", help="do not test video decoding")
    parser.add_argument(
        "--command",
        action="append",
        choices=sorted(COMMAND_EXTRAS),
        metavar="COMMAND",
        help="exit non-zero unless COMMAND can run too (its extras installed), repeatable: "
        f"{', '.join(sorted(COMMAND_EXTRAS))} (default: only the core install is checked)",
    )


def run(args: argparse.Namespace) -> int:
    problems: list[str] = []
    versions = package_versions()
    print(f"foilkit doctor — Python {platform.python_version()} on {platform.machine()}")
    print("\npackages:")
    for dist, version in versions.items():
        print(f"  {dist:<22} {version or 'MISSING'}")
        if version is None:
            problems.append(f"package {dist!r} is not installed (pip install -r requirements.txt)")
        else:
            try:
                importlib.import_module(PACKAGES[dist])
            except Exception as error:
                problems.append(f"package {dist!r} is installed but fails to import: {error}")
    print("\ncommands that need an extra (beyond pip install foilkit):")
    needs = {command: command_needs(command) for command in COMMAND_EXTRAS}
    for command, missing in needs.items():
        print(f"  {command:<22} {command_line(command, missing)}")
    for command in args.command or []:
        for extra, when, _ in needs[command]:
            if when is None:
                problems.append(
                    f"foilkit {command} needs the {extra} extra: pip install 'foilkit[{extra}]'"
                )
    if not args.skip_decode:
        failure = check_decoding()
        print(f"\nvideo decoding (torchcodec + FFmpeg): {'ok' if failure is None else 'FAILED'}")
        if failure is not None:
            problems.append(f"torchcodec cannot decode video: {failure}\n    {FFMPEG_HINT}")
    if versions["torch"] is not None:
        print(f"\nGPU: {gpu_description()}")
    print("\noffline settings:")
    for var in OFFLINE_VARS:
        print(f"  {var}={os.environ.get(var, '(unset)')}")
    if problems:
        print("\nNOT READY:")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    blocked = [
        f"{command} (pip install 'foilkit[{extra}]')"
        for command, missing in needs.items()
        for extra, when, _ in missing
        if when is None
    ]
    if blocked:  # the core commands run; these do not
        print(f"\nready, but not for: {', '.join(blocked)}.")
    else:
        print("\nready.")
    return 0
