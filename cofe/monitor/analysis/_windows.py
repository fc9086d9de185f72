"""A window's series: every label-free signal of its traces and the judged measures of
those judged -- domain logic the store runs when it refreshes a window, and stores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cofe.monitor.analysis._judged import judged_signals
from cofe.monitor.analysis._signals import compute_signals

if TYPE_CHECKING:
    from cofe.monitor.store import MonitorStore


def window_rows(
    store: MonitorStore, origin: str, start_ns: int, end_ns: int
) -> list[tuple[Any, ...]]:
    """``(stage, signal, value, n, note)`` of every label-free and judged signal."""
    traces = store.traces(start_ns, end_ns, origin=origin)
    rows = [(stage, name, v.value, v.n, v.note) for stage, name, v in compute_signals(traces)]
    rows += judged_signals(store, [t.trace_id for t in traces])
    return rows
