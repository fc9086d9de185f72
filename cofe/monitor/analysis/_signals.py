"""Label-free signals of each stage, computed over the traces of one time window.

A signal is a small value object: its ``name`` is the column and the CLI spelling, its
``stage`` the stage it watches. *What* is measured is a per-trace value (``of``: a
number, or ``None`` when the trace says nothing about it, e.g. no reranker ran); *how*
it is summed up over a window is the ``statistic`` (a mean -- a rate for 0/1 values --,
a percentile, or a count). Alerts test changes on the same per-trace values. A window
with no value says why (never a silent NaN). The judged signals (``Faithfulness``,
``AnswerRelevancy``) are the judges' own measure objects on the judged share of traffic
(``cofe.monitor.analysis._judged``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from cofe._errors import InputError
from cofe.adapters import TraceRecord
from cofe.refusal import Decline, Extent, read_decline
from cofe.runlog import Stage

ALL = "all"  # signals of whole traces, not of one stage
SIGNAL_STAGES = (  # the stages signals watch, and whole traces
    ALL,
    Stage.CHUNKING.value,
    Stage.RETRIEVAL.value,
    Stage.RERANKING.value,
    Stage.GENERATION.value,
)


@dataclass(frozen=True)
class Value:
    value: float | None
    n: int  # traces the value was computed over (its denominator)
    note: str | None = None  # why there is no value


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation (numpy's default), of a non-empty list."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low, high = math.floor(at), math.ceil(at)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


STATISTICS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": lambda v: sum(v) / len(v),
    "p10": lambda v: quantile(v, 0.1),
    "p50": lambda v: quantile(v, 0.5),
    "p90": lambda v: quantile(v, 0.9),
    "p95": lambda v: quantile(v, 0.95),
    "count": lambda v: float(len(v)),
}


@dataclass(frozen=True)
class Signal:
    name: str
    stage: str
    of: Callable[[TraceRecord], float | None]  # the per-trace value (None: not applicable)
    statistic: str  # how a window sums the values up: a key of STATISTICS
    description: str
    none: str  # why a window has no value
    higher_is_better: bool | None = None  # None: neither (a shift either way matters)

    def values(self, traces: Sequence[TraceRecord]) -> list[float]:
        """The per-trace values; one that is not finite (a score stored before cofe dropped
        them) is no value: one trace must not make its window's statistic inf or NaN."""
        return [v for t in traces if (v := self.of(t)) is not None and math.isfinite(v)]

    def compute(self, traces: Sequence[TraceRecord]) -> Value:
        values = self.values(traces)
        if self.statistic == "count":  # an empty window counts zero: that is a value
            return Value(float(len(values)), len(values))
        if not values:
            return Value(None, 0, self.none)
        return Value(STATISTICS[self.statistic](values), len(values))


R, K, G = Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION


def _flag(condition: bool) -> float:
    return 1.0 if condition else 0.0


def _error(stage: Stage) -> Callable[[TraceRecord], float | None]:
    def of(t: TraceRecord) -> float | None:
        reached = stage in t.stages or t.error_stage is stage
        return _flag(t.error_stage is stage) if reached else None

    return of


def _latency(stage: Stage | None) -> Callable[[TraceRecord], float | None]:
    if stage is None:
        return lambda t: (t.ended_ns - t.started_ns) / 1e9
    return lambda t: t.latency.get(stage)


def _reranked(t: TraceRecord) -> bool:
    return K in t.stages and bool(t.pool) and t.context is not None and t.error_stage is not K


def _context(t: TraceRecord) -> bool:
    """A reranker handed the generator a context (without one, the context is the pool: its
    signals are retrieval's, and a retrieval failure must not page the reranking stage)."""
    return K in t.stages and t.context is not None and t.error_stage not in (R, K)


def _moved(t: TraceRecord) -> float | None:
    """Mean places a context chunk found in the pool moved from its pool rank."""
    if not _reranked(t):
        return None
    rank = {d.chunk_id: i for i, d in enumerate(t.pool or ())}
    moves = [abs(rank[d.chunk_id] - i) for i, d in enumerate(t.context or ()) if d.chunk_id in rank]
    return sum(moves) / len(moves) if moves else None


