"""The judges' label-free measures on a sampled share of live traffic, within a call budget.

Traffic has no keywords and no reference answer, so only measures that need
neither apply: ``Faithfulness`` (the answer's claims against the context the
generator saw) and ``AnswerRelevancy``. They are asked for through the judges'
own measure objects: the judge labels a trace exactly as ``cofe judge`` labels a
sample (``judge_one``), and the measure reads the labels (``labels_of``).

Which traces are judged is decided by the trace id (a hash below the share), so
the sample is the same whichever process looks, and a trace is judged once.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cofe.measures import AnswerRelevancy, Faithfulness, Measure, Step, StepView
from cofe.runlog import Stage

if TYPE_CHECKING:
    from cofe.llm import LLMClient
    from cofe.monitor.store import MonitorStore

LABEL_FREE: tuple[Measure, ...] = (Faithfulness(), AnswerRelevancy())
CALLS_PER_TRACE = 2  # the judge's claims call, then its checks call


def sampled(trace_id: str, share: float) -> bool:
    """The trace is in the judged share: a stable hash of its id, below ``share``."""
    digest = hashlib.sha256(trace_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


@dataclass
class JudgeTrafficReport:
    judged: int = 0
    unscored: int = 0
    skipped_budget: int = 0  # sampled traces left for a later run by the call budget
    skipped_limit: int = 0  # ... and by ``limit``
    calls: int = 0  # requests sent, answered or not (a timed-out request is a call too)
    reasons: dict[str, int] = field(default_factory=dict)


def judge_traffic(
    store: MonitorStore,
    client: LLMClient,
    *,
    share: float,
    budget: int,
    since_ns: int = 0,
    embedder: Any = None,
    concurrency: int = 4,
    limit: int | None = None,
) -> JudgeTrafficReport:
    """Judge the sampled share of answered traffic traces not judged yet, oldest first,
    stopping before the calls would exceed ``budget`` (and after ``limit`` traces); windows
    they fall in are refreshed. An endpoint that stops answering ends the pass with
    ``EndpointDown``: the traces it could not judge are not stored, so the next pass takes
    them."""
    from cofe._parallel import thread_map
    from cofe.evalset import EvalSample
    from cofe.judges import JudgeInputs, judge_one, labels_of, unscored_labels

    if not 0 < share <= 1:
        raise ValueError(f"the judged share must be in (0, 1], not {share}")
    if budget < CALLS_PER_TRACE:
        raise ValueError(
            f"a call budget below {CALLS_PER_TRACE} judges nothing (one trace "
            f"takes {CALLS_PER_TRACE} calls)"
        )
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    candidates = [t for t in store.unjudged_traffic(since_ns) if sampled(t, share)]
    report = JudgeTrafficReport()
    affordable = budget // CALLS_PER_TRACE
    report.skipped_budget = max(0, len(candidates) - affordable)
    taken = affordable if limit is None else min(affordable, limit)
    report.skipped_limit = max(0, min(len(candidates), affordable) - taken)
    chosen = store.traces_by_id(candidates[:taken], with_text=True)  # one read, not one each
    items = []
    for trace in chosen:
        if trace.query is None or trace.answer is None:
            continue
        sample = EvalSample(id=trace.trace_id, query=trace.query)
        chunks = tuple(d.text or "" for d in trace.context or ())
        items.append(
            (
                trace,
                JudgeInputs(
                    sample, trace.answer, chunks, None, "live traffic has no source document", None
                ),
            )
        )

    def finished(done: tuple[Any, Any, bool]) -> None:
        trace, judgement, unreachable = done
        report.calls += judgement.calls
        if judgement.status == "judged":
            report.judged += 1
            view = StepView(Step.ANSWER, (), claims=labels_of(judgement))
        else:
            report.unscored += 1
            key = (judgement.reason or "").split(":")[0]
            report.reasons[key] = report.reasons.get(key, 0) + 1
            if unreachable:  # not stored: the trace is judged once the endpoint is back
                client.check_endpoint(
                    f"stopped after judging {report.judged} trace(s) in this pass; they are "
                    "stored: run `cofe monitor judge` again to resume"
                )
                return
            # the judge's calls failed, but AnswerRelevancy may be computed all the same
            view = StepView(Step.ANSWER, (), claims=unscored_labels(judgement))
        rows = []
        for measure in LABEL_FREE:
            value = measure.evaluate(view)
            number = float(value) if isinstance(value, float | int) else None
            reason = value.reason if not isinstance(value, float | int) else None
            rows.append(
                (trace.trace_id, measure.name, number, None if reason is None else str(reason))
            )
        now = time.time_ns()
        store.add_judgements(
            [
                dict(
                    zip(("trace_id", "measure", "value", "reason"), row, strict=True),
                    model=client.endpoint.model,
                    judged_ns=now,
                )
                for row in rows
            ],
            [("traffic", store.window_of(trace.started_ns))],
        )

    def judge(pair: tuple[Any, Any]) -> tuple[Any, Any, bool]:
        judgement = judge_one(client, pair[1], embedder)
        return pair[0], judgement, client.last_call_unreachable()  # in the judging thread

    thread_map(judge, items, finished, concurrency=concurrency)
    return report


def judged_signals(
    store: MonitorStore, trace_ids: Sequence[str]
) -> list[tuple[str, str, float | None, int, str | None]]:
    """``(stage, signal, value, n, note)`` per label-free judged measure over the judged
    traces among ``trace_ids``."""
    values: dict[str, list[float]] = {m.name: [] for m in LABEL_FREE}
    reasons: dict[str, dict[str, int]] = {m.name: {} for m in LABEL_FREE}
    for name, value, reason in store.judgements_of(trace_ids):
        if name not in values:
            continue
        if value is not None:
            values[name].append(float(value))
        else:
            reasons[name][reason or "?"] = reasons[name].get(reason or "?", 0) + 1
    rows: list[tuple[str, str, float | None, int, str | None]] = []
    for measure in LABEL_FREE:
        got = values[measure.name]
        if got:
            rows.append((Stage.GENERATION.value, measure.name, sum(got) / len(got), len(got), None))
        else:
            why = reasons[measure.name]
            note = (
                f"no judged trace had a value ({max(why, key=why.__getitem__)})"
                if why
                else "no trace of the window was judged (cofe monitor judge)"
            )
            rows.append((Stage.GENERATION.value, measure.name, None, 0, note))
    return rows
