"""Decoding views to frames through FFmpeg: torchcodec by default, PyAV as a fallback.

One ``open_video`` per file: every view of a file (windows, reversed copies, the main and
proficiency items of ViLMA) is served from one decode of the union of their frame indices.
Both backends agree on what a frame is: its index counts frames in presentation order, a
window selects frames by their presentation times (exact for variable frame rate), and frames
come out upright (the container's display rotation applied).

Decode memory is bounded whatever a file declares: frames of more than ``max_pixels`` pixels
(default ``MAX_DECODE_PIXELS``) are scaled down inside the decoder, one frame at a time, so a
full-size RGB frame is never held (see ``decode_size``). A file of fewer than two frames is not
a video to a temporal benchmark, and is refused.
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from foilkit.scorers.video import errors
from foilkit.scorers.video.sampling import SamplingPolicy
from foilkit.scorers.video.view import VideoView

logger = logging.getLogger(__name__)

#: Frames of more pixels than this (3840 x 2160, 4K UHD) are scaled down while decoding, keeping
#: their aspect ratio (``--max-decode-pixels`` changes it). One RGB frame within it is at most
#: 25 MB; an 8192 x 8192 frame (a 57 KB file can declare one) would be 201 MB, times every
#: sampled frame and its copies.
MAX_DECODE_PIXELS = 3840 * 2160
#: The fewest frames a file must hold to be scored as a video (one frame has no time axis).
MIN_FRAMES = 2

# An annotated window may overrun the file by rounding; beyond this many seconds it is an error.
WINDOW_TOLERANCE_S = 0.5
# A stream whose frames stray further than this fraction of a frame period from an evenly spaced
# grid (first to last frame) is variable frame rate: its windows are found by frame timestamps.
VFR_TOLERANCE = 0.1


@dataclass(frozen=True)
class VideoMetadata:
    """What a backend reports of a video stream; ``width`` and ``height`` are as displayed
    (after the container's rotation).

    ``frame_times``: each frame's presentation time in seconds from the first frame, in
    presentation order (float64), or ``None`` where the stream does not say. Windows of a
    variable-frame-rate video are matched against these rather than against ``fps``.
    ``codec``: the stream's codec as FFmpeg names it (``h264``; ``png`` for an image), for errors.
    """

    num_frames: int
    fps: float
    duration: float
    width: int
    height: int
    frame_times: np.ndarray | None = field(default=None, compare=False, repr=False)
    codec: str | None = field(default=None, compare=False, repr=False)

    @property
    def variable_rate(self) -> bool:
        """Whether some frame lies off the evenly spaced grid from the first frame to the last
        (by more than ``VFR_TOLERANCE`` of a period). The grid's period is not ``1 / fps``: the
        average rate also counts the last frame's duration, which containers get wrong."""
        times = self.frame_times
        if (
            times is None
            or self.num_frames < 3
            or len(times) != self.num_frames
            or not times[-1] > 0
        ):
            return False
        period = times[-1] / (self.num_frames - 1)
        return bool(
            np.abs(times - period * np.arange(self.num_frames)).max() > VFR_TOLERANCE * period
        )


@dataclass
class DecodedFrames:
    """Frames of one view: uint8 ``T x C x H x W`` plus the indices and timestamps used."""

    frames: torch.Tensor
    indices: np.ndarray
    timestamps: np.ndarray
    backend: str
    reversed: bool = False

    def to_record(self) -> dict:
        return {
            "frame_indices": self.indices.tolist(),
            "timestamps": [round(float(t), 6) for t in self.timestamps],
            "reversed": self.reversed,
            "decoder": self.backend,
        }


class OpenVideo(Protocol):
    metadata: VideoMetadata

    def get_frames(self, indices: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
        """Frames at sorted unique ``indices`` (uint8 NCHW) and their timestamps in seconds."""


#: A decoder: opens a view, decoding frames of more than ``max_pixels`` scaled down to fit.
Opener = Callable[..., OpenVideo]
DECODERS: dict[str, Opener] = {}


def register_decoder(name: str) -> Callable[[Opener], Opener]:
    def decorator(opener: Opener) -> Opener:
        DECODERS[name] = opener
        return opener

    return decorator


def _check_exists(view: VideoView) -> None:
    if isinstance(view.source, str) and not Path(view.source).is_file():
        raise errors.VideoNotFoundError(view.name, "no such file")


def decode_size(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    """The ``(width, height)`` a ``width`` x ``height`` frame is decoded at under a budget of
    ``max_pixels``: its own size within the budget, else the largest size within it of the same
    aspect ratio (each side at least 1 pixel)."""
    if max_pixels < 1:
        raise ValueError(f"max_pixels must be >= 1, got {max_pixels}")
    if width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    new_width, new_height = max(1, int(width * scale)), max(1, int(height * scale))
    if new_width * new_height > max_pixels:  # float rounding, or a side held at 1 pixel:
        if new_width >= new_height:  # trim the longer side (the shorter is <= sqrt(max_pixels))
            new_width = max_pixels // new_height
        else:
            new_height = max_pixels // new_width
    return new_width, new_height


class _TorchcodecVideo:
    #: the decoder's name in messages (``--decoder``)
    decoder = "torchcodec"
    #: where frames are decoded and left: FFmpeg on the CPU, or NVDEC on the GPU (frames stay
    #: on the device into the model's processor, no host round trip)
    device = "cpu"
    #: whether frames over the pixel budget are scaled down while decoding (torchcodec's decoder
    #: transforms run on the CPU only; a decoder that cannot fails such a file, naming its size)
    reduces = True

    def __init__(self, view: VideoView, max_pixels: int = MAX_DECODE_PIXELS):
        self._decoder = self._open(view, max_pixels)
        meta = self._decoder.metadata
        num_frames = int(meta.num_frames or 0)
        fps = float(meta.average_fps or 0.0)
        duration = float(meta.duration_seconds or (num_frames / fps if fps else 0.0))
        # torchcodec's sizes are as displayed (after rotation), and so is its resize
        width, height = int(meta.width or 0), int(meta.height or 0)
        size = decode_size(width, height, max_pixels)
        if size != (width, height):  # known from the stream's header, before any frame decodes
            if not self.reduces:
                raise self._too_large(view, width, height, max_pixels)
            self._decoder = self._open(view, max_pixels, size)
        self.metadata = VideoMetadata(
            num_frames,
            fps,
            duration,
            width,
            height,
            _torchcodec_frame_times(view.source),
            codec=meta.codec,
        )
        self._name = view.name

    def _too_large(
        self, view: VideoView, width: int, height: int, max_pixels: int
    ) -> errors.FrameTooLargeError:
        return errors.FrameTooLargeError(
            view.name,
            f"its frames are {width}x{height} ({width * height:,} pixels), over the decoding "
            f"budget of {max_pixels:,} pixels, and torchcodec cannot scale frames down on "
            f"{self.device}; rerun with --decoder torchcodec (which scales them to fit) or "
            "raise --max-decode-pixels",
        )

    def _open(self, view: VideoView, max_pixels: int, size: tuple[int, int] | None = None):
        """torchcodec's decoder of ``view``, resizing every frame to ``size`` (width, height)
        as it is decoded when given."""
        from torchcodec.decoders import VideoDecoder
        from torchcodec.transforms import Resize

        try:
            return VideoDecoder(
                view.source,
                seek_mode="exact",
                dimension_order="NCHW",
                device=self.device,
                transforms=None if size is None else [Resize((size[1], size[0]))],
            )
        except (RuntimeError, ValueError) as error:
            unreadable = errors.CorruptVideoError(
                view.name, f"{self.decoder} cannot open it: {_reason(error)}"
            )
            try:  # a readable container without frames raises EmptyVideoError here
                shown = _PyAVVideo(view, max_pixels).metadata
            except errors.CorruptVideoError:  # unreadable to FFmpeg: say what this decoder said
                raise unreadable from error
            if not self.reduces and shown.width * shown.height > max_pixels:
                # NVDEC refuses sizes beyond its limits: a fault of this file, not of the GPU
                raise self._too_large(view, shown.width, shown.height, max_pixels) from error
            if self.device != "cpu":  # the file opens on the CPU: the GPU decoder is at fault
                raise DecoderUnavailableError(
                    f"{view.name}: torchcodec cannot decode it on {self.device} ({error}); "
                    "rerun with --decoder torchcodec to decode on the CPU"
                ) from error
            raise unreadable from error

    def get_frames(self, indices: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
        try:
            batch = self._decoder.get_frames_at(indices=[int(i) for i in indices])
        except (RuntimeError, ValueError, IndexError) as error:
            raise errors.CorruptVideoError(
                self._name,
                f"{self.decoder} failed decoding frames {indices.tolist()}: {_reason(error)}",
            ) from error
        return batch.data, batch.pts_seconds.double().numpy()


def _reason(error: Exception) -> str:
    """torchcodec's error without the C++ location it starts with (``SingleStreamDecoder,
    /path/SingleStreamDecoder.cpp:41, Could not open input file ...``): what FFmpeg said."""
    return _CPP_LOCATION.sub("", str(error), count=1)


#: ``Class, /path/file.cpp:123, `` at the start of a torchcodec error
_CPP_LOCATION = re.compile(r"^\w+, \S+\.(?:cpp|h):\d+, ")


class _TorchcodecCudaVideo(_TorchcodecVideo):
    """torchcodec with NVDEC: frames decoded on the GPU stay there (see ``resolve_decoder``).
    It cannot resize while decoding: a file with frames over the pixel budget is refused."""

    decoder = "torchcodec-cuda"
    device = "cuda"
    reduces = False


class DecoderUnavailableError(RuntimeError):
    """The requested decoder cannot run here (no CUDA device, no NVDEC in FFmpeg's build)."""


def resolve_decoder(name: str) -> tuple[str, str | None]:
    """The decoder a run uses for ``name``, and why it differs when it does.

    ``torchcodec-cuda`` needs a CUDA device; without one the run decodes on the CPU with
    ``torchcodec`` (the same frames) and records the fallback and its reason.
    """
    if name not in DECODERS:
        raise ValueError(f"unknown decoder {name!r}; choose from {sorted(DECODERS)}")
    device = getattr(DECODERS[name], "device", "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        return "torchcodec", f"{name} needs a CUDA device (torch.cuda.is_available() is False)"
    return name, None


def available_backends() -> list[str]:
    """The decoders that run on this machine (the CUDA decoder only where CUDA is)."""
    return sorted(name for name in DECODERS if resolve_decoder(name)[1] is None)


#: What to do when torchcodec cannot load FFmpeg's shared libraries (:func:`ffmpeg_problem`).
FFMPEG_FIX = (
    "decode with PyAV, which brings its own FFmpeg: --decoder pyav (decoder='pyav' in Python), "
    "or install FFmpeg's shared libraries (Debian/Ubuntu, as root: apt-get install -y "
    "libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 "
    "libswresample4)"
)


def ffmpeg_problem(name: str) -> str | None:
    """Why decoder ``name`` cannot run here, in a few words, when it is torchcodec's and
    torchcodec cannot load FFmpeg's shared libraries (else ``None``): checked once before a
    model loads, where every row would otherwise fail with torchcodec's own report (a traceback
    per FFmpeg version it tried, hundreds of lines)."""
    if not name.startswith("torchcodec"):
        return None
    try:
        _load_torchcodec()
    except (RuntimeError, OSError) as error:
        text = str(error)
        missing = re.search(r"(lib[\w.+-]+\.so[.\d]*): cannot open shared object file", text)
        why = f"{missing[1]} not found" if missing else text.strip().splitlines()[0]
        return f"torchcodec cannot load FFmpeg's shared libraries ({why})"
    return None


def _load_torchcodec() -> None:
    """Load torchcodec's FFmpeg-dependent libraries (once; torchcodec remembers a success)."""
    from torchcodec._internally_replaced_utils import load_core_libraries

    load_core_libraries()


def _torchcodec_frame_times(source: str | bytes) -> np.ndarray | None:
    """Every frame's presentation time from the first, from a demux of the stream (no decode:
    a few milliseconds for thousands of frames); ``None`` where the packets do not say, so the
    frame rate alone places the frames, as before timestamps were read."""
    from torchcodec.decoders import Demuxer

    try:
        pts = Demuxer(source, streams="video").streams[0].scan().pts_seconds.double().numpy()
    except (RuntimeError, ValueError):
        return None
    if not len(pts) or not np.isfinite(pts).all():
        return None
    return pts - pts[0]


def _relative_times(pts: list[int | None], time_base) -> np.ndarray | None:
    """Packet timestamps as sorted seconds from the first frame; ``None`` if any is unknown."""
    if not pts or time_base is None or any(value is None for value in pts):
        return None
    times = np.sort(np.asarray(pts, dtype=np.float64)) * float(time_base)
    return times - times[0]


def _quarter_turns(frame) -> int:
    """Counter-clockwise quarter turns that show a PyAV frame upright, from its display matrix
    (rounded to a multiple of 90 degrees, as torchcodec rounds it)."""
    return round(float(frame.rotation or 0) / 90) % 4


class _PyAVVideo:
    """Sequential decode with PyAV; frame ``i`` is the i-th frame in presentation order.

    Frames are turned upright by the container's display rotation, as torchcodec does, so
    the two backends agree on shape and pixels (PyAV itself returns the coded orientation).
    A frame over the pixel budget is scaled down as it is converted to RGB, by its own size
    (so a stream that grows mid-way is bounded too), like torchcodec's resize (bilinear).
    """

    def __init__(self, view: VideoView, max_pixels: int = MAX_DECODE_PIXELS):
        import av

        self._open = lambda: av.open(
            io.BytesIO(view.source) if isinstance(view.source, bytes) else view.source
        )
        self._name, self._max_pixels = view.name, max_pixels
        try:
            with self._open() as container:
                if not container.streams.video:
                    raise errors.EmptyVideoError(view.name, "the container holds no video stream")
                stream = container.streams.video[0]
                pts, self._turns = [], None
                for packet in container.demux(stream):
                    if packet.size > 0:
                        pts.append(packet.pts)
                    if self._turns is None:  # the first decoded frame carries the display matrix
                        self._turns = next(
                            (_quarter_turns(f) for f in stream.codec_context.decode(packet)), None
                        )
                num_frames = len(pts)
                fps = float(stream.average_rate or 0.0)
                width, height = stream.codec_context.width, stream.codec_context.height
                frame_times = _relative_times(pts, stream.time_base)
                codec = stream.codec_context.name
        except av.FFmpegError as error:
            raise errors.CorruptVideoError(view.name, f"PyAV cannot open it: {error}") from error
        self._turns = self._turns or 0
        if self._turns % 2:
            width, height = height, width
        duration = num_frames / fps if fps else 0.0
        self.metadata = VideoMetadata(
            num_frames, fps, duration, width, height, frame_times, codec=codec
        )

    def get_frames(self, indices: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
        import av

        wanted, frames, times = {int(i) for i in indices}, [], []
        try:
            with self._open() as container:
                stream = container.streams.video[0]
                for position, frame in enumerate(container.decode(stream)):
                    if position in wanted:
                        array = np.rot90(self._rgb(frame), self._turns)
                        frames.append(
                            torch.from_numpy(np.ascontiguousarray(array)).permute(2, 0, 1)
                        )
                        times.append(float(frame.time))
                    if position >= indices[-1]:
                        break
        except av.FFmpegError as error:
            raise errors.CorruptVideoError(
                self._name, f"PyAV failed decoding it: {error}"
            ) from error
        if len(frames) != len(wanted):
            raise errors.CorruptVideoError(
                self._name, f"PyAV decoded {len(frames)} of {len(wanted)} requested frames"
            )
        return torch.stack(frames), np.asarray(times, dtype=np.float64)

    def _rgb(self, frame) -> np.ndarray:
        """``frame`` as an RGB array in its coded orientation, scaled down in the conversion
        to fit the pixel budget as displayed (the full-size RGB frame is never made)."""
        coded = (frame.width, frame.height)
        turned = self._turns % 2
        shown = coded[::-1] if turned else coded
        size = decode_size(*shown, self._max_pixels)
        if size == shown:
            return frame.to_ndarray(format="rgb24")
        width, height = size[::-1] if turned else size
        return frame.to_ndarray(format="rgb24", width=width, height=height)


register_decoder("torchcodec")(_TorchcodecVideo)
register_decoder("torchcodec-cuda")(_TorchcodecCudaVideo)
register_decoder("pyav")(_PyAVVideo)


def open_video(
    view: VideoView | str, backend: str = "torchcodec", max_pixels: int = MAX_DECODE_PIXELS
) -> OpenVideo:
    """Open a video once; raises a typed ``VideoError`` naming the file on bad input: no file,
    no container, no frames or a single one (an image is not a video), no frame rate, or frames
    over ``max_pixels`` for a decoder that cannot scale them down. Its frames come out scaled
    down to fit ``max_pixels`` where they exceed it (``decode_size``)."""
    view = view if isinstance(view, VideoView) else VideoView(view)
    if backend not in DECODERS:
        raise ValueError(f"unknown decoder backend {backend!r}; choose from {sorted(DECODERS)}")
    _check_exists(view)
    video = DECODERS[backend](view, max_pixels=max_pixels)
    meta = video.metadata
    if meta.num_frames <= 0:
        raise errors.EmptyVideoError(view.name, "the video stream holds no frames")
    if meta.num_frames < MIN_FRAMES:
        codec = f" (codec {meta.codec!r})" if meta.codec else ""
        raise errors.TooFewFramesError(
            view.name,
            f"the video stream holds only {meta.num_frames} frame{codec}, a still image with no "
            f"time axis; a temporal item needs at least {MIN_FRAMES} frames: replace the file "
            "with the video clip, or drop its rows",
        )
    if meta.fps <= 0:
        raise errors.CorruptVideoError(view.name, "the video stream reports no frame rate")
    size = decode_size(meta.width, meta.height, max_pixels)
    if size != (meta.width, meta.height):
        logger.warning(
            "%s: frames of %dx%d exceed the decoding budget of %d pixels (--max-decode-pixels); "
            "decoding them at %dx%d",
            view.name,
            meta.width,
            meta.height,
            max_pixels,
            *size,
        )
    return video


def probe(
    source: VideoView | str, backend: str = "torchcodec", max_pixels: int = MAX_DECODE_PIXELS
) -> VideoMetadata:
    """Frame count, rate, duration and size (as stored, before any scaling down) of a video."""
    return open_video(source, backend, max_pixels).metadata


def window_frames(
    view: VideoView, meta: VideoMetadata, tolerance: float = WINDOW_TOLERANCE_S
) -> tuple[int, int]:
    """Inclusive frame range ``[first, last]`` whose timestamps fall in the view's window.

    A window ``[start, end)`` holds the frames presented at ``start`` up to, not including,
    ``end`` (seconds from the first frame). Under the ``read-video`` rule
    (``view.window_rule``) it holds what torchvision's ``read_video`` returns: the frames whose
    timestamps lie in ``[start, end]``, end included, and the frame on screen at ``start`` when
    ``start`` falls between frames. At a constant rate frame ``i`` is at ``i / fps``; a
    variable-rate video (``meta.variable_rate``) is matched by its real frame timestamps, since
    its average rate misplaces frames (a frame at 2.058 s counted into a window ending at 2 s,
    frames early in the window missed). A window holding no frame yields the frame on screen
    during it. Raises ``WindowOutOfRangeError``, naming the video and the window, for a window
    beyond the video's end.
    """
    last_frame = meta.num_frames - 1
    if view.start is None and view.end is None:
        return 0, last_frame
    start = view.start or 0.0
    end = meta.duration if view.end is None else view.end
    if start >= meta.duration or end > meta.duration + tolerance:
        bounds = f"{start:.3f}, {'end' if view.end is None else f'{end:.3f}'}"
        raise errors.WindowOutOfRangeError(
            view.name,
            f"window [{bounds}] s lies outside the video (duration {meta.duration:.3f} s)",
        )
    if view.window_rule == "read-video":
        return _read_video_frames(start, end, meta)
    if meta.variable_rate:
        times = meta.frame_times
        first = int(np.searchsorted(times, start - 1e-6, side="left"))
        last = int(np.searchsorted(times, end - 1e-6, side="left")) - 1
        if last < first:  # no frame starts inside the window: the one shown during it
            first = last = max(0, int(np.searchsorted(times, start + 1e-6, side="right")) - 1)
        return min(first, last_frame), min(last, last_frame)
    first = min(math.ceil(start * meta.fps - 1e-6), last_frame)
    last = min(math.ceil(end * meta.fps - 1e-6) - 1, last_frame)
    return first, max(first, last)  # a window shorter than one frame still yields its frame


def _read_video_frames(start: float, end: float, meta: VideoMetadata) -> tuple[int, int]:
    """torchvision 0.14's ``read_video(start, end, pts_unit="sec")`` as frame indices.

    It keeps the frames with ``floor(start / tb) <= pts <= ceil(end / tb)`` (``tb`` the stream's
    time base) and, when no frame sits exactly at ``start``, the last frame before it: frames
    ``floor(start * fps) .. floor(end * fps)`` at a constant rate (COIN's 2.0-3.0 s at 29.97 fps:
    frames 59-89; RareAct's 10-20 s at 25 fps: 250-500). The 1 µs tolerance stands for the
    rounding to ticks.
    """
    last_frame = meta.num_frames - 1
    if meta.variable_rate:
        times = meta.frame_times
        first = int(np.searchsorted(times, start + 1e-6, side="right")) - 1
        last = int(np.searchsorted(times, end + 1e-6, side="right")) - 1
    else:
        first = math.floor(start * meta.fps + 1e-6)
        last = math.floor(end * meta.fps + 1e-6)
    first = min(max(first, 0), last_frame)
    return first, min(max(first, last), last_frame)


def sampling_key(view: VideoView) -> str:
    """A view's name for seeded sampling: its file name (or content hash) and window.

    The direction is left out, so a view and its reversal get the same frames; the folder is
    left out, so the draws do not change when the videos move; bounds are written as floats,
    so a window annotated as ``20`` or ``20.0`` gets the same draw.
    """
    source = Path(view.source).name if isinstance(view.source, str) else view.source_key
    bounds = ("" if bound is None else repr(float(bound)) for bound in (view.start, view.end))
    return "|".join((source, *bounds))


def decode_views(
    views: Sequence[VideoView],
    policy: SamplingPolicy,
    backend: str = "torchcodec",
    max_pixels: int = MAX_DECODE_PIXELS,
    *,
    video: OpenVideo | None = None,
    frame_sets: Sequence[np.ndarray] = (),
) -> list[DecodedFrames | errors.VideoError]:
    """Frames of several views of ONE video, decoding the union of their frames once (frames
    over ``max_pixels`` scaled down to fit, see ``open_video``).

    Each view fails or succeeds on its own: a view whose window cannot be played (beyond the
    video's end) gets its ``VideoError`` in its place in the returned list, and the other views
    are decoded as if it were not there. A fault of the file itself (missing, corrupt, empty)
    concerns every view and is raised.

    ``video``: the file already opened (``open_video`` of the views' file), e.g. to read its
    metadata first; ``frame_sets``: further frame indices of the file to decode in the same
    pass (a joined view's frames, :mod:`foilkit.scorers.video.joined`), each returned after the
    views, in order, as ``DecodedFrames`` of exactly those indices.
    """
    if not views and not frame_sets:
        return []
    keys = {view.source_key for view in views}
    if len(keys) > 1:
        raise ValueError(f"decode_views takes views of one video, got {sorted(keys)}")
    if video is None:
        video = open_video(views[0], backend, max_pixels)
    meta = video.metadata
    per_view: list[np.ndarray | errors.VideoError] = []
    for view in views:
        try:
            per_view.append(
                policy.indices(*window_frames(view, meta), meta.fps, key=sampling_key(view))
            )
        except errors.WindowOutOfRangeError as error:
            per_view.append(error)
        except ValueError as error:  # the policy cannot sample this view (its rate, its length)
            per_view.append(errors.SamplingError(view.name, str(error)))
    wanted = [indices for indices in per_view if not isinstance(indices, errors.VideoError)]
    wanted += [np.asarray(indices, dtype=np.int64) for indices in frame_sets if len(indices)]
    if not wanted:
        return [*per_view, *(_no_frames(indices, backend) for indices in frame_sets)]
    unique = np.unique(np.concatenate(wanted))
    frames, timestamps = video.get_frames(unique)
    # contiguous T x C x H x W, once per decode and in the decoding thread rather than by every
    # consumer of the frames (decoders hand out channels-last memory); numpy's strided copy
    # takes 0.4x the time of torch's ``contiguous`` on uint8 frames
    if frames.device.type == "cpu":
        frames = torch.from_numpy(np.ascontiguousarray(frames.numpy()))
    else:
        frames = frames.contiguous()

    def taken(indices: np.ndarray, reversed: bool = False) -> DecodedFrames:
        """The decoded frames at ``indices``, played backwards when ``reversed``."""
        rows = np.searchsorted(unique, indices)
        if reversed:
            indices, rows = indices[::-1].copy(), rows[::-1].copy()
        return DecodedFrames(
            take_frames(frames, rows), indices, timestamps[rows], backend, reversed
        )

    out: list[DecodedFrames | errors.VideoError] = [
        indices if isinstance(indices, errors.VideoError) else taken(indices, view.reversed)
        for view, indices in zip(views, per_view)
    ]
    sets = (np.asarray(indices, dtype=np.int64) for indices in frame_sets)
    return out + [
        taken(indices) if len(indices) else _no_frames(indices, backend) for indices in sets
    ]


def _no_frames(indices: np.ndarray, backend: str) -> DecodedFrames:
    """An empty frame set (a joined view none of whose positions fall in this clip)."""
    empty = np.zeros(0, dtype=np.int64)
    return DecodedFrames(torch.zeros((0, 3, 1, 1), dtype=torch.uint8), empty, empty * 1.0, backend)


def take_frames(frames: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
    """``frames[rows]`` along the first axis, as a new contiguous tensor.

    ``index_select`` copies whole frames; indexing with a tensor (``frames[rows]``) takes the
    general gather path, ~25x slower on uint8 video frames.
    """
    index = torch.from_numpy(np.ascontiguousarray(rows, dtype=np.int64))
    return frames.index_select(0, index.to(frames.device))


def decode_view(
    view: VideoView,
    policy: SamplingPolicy,
    backend: str = "torchcodec",
    max_pixels: int = MAX_DECODE_PIXELS,
) -> DecodedFrames:
    """Frames of one view (see ``decode_views`` to serve several views of a file at once);
    raises its ``VideoError``, whether of the file or of the view's window."""
    (decoded,) = decode_views([view], policy, backend, max_pixels)
    if isinstance(decoded, errors.VideoError):
        raise decoded
    return decoded
