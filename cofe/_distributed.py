"""Scoring past one machine: the slices of ``fork_map`` sent to a Dask cluster instead.

The work shards by sample: the run's corpus index (chunk and document texts,
keyword posting lists, compiled samples) is built once, sent to every worker
once (``Client.scatter(..., broadcast=True)``), and each task scores one slice
of the samples against it and returns its compact rows. Only ``distributed``
is needed (``pip install "cofe[dask]"``); it is imported when used.

Only the cluster's plumbing lives here (connect, map slices, gather): a task that knows
what it distributes lives next to it (the judge's slices: ``cofe.judges._cluster``), so
this root utility imports nothing of cofe's packages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from cofe._errors import ConfigurationError

R = TypeVar("R")


def connect(address: str) -> Any:
    """A ``distributed.Client``: ``local`` starts a one-machine cluster of processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:  # the extra is optional: say how to get it
        raise ConfigurationError(
            'scoring on a Dask cluster needs the "dask" extra: pip install "cofe[dask]"'
        ) from error
    # distributed's LocalCluster and Client constructors carry no annotations
    if address == "local":
        cluster = LocalCluster(processes=True, dashboard_address=None)  # type: ignore[no-untyped-call]
        return Client(cluster)  # type: ignore[no-untyped-call]
    return Client(address, timeout="20s")  # type: ignore[no-untyped-call]


def disconnect(client: Any) -> None:
    """Close the client, and the cluster too when ``connect("local")`` started it."""
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def dask_map(
    function: Callable[[Any, tuple[int, int]], R],
    state: Any,
    n_items: int,
    *,
    slice_size: int,
    client: Any,
    on_done: Callable[[tuple[int, int]], None] | None = None,
) -> list[R]:
    """``[function(state, (start, end)) for each slice]`` on the cluster, in order."""
    from distributed import as_completed

    slices = [(start, min(start + slice_size, n_items)) for start in range(0, n_items, slice_size)]
    shared = client.scatter(state, broadcast=True)
    futures = [client.submit(function, shared, bounds, pure=False) for bounds in slices]
    position = {future.key: i for i, future in enumerate(futures)}
    results: list[Any] = [None] * len(slices)
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]  # distributed: untyped
            i = position[future.key]
            results[i] = future.result()
            if on_done:
                on_done(slices[i])
    finally:
        client.cancel(futures)
    return results
