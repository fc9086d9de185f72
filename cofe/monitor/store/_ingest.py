"""What a batch's ingest reports, and the bound on a trace's size."""

from __future__ import annotations

from dataclasses import dataclass

from cofe.adapters import Span


@dataclass(frozen=True)
class IngestReport:
    spans: int  # spans in the batch
    new_spans: int  # of them, not stored before
    traces: int  # traces the batch holds spans of (each re-assembled if it brought a new one)
    problems: int  # of those re-assembled, traces missing a part
    refused: int = 0  # new spans refused: their trace already held MAX_TRACE_SPANS
    full_traces: tuple[str, ...] = ()  # the traces they belong to

    def refusal(self) -> str:
        """Why spans were refused, for the sender (empty: none were)."""
        if not self.refused:
            return ""
        named = ", ".join(self.full_traces[:3]) + (" ..." if len(self.full_traces) > 3 else "")
        return (
            f"{self.refused:,} spans refused: a trace holds at most {MAX_TRACE_SPANS:,} spans "
            f"(trace {named})"
        )


# A RAG query's trace holds tens of spans, an agent's hundreds. A trace is bounded like a
# body: every batch that brings a trace new spans re-reads and re-assembles it whole inside
# the write transaction, so a sender feeding one trace a batch at a time would make each
# batch cost more than the last (30,000 spans: 0.7 s a 1,000-span batch, the write lock
# held all along). Past this many, its new spans are refused, counted and the trace named.
MAX_TRACE_SPANS = 10_000


def bound_traces(
    groups: dict[str, list[Span]], known: dict[str, set[str]]
) -> tuple[int, tuple[str, ...]]:
    """Drop from ``groups`` the new spans of a trace past MAX_TRACE_SPANS (in batch order);
    returns how many were dropped and from which traces."""
    refused, full = 0, []
    for trace_id, group in groups.items():
        stored = known.get(trace_id, set())
        new = list(dict.fromkeys(s.span_id for s in group if s.span_id not in stored))
        room = MAX_TRACE_SPANS - len(stored)
        if len(new) <= room:
            continue
        kept = stored | set(new[: max(room, 0)])
        groups[trace_id] = [s for s in group if s.span_id in kept]
        refused += len(new) - max(room, 0)
        full.append(trace_id)
    return refused, tuple(full)
