"""Label-free signals of each stage, computed over the traces of one time window.

A signal is a small value object: its ``name`` is the column and the CLI spelling,
its ``stage`` the stage it watches. ``compute`` returns a value with the number of
traces it was computed over, or ``None`` with the reason (never a silent NaN).
The judged signals (``Faithfulness``, ``AnswerRelevancy``) are the judges' own
measure objects applied to the judged share of traffic (``cofe.monitor._judged``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cofe.monitor._assemble import TraceRecord
from cofe.runlog import Stage

ALL = "all"  # signals of whole traces, not of one stage
STAGES = (ALL, Stage.RETRIEVAL.value, Stage.RERANKING.value, Stage.GENERATION.value)


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


def _share(hits: Sequence[bool], none: str) -> Value:
    return Value(sum(hits) / len(hits), len(hits)) if hits else Value(None, 0, none)


def _mean(values: Sequence[float], none: str) -> Value:
    return Value(sum(values) / len(values), len(values)) if values else Value(None, 0, none)


def _reached(traces: Sequence[TraceRecord], stage: Stage) -> list[TraceRecord]:
    return [t for t in traces if stage in t.stages or t.error_stage is stage]


def _latency(stage: Stage | None, q: float) -> Callable[[Sequence[TraceRecord]], Value]:
    def compute(traces: Sequence[TraceRecord]) -> Value:
        if stage is None:
            seconds = [(t.ended_ns - t.started_ns) / 1e9 for t in traces]
        else:
            seconds = [t.latency[stage] for t in traces if stage in t.latency]
        if not seconds:
            return Value(None, 0, f"no trace in the window has a {stage or 'trace'} span")
        return Value(quantile(seconds, q), len(seconds))

    return compute


def _error_rate(stage: Stage) -> Callable[[Sequence[TraceRecord]], Value]:
    def compute(traces: Sequence[TraceRecord]) -> Value:
        reached = _reached(traces, stage)
        return _share([t.error_stage is stage for t in reached], f"no trace reached {stage}")

    return compute


def _ranks_moved(t: TraceRecord) -> list[float]:
    """Per context item found in the pool: how many places it moved (pool rank - context rank)."""
    pool_rank = {d.chunk_id: i for i, d in enumerate(t.pool or ())}
    return [abs(pool_rank[d.chunk_id] - i) for i, d in enumerate(t.context or ())
            if d.chunk_id in pool_rank]  # fmt: skip


def _promoted(t: TraceRecord) -> list[bool]:
    """Per context item: it came from below the pool's first len(context) places."""
    k = len(t.context or ())
    pool_rank = {d.chunk_id: i for i, d in enumerate(t.pool or ())}
    return [pool_rank.get(d.chunk_id, k) >= k for d in t.context or ()]


def _reranked(traces: Sequence[TraceRecord]) -> list[TraceRecord]:
    return [t for t in traces if Stage.RERANKING in t.stages and t.pool and t.context is not None
            and t.error_stage is not Stage.RERANKING]  # fmt: skip


def _answered(traces: Sequence[TraceRecord]) -> list[TraceRecord]:
    return [t for t in traces if t.answer is not None]


def _refusals(traces: Sequence[TraceRecord]) -> Value:
    from cofe.diagnose import is_refusal

    answers = [t.answer for t in _answered(traces) if t.answer is not None]
    return _share([is_refusal(a) for a in answers], "no answer in the window")


def _scores(traces: Sequence[TraceRecord], q: float) -> Value:
    scores = [d.score for t in traces for d in t.pool or () if d.score is not None]
    if not scores:
        return Value(None, 0, "no pool in the window lists scores")
    return Value(quantile(scores, q), sum(1 for t in traces if t.pool))


@dataclass(frozen=True)
class Signal:
    name: str
    stage: str
    compute: Callable[[Sequence[TraceRecord]], Value]
    description: str
    higher_is_better: bool | None = None  # None: neither (a shift either way matters)


OTHER_TRACES = Signal("OtherTraces", ALL, lambda ts: Value(None, 0),
                      "traces with no retriever, reranker or LLM span (index building, ...)")
