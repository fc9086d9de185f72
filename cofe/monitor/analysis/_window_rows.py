"""A window's series: every label-free signal of its traces and the judged measures of
those judged -- domain logic the store's windows are handed when they are refreshed
(:func:`refresh_windows`), so the store computes nothing itself."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from cofe.monitor.analysis._judged import judged_signals
from cofe.monitor.analysis._signals import compute_signals

if TYPE_CHECKING:
    from cofe.monitor.store import MonitorStore


def window_rows(
    store: MonitorStore, origin: str, start_ns: int, end_ns: int
) -> list[tuple[Any, ...]]:
    """``(stage, signal, value, n, note)`` of every label-free and judged signal."""
    traces = store.traces.started_in(start_ns, end_ns, origin=origin)
    rows = [(stage, name, v.value, v.n, v.note) for stage, name, v in compute_signals(traces)]
    rows += judged_signals(store, [t.trace_id for t in traces])
    return rows


def refresh_windows(
    store: MonitorStore, *, open_every_s: float = 0.0, now_ns: int | None = None
) -> int:
    """Compute again the series of every window marked since it was last computed
    (:meth:`~cofe.monitor.store.Windows.refresh`, ``open_every_s`` and ``now_ns`` as
    there); returns how many windows were computed."""
    return store.windows.refresh(
        partial(window_rows, store), open_every_s=open_every_s, now_ns=now_ns
    )
