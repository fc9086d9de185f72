"""Map a function over slices of a large job in forked worker processes.

The state (indexes, samples) is inherited by the fork, copy-on-write, never
pickled; only each slice's result travels back. Below ``min_items`` or where
fork is unavailable, everything runs in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")

_STATE: Any = None  # set just before the fork, read by the workers


def _call(task: tuple[Callable[[Any, tuple[int, int]], Any], tuple[int, int]]) -> Any:
    function, bounds = task
    return function(_STATE, bounds)


def default_workers(n_items: int, min_items: int) -> int:
    return min(os.cpu_count() or 1, 4) if n_items >= min_items else 1


def fork_map(
    function: Callable[[Any, tuple[int, int]], R],
    state: Any,
    n_items: int,
    *,
    slice_size: int,
    workers: int,
    on_done: Callable[[tuple[int, int]], None] | None = None,
) -> list[R]:
    """``[function(state, (start, end)) for each slice]``, in order, maybe in parallel.

    ``function`` must be a module-level function (workers find it by name).
    """
    global _STATE
    slices = [(start, min(start + slice_size, n_items)) for start in range(0, n_items, slice_size)]
    results: list[R] = []
    if workers <= 1 or len(slices) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for bounds in slices:
            results.append(function(state, bounds))
            if on_done:
                on_done(bounds)
        return results
    _STATE = state
    # objects made so far are never collected in the workers: their garbage
    # collector would otherwise touch, and so copy, every inherited page
    gc.freeze()
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(slices))) as pool:
            tasks = [(function, bounds) for bounds in slices]
            for bounds, result in zip(slices, pool.imap(_call, tasks), strict=True):
                results.append(result)
                if on_done:
                    on_done(bounds)
    finally:
        _STATE = None
        gc.unfreeze()
    return results
