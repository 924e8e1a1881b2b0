"""``foilkit doctor``: is this machine ready to run foilkit?

Reports the versions of the stack, whether torchcodec can load FFmpeg and decode a video,
whether a GPU is visible, and the offline settings. Exits non-zero naming what is missing. The
optional extras (``foilkit[generation]``) are listed as installed or not, never as a problem:
evaluation does not need them.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import platform
import tempfile

from foilkit.errors import EXTRA_MODULES
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
)


def check_decoding() -> str | None:
    """Decode a freshly written H.264 clip through torchcodec; the error text, or None if it
    works."""
    try:
        from foilkit.scorers.video import SamplingPolicy, VideoView, decode_view
        from foilkit.synthetic.videos import write_video

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


def missing_extras() -> dict[str, list[str]]:
    """Each optional extra -> the import names of its modules that are not installed (found
    without importing them)."""
    missing: dict[str, list[str]] = {}
    for module, extra in EXTRA_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        missing.setdefault(extra, [])
        if not found:
            missing[extra].append(module)
    return missing


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-decode", action="store_true", help="do not test video decoding")


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
    print("\noptional extras:")
    for extra, modules in missing_extras().items():
        state = (
            "installed"
            if not modules
            else (f"not installed ({', '.join(modules)}; pip install 'foilkit[{extra}]')")
        )
        print(f"  {extra:<22} {state}")
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
    print("\nready.")
    return 0
