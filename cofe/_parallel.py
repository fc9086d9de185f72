"""Parallel maps: slices of a CPU-bound job in forked processes, I/O-bound calls in threads.

``fork_map``: the state (indexes, samples) is inherited by the fork,
copy-on-write, never pickled; only each slice's result travels back. Below
``min_items`` or where fork is unavailable, everything runs in this process.

``thread_map``: calls that wait on a pipeline or an endpoint, a bounded window
in flight, each result handed back to the calling thread as it finishes.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

# multiprocessing and concurrent.futures (with logging and socket, ~0.03 s) load only when
# work is really spread: a run small enough for one process, as most are, never needs them

R = TypeVar("R")
T = TypeVar("T")

_STATE: Any = None  # set just before the fork, read by the workers


def _call(task: tuple[Callable[[Any, tuple[int, int]], Any], tuple[int, int]]) -> Any:
    function, bounds = task
    return function(_STATE, bounds)


def default_workers(n_items: int, min_items: int) -> int:
    return min(os.cpu_count() or 1, 4) if n_items >= min_items else 1


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


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
    return [
        result
        for _, result in fork_imap(
            function, state, n_items, slice_size=slice_size, workers=workers, on_done=on_done
        )
    ]


def fork_imap(
    function: Callable[[Any, tuple[int, int]], R],
    state: Any,
    n_items: int,
    *,
    slice_size: int,
    workers: int,
    on_done: Callable[[tuple[int, int]], None] | None = None,
) -> Iterator[tuple[tuple[int, int], R]]:
    """``fork_map``'s slices and results one at a time, in order, as they are done: the caller
    works on one (writes it, say) while the workers compute the next ones, so no core idles
    while this process does its serial part."""
    global _STATE
    slices = [(start, min(start + slice_size, n_items)) for start in range(0, n_items, slice_size)]
    if workers <= 1 or len(slices) <= 1 or not _can_fork():
        for bounds in slices:
            result = function(state, bounds)
            if on_done:
                on_done(bounds)
            yield bounds, result
        return
    import multiprocessing

    _STATE = state
    # objects made so far are never collected in the workers: their garbage
    # collector would otherwise touch, and so copy, every inherited page
    gc.freeze()
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(slices))) as pool:
            tasks = [(function, bounds) for bounds in slices]
            for bounds, result in zip(slices, pool.imap(_call, tasks), strict=True):
                if on_done:
                    on_done(bounds)
                yield bounds, result
    finally:
        _STATE = None
        gc.unfreeze()


def thread_map(
    function: Callable[[T], R],
    items: Sequence[T],
    on_result: Callable[[R], None],
    *,
    concurrency: int,
    progress: tuple[str, str] | None = None,
    name: str = "cofe",
) -> None:
    """``on_result(function(item))`` for every item, in the calling thread, in finishing order.

    At most ``2 * concurrency`` calls are submitted ahead, so an interrupt
    loses at most that window. With ``concurrency == 1`` the calls run in this
    thread: handing each one to a worker would only add GIL waits.
    ``progress=(description, unit)`` shows a bar on stderr.
    """
    bar = None
    if progress is not None:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc=progress[0], unit=progress[1], file=sys.stderr)

    def done(result: R) -> None:
        on_result(result)
        if bar is not None:
            bar.update(1)

    try:
        if concurrency == 1:
            for item in items:
                done(function(item))
            return
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name) as executor:
            try:
                running: set[Future[Any]] = set()
                for item in items:
                    running.add(executor.submit(function, item))
                    if len(running) >= 2 * concurrency:
                        finished, running = wait(running, return_when=FIRST_COMPLETED)
                        for future in finished:
                            done(future.result())
                for future in list(running):
                    done(future.result())
            except BaseException:
                executor.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        if bar is not None:
            bar.close()