def _promoted(t: TraceRecord) -> float | None:
    """Share of context chunks from below the pool's first len(context) places."""
    if not _reranked(t) or not t.context:
        return None
    k = len(t.context)
    rank = {d.chunk_id: i for i, d in enumerate(t.pool or ())}
    return sum(rank.get(d.chunk_id, k) >= k for d in t.context) / k


def _top1_dropped(t: TraceRecord) -> float | None:
    if not _reranked(t):
        return None
    assert t.pool is not None
    return _flag(t.pool[0].chunk_id not in {d.chunk_id for d in t.context or ()})


def _top_score(t: TraceRecord) -> float | None:
    return t.pool[0].score if t.pool else None


def _chunk_chars(t: TraceRecord) -> float | None:
    """Mean length of the pool's chunks: what the chunker made, as traffic sees it."""
    sizes = [d.chars for d in t.pool or () if d.chars is not None]
    return sum(sizes) / len(sizes) if sizes else None


@lru_cache(maxsize=4096)
def _decline(answer: str) -> Decline | None:
    """An answer's decline, read once for both signals that need it (RefusalRate and
    DeclineRate are computed one after the other over the same traces)."""
    return read_decline(answer)


def _refused(t: TraceRecord) -> float | None:
    if t.answer is None:
        return None
    found = _decline(t.answer)
    return _flag(found is not None and found.extent is Extent.WHOLE)  # is_refusal


def _declines(t: TraceRecord) -> float | None:
    """Declines all or part of what it is asked ("Paris. The context does not give its
    population."): with no points in traffic a partial decline cannot be told from a
    refusal with a preamble, so both count; an answer that declines, then answers anyway,
    does not."""
    if t.answer is None:
        return None
    found = _decline(t.answer)
    return _flag(found is not None and found.extent is not Extent.ANSWERED)


NO_TRACE = "no trace in the window"
NO_POOL = "no pool recorded in the window"
NO_CONTEXT = "no context recorded in the window"
NO_RERANK = "no reranked context in the window"
NO_ANSWER = "no answer in the window"

