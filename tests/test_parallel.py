"""fork_imap hands each slice back as soon as it is done, in order, while later ones run."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from cofe._parallel import fork_imap, fork_map

_RELEASED = multiprocessing.get_context("fork").Event()


def _square_slice(state: list[int], bounds: tuple[int, int]) -> list[int]:
    return [value * value for value in state[bounds[0] : bounds[1]]]


def _last_waits(state: Any, bounds: tuple[int, int]) -> str:
    """The last slice waits until the caller has received the first one."""
    if bounds[0] == 0:
        return "first"
    if bounds[1] == state:
        return "released" if _RELEASED.wait(timeout=60) else "never released"
    return "middle"


@pytest.mark.parametrize("workers", [1, 2])
def test_fork_imap_gives_fork_maps_results_with_their_slices(workers: int) -> None:
    values = list(range(25))
    parts = list(fork_imap(_square_slice, values, 25, slice_size=4, workers=workers))
    assert [bounds for bounds, _ in parts] == [(s, min(s + 4, 25)) for s in range(0, 25, 4)]
    assert [r for _, r in parts] == fork_map(_square_slice, values, 25, slice_size=4, workers=2)
    assert [x for _, r in parts for x in r] == [v * v for v in values]


def test_the_caller_has_a_slice_while_the_workers_still_run_later_ones() -> None:
    _RELEASED.clear()
    got = []
    for bounds, result in fork_imap(_last_waits, 9, 9, slice_size=3, workers=2):
        got.append(result)
        if bounds[0] == 0:
            _RELEASED.set()  # had the results been held back, the last slice would wait in vain
    assert got == ["first", "middle", "released"]
