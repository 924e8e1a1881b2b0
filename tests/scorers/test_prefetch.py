"""The decoding threads' scheduler: results in order, bounded look-ahead, errors at their turn."""

from __future__ import annotations

import random
import threading
import time

import pytest

from foilkit.scorers.prefetch import prefetched


class Recorder:
    """A slow function that records how many items were started but not yet consumed."""

    def __init__(self, fail_on: int | None = None):
        self.started: list[int] = []
        self.consumed = 0
        self.most_ahead = 0
        self.threads: set[str] = set()
        self.fail_on = fail_on
        self._lock = threading.Lock()

    def __call__(self, item: int) -> int:
        with self._lock:
            self.started.append(item)
            self.most_ahead = max(self.most_ahead, len(self.started) - self.consumed)
            self.threads.add(threading.current_thread().name)
        time.sleep(random.Random(item).uniform(0, 0.004))  # finish out of order
        if item == self.fail_on:
            raise RuntimeError(f"item {item} failed")
        return item * item

    def consume(self, results):
        for result in results:
            with self._lock:
                self.consumed += 1
            yield result


@pytest.mark.parametrize("workers, depth", [(0, 1), (1, 1), (2, 2), (3, 8)])
def test_results_come_in_order_with_bounded_look_ahead(workers, depth):
    recorder = Recorder()
    assert list(
        recorder.consume(prefetched(recorder, range(40), workers=workers, depth=depth))
    ) == [i * i for i in range(40)]
    assert sorted(recorder.started) == list(range(40))
    assert recorder.most_ahead <= depth + 1  # the one being handed out, plus ``depth`` behind it
    if workers == 0:
        assert recorder.threads == {threading.current_thread().name}
    else:
        assert threading.current_thread().name not in recorder.threads


def test_an_error_comes_out_at_its_items_turn():
    recorder = Recorder(fail_on=5)
    results = prefetched(recorder, range(20), workers=3, depth=4)
    assert [next(results) for _ in range(5)] == [0, 1, 4, 9, 16]
    with pytest.raises(RuntimeError, match="item 5 failed"):
        next(results)


def test_closing_early_cancels_what_has_not_started_and_joins_the_threads():
    recorder = Recorder()
    results = prefetched(recorder, range(1000), workers=2, depth=4)
    assert next(results) == 0
    results.close()
    assert len(recorder.started) <= 1 + 4
    assert not [t for t in threading.enumerate() if t.name.startswith("foilkit-decode")]


@pytest.mark.parametrize("workers, depth", [(-1, 1), (2, 1), (0, 0)])
def test_bad_settings_are_refused(workers, depth):
    with pytest.raises(ValueError, match="workers"):
        list(prefetched(abs, [1], workers=workers, depth=depth))
