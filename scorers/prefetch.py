"""Running a function over items in threads ahead of the consumer, in order, with bounded memory.

The engine decodes videos this way. FFmpeg decodes with the GIL released (torchcodec and PyAV
alike), so decoding threads scale over cores as processes do, while their frames stay in this
process: no pickling and no shared-memory handle per tensor on the way to the model (with
``DataLoader`` worker processes that cost 1.5-2 ms of the model process's time per view), and
nothing forked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def prefetched(
    function: Callable[[Item], Result], items: Iterable[Item], *, workers: int, depth: int
) -> Generator[Result, None, None]:
    """``function(item)`` for each item, in order, computed by ``workers`` threads.

    At most ``depth`` results are computed or waiting at any time (``depth >= workers``), so
    memory does not grow with the number of items. With ``workers=0`` everything runs in the
    calling thread, one item at a time. An exception raised by ``function`` comes out when its
    item's turn comes; closing the iterator early cancels what has not started.
    """
    if workers < 0 or depth < max(1, workers):
        raise ValueError(f"need workers >= 0 and depth >= max(1, workers), got {workers}, {depth}")
    if workers == 0:
        yield from map(function, items)
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="foilkit-decode")
    pending: deque[Future[Result]] = deque()
    try:
        for item in items:
            if len(pending) >= depth:
                yield pending.popleft().result()
            pending.append(pool.submit(function, item))
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