SIGNALS: tuple[Signal, ...] = (
    Signal("Traces", ALL, lambda t: 1.0, "count", "query traces in the window", NO_TRACE),
    Signal(
        "ProblemRate",
        ALL,
        lambda t: _flag(bool(t.problems)),
        "mean",
        "share of traces missing a part (no root, no retriever span, no documents, ...)",
        NO_TRACE,
        False,
    ),
    Signal("LatencyP50", ALL, _latency(None), "p50", "median seconds per trace", NO_TRACE, False),
    Signal(
        "LatencyP95",
        ALL,
        _latency(None),
        "p95",
        "95th percentile seconds per trace",
        NO_TRACE,
        False,
    ),
    Signal(
        "ChunkChars",
        Stage.CHUNKING.value,
        _chunk_chars,
        "mean",
        "mean characters per retrieved chunk (the chunker's output as traffic sees it)",
        "no pool with chunk texts in the window",
    ),
    Signal(
        "LatencyP50",
        R,
        _latency(R),
        "p50",
        "median seconds in retrieval",
        "no retriever span in the window",
        False,
    ),
    Signal(
        "LatencyP95",
        R,
        _latency(R),
        "p95",
        "95th percentile seconds in retrieval",
        "no retriever span in the window",
        False,
    ),
    Signal(
        "ErrorRate",
        R,
        _error(R),
        "mean",
        "share of traces whose retriever raised",
        "no trace reached retrieval",
        False,
    ),
    Signal(
        "EmptyPoolRate",
        R,
        lambda t: None if t.pool is None else _flag(not t.pool),
        "mean",
        "share of recorded pools with no chunk",
        NO_POOL,
        False,
    ),
    Signal(
        "PoolSize",
        R,
        lambda t: None if t.pool is None else float(len(t.pool)),
        "mean",
        "mean chunks per pool",
        NO_POOL,
    ),
    Signal(
        "TopScore",
        R,
        _top_score,
        "mean",
        "mean score of the pool's first chunk",
        "no pool in the window lists scores",
    ),
    Signal(
        "TopScoreP10",
        R,
        _top_score,
        "p10",
        "10th percentile of the pool's first score",
        "no pool in the window lists scores",
    ),
    Signal(
        "TopScoreP90",
        R,
        _top_score,
        "p90",
        "90th percentile of the pool's first score",
        "no pool in the window lists scores",
    ),
    Signal(
        "LatencyP50",
        K,
        _latency(K),
        "p50",
        "median seconds in reranking",
        "no reranker span in the window",
        False,
    ),
    Signal(
        "LatencyP95",
        K,
        _latency(K),
        "p95",
        "95th percentile seconds in reranking",
        "no reranker span in the window",
        False,
    ),
    Signal(
        "ErrorRate",
        K,
        _error(K),
        "mean",
        "share of traces whose reranker raised",
        "no trace reached reranking",
        False,
    ),
    Signal(
        "EmptyContextRate",
        K,
        lambda t: _flag(not t.context) if _context(t) else None,
        "mean",
        "share of contexts with no chunk",
        NO_CONTEXT,
        False,
    ),
    Signal(
        "ContextSize",
        K,
        lambda t: float(len(t.context or ())) if _context(t) else None,
        "mean",
        "mean chunks handed to the generator",
        NO_CONTEXT,
    ),
    Signal(
        "RankMovement",
        K,
        _moved,
        "mean",
        "mean places a context chunk moved from its pool rank",
        NO_RERANK,
    ),
    Signal(
        "PromotedShare",
        K,
        _promoted,
        "mean",
        "share of context chunks from below the pool's first len(context)",
        NO_RERANK,
    ),
    Signal(
        "Top1Dropped",
        K,
        _top1_dropped,
        "mean",
        "share of reranked traces whose pool's first chunk is not in the context",
        NO_RERANK,
        False,
    ),
    Signal(
        "LatencyP50",
        G,
        _latency(G),
        "p50",
        "median seconds in generation",
        "no LLM span in the window",
        False,
    ),
    Signal(
        "LatencyP95",
        G,
        _latency(G),
        "p95",
        "95th percentile seconds in generation",
        "no LLM span in the window",
        False,
    ),
    Signal(
        "ErrorRate",
        G,
        _error(G),
        "mean",
        "share of traces whose generator raised",
        "no trace reached generation",
        False,
    ),
    Signal(
        "EmptyAnswerRate",
        G,
        lambda t: None if t.answer is None else _flag(not t.answer.strip()),
        "mean",
        "share of answers that are empty",
        NO_ANSWER,
        False,
    ),
    Signal(
        "AnswerChars",
        G,
        lambda t: None if t.answer is None else float(len(t.answer)),
        "mean",
        "mean answer length in characters",
        NO_ANSWER,
    ),
    Signal(
        "RefusalRate",
        G,
        _refused,
        "mean",
        "share of answers that decline as a whole (cofe.refusal)",
        NO_ANSWER,
        False,
    ),
    Signal(
        "DeclineRate",
        G,
        _declines,
        "mean",
        "share of answers that decline all or part of what is asked (cofe.refusal)",
        NO_ANSWER,
        False,
    ),
)
OTHER_TRACES = "OtherTraces"  # traces with no retriever, reranker or LLM span (index building)


def find_signal(stage: str, name: str) -> Signal:
    for signal in SIGNALS:
        if (signal.stage, signal.name) == (stage, name):
            return signal
    known = ", ".join(f"{s.stage}/{s.name}" for s in SIGNALS)
    raise InputError(f"no label-free signal {stage}/{name}; known: {known}")


def compute_signals(traces: Sequence[TraceRecord]) -> list[tuple[str, str, Value]]:
    """``(stage, name, value)`` of every signal over the window's query traces, and how many
    other traces came."""
    queries = [t for t in traces if t.is_query]
    other = len(traces) - len(queries)
    rows = [(s.stage, s.name, s.compute(queries)) for s in SIGNALS]
    rows.append((ALL, OTHER_TRACES, Value(float(other), other)))
    return rows