R, K, G = Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION
SIGNALS: tuple[Signal, ...] = (
    Signal("Traces", ALL, lambda ts: Value(float(len(ts)), len(ts)), "query traces in the window"),
    Signal("ProblemRate", ALL,
           lambda ts: _share([bool(t.problems) for t in ts], "no trace in the window"),
           "share of traces missing a part (no root, no retriever span, no documents, ...)",
           False),
    Signal("LatencyP50", ALL, _latency(None, 0.5), "median seconds per trace", False),
    Signal("LatencyP95", ALL, _latency(None, 0.95), "95th percentile seconds per trace", False),
    Signal("LatencyP50", R, _latency(R, 0.5), "median seconds in retrieval", False),
    Signal("LatencyP95", R, _latency(R, 0.95), "95th percentile seconds in retrieval", False),
    Signal("ErrorRate", R, _error_rate(R), "share of traces whose retriever raised", False),
    Signal("EmptyPoolRate", R,
           lambda ts: _share([not t.pool for t in ts if t.pool is not None],
                             "no pool recorded in the window"),
           "share of recorded pools with no chunk", False),
    Signal("PoolSize", R,
           lambda ts: _mean([len(t.pool) for t in ts if t.pool is not None],
                            "no pool recorded in the window"),
           "mean chunks per pool"),
    Signal("TopScore", R,
           lambda ts: _mean([t.pool[0].score for t in ts if t.pool and t.pool[0].score is not None],
                            "no pool in the window lists scores"),
           "mean score of the first chunk of the pool"),
    Signal("ScoreP10", R, lambda ts: _scores(ts, 0.1), "10th percentile of pool scores"),
    Signal("ScoreP50", R, lambda ts: _scores(ts, 0.5), "median pool score"),
    Signal("ScoreP90", R, lambda ts: _scores(ts, 0.9), "90th percentile of pool scores"),
    Signal("LatencyP50", K, _latency(K, 0.5), "median seconds in reranking", False),
    Signal("LatencyP95", K, _latency(K, 0.95), "95th percentile seconds in reranking", False),
    Signal("ErrorRate", K, _error_rate(K), "share of traces whose reranker raised", False),
    Signal("EmptyContextRate", K,
           lambda ts: _share([not t.context for t in ts if t.context is not None
                              and t.error_stage not in (R, K)], "no context recorded"),
           "share of contexts with no chunk", False),
    Signal("ContextSize", K,
           lambda ts: _mean([len(t.context) for t in ts if t.context is not None
                             and t.error_stage not in (R, K)], "no context recorded"),
           "mean chunks handed to the generator"),
    Signal("RankMovement", K,
           lambda ts: _mean([sum(m) / len(m) for t in _reranked(ts) if (m := _ranks_moved(t))],
                            "no reranked context in the window"),
           "mean places a context chunk moved from its pool rank"),
    Signal("PromotedShare", K,
           lambda ts: _mean([sum(p) / len(p) for t in _reranked(ts) if (p := _promoted(t))],
                            "no reranked context in the window"),
           "share of context chunks from below the pool's first len(context)"),
    Signal("Top1Dropped", K,
           lambda ts: _share([t.pool[0].chunk_id not in {d.chunk_id for d in t.context or ()}
                              for t in _reranked(ts)], "no reranked context in the window"),
           "share of reranked traces whose pool's first chunk is not in the context"),
    Signal("LatencyP50", G, _latency(G, 0.5), "median seconds in generation", False),
    Signal("LatencyP95", G, _latency(G, 0.95), "95th percentile seconds in generation", False),
    Signal("ErrorRate", G, _error_rate(G), "share of traces whose generator raised", False),
    Signal("EmptyAnswerRate", G,
           lambda ts: _share([not (t.answer or "").strip() for t in _answered(ts)],
                             "no answer in the window"),
           "share of answers that are empty", False),
    Signal("AnswerChars", G,
           lambda ts: _mean([len(t.answer or "") for t in _answered(ts)], "no answer in the window"),
           "mean answer length in characters"),
    Signal("RefusalRate", G, _refusals, "share of answers that decline (cofe.diagnose's rule)",
           False),
)  # fmt: skip


def compute_signals(traces: Sequence[TraceRecord]) -> list[tuple[Signal, Value]]:
    """Every signal over the window's query traces, and how many other traces came."""
    queries = [t for t in traces if t.is_query]
    other = len(traces) - len(queries)
    rows = [(signal, signal.compute(queries)) for signal in SIGNALS]
    rows.append((OTHER_TRACES, Value(float(other), other)))
    return rows
