"""The judges' label-free measures on a sampled share of live traffic, within a call budget.

Traffic has no keywords and no reference answer, so only measures that need
neither apply: ``Faithfulness`` (the answer's claims against the context the
generator saw) and ``AnswerRelevancy``. They are asked for through the judges'
own measure objects: the judge labels a trace exactly as ``cofe judge`` labels a
sample (``judge_one``), and the measure reads the labels (``labels_of``).

Which traces are judged is decided by the trace id (a hash below the share), so
the sample is the same whichever process looks, and a trace is judged once.

``steps``: the judges' step mode (``cofe judge --steps``, the local model's default, where it
was measured to separate right from wrong answers far better): the claims call, then one call
per claim. Its judgements are a judge of their own -- stored under the model's name with
``+steps`` -- with their own controls. Its cost per trace is not known before the claims
call; the budget is met on an estimate, a claim per sentence of the answer, and the calls
made are reported.

A judge that cannot tell a supported answer from an unsupported one prints numbers that
measure nothing. So before its first traffic, a judge (model and prompt version) is tried
on known-answer controls made from the traffic itself (``traffic_controls``: sentences
copied from a trace's context against another trace's answer); the store keeps what they
said (``judge_gates``), and a measure the judge failed is shown unscored, with the reason,
in every window -- its values are kept, and shown again if the judge later passes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cofe._errors import InputError
from cofe.measures import AnswerRelevancy, Faithfulness, Measure, Step, StepView
from cofe.runlog import Stage

if TYPE_CHECKING:
    from cofe.llm import LLMClient
    from cofe.monitor.store import MonitorStore

LABEL_FREE: tuple[Measure, ...] = (Faithfulness(), AnswerRelevancy())
CALLS_PER_TRACE = 2  # the judge's claims call, then its checks call (the dense mode)


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
    control_calls: int = 0  # of ``calls``, those the known-answer controls took
    # per label-free measure, what the controls say ("AUC 0.95 over 10 pairs: scored"), or
    # {"controls": why there is no gate}
    controls: dict[str, str] = field(default_factory=dict)


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
    controls: int = 10,
    steps: bool = False,
) -> JudgeTrafficReport:
    """Judge the sampled share of answered traffic traces not judged yet, oldest first,
    stopping before the calls would exceed ``budget`` (and after ``limit`` traces); windows
    they fall in are refreshed. An endpoint that stops answering ends the pass with
    ``EndpointDown``: the traces it could not judge are not stored, so the next pass takes
    them.

    ``controls``: pairs of known-answer controls judged first, out of the budget, when this
    judge has none in the store yet (0: none; their gate then says nothing)."""
    from cofe._parallel import thread_map
    from cofe.judges import judge_one, labels_of, unscored_labels

    if not 0 < share <= 1:
        raise InputError(f"the judged share must be in (0, 1], not {share}")
    if budget < CALLS_PER_TRACE:
        raise InputError(
            f"a call budget below {CALLS_PER_TRACE} judges nothing (one trace "
            f"takes {CALLS_PER_TRACE} calls)"
        )
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, not {limit}")
    unjudged = store.judgements.unjudged_traffic(since_ns)
    candidates = [t for t in unjudged if sampled(t, share)]
    report = JudgeTrafficReport()
    version = _version()
    judge_name = judge_of(client, steps)
    gate = store.judgements.gate(judge_name, version)
    if gate is None and controls > 0:
        budget -= _judge_controls(
            store, client, unjudged, controls, budget, report, embedder, concurrency, steps
        )
        gate = store.judgements.gate(judge_name, version)
    if gate is not None:
        report.controls = {m: _gate_line(m, gate) for m in gate}
    elif not report.controls:
        report.controls = {"controls": _NOT_GATED}
    # every trace costs CALLS_PER_TRACE calls at least: no more than this many can be afforded
    most = max(0, budget) // CALLS_PER_TRACE
    read = {t.trace_id: t for t in store.traces.by_id(candidates[:most], with_text=True)}
    looked = [read[i] for i in candidates[:most] if i in read]  # oldest first, as chosen
    affordable, spent = 0, 0
    for trace in looked:
        spent += _cost(trace.answer, steps)
        if spent > budget:
            break
        affordable += 1
    report.skipped_budget = max(0, len(candidates) - affordable)
    taken = affordable if limit is None else min(affordable, limit)
    report.skipped_limit = max(0, min(len(candidates), affordable) - taken)
    items = list(_inputs(looked[:taken]))

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
        store.judgements.add(
            [
                dict(
                    zip(("trace_id", "measure", "value", "reason"), row, strict=True),
                    model=judge_name,
                    judged_ns=now,
                )
                for row in rows
            ],
            [("traffic", store.window_of(trace.started_ns))],
        )

    def judge(pair: tuple[Any, Any]) -> tuple[Any, Any, bool]:
        judgement = judge_one(client, pair[1], embedder, steps=steps)
        return pair[0], judgement, client.last_call_unreachable()  # in the judging thread

    thread_map(judge, items, finished, concurrency=concurrency)
    # the last traces could not reach the endpoint, too few to stop the pass midway: they
    # are not stored, and the exit says so
    client.check_endpoint(
        f"{report.judged} trace(s) judged and stored in this pass: run `cofe monitor judge` "
        "again for the rest",
        at_least=1,
    )
    return report


_NOT_GATED = (
    "not gated: no known-answer controls were judged for this judge (cofe monitor judge "
    "--controls N needs that many answered traces with a context)"
)


def judge_of(client: LLMClient, steps: bool) -> str:
    """The judge a trace's values and the controls' gate are stored under: the model, and
    ``+steps`` in the step mode (other calls, other labels: a judge of its own)."""
    from cofe.judges import STEPWISE_SUFFIX

    return client.endpoint.model + (STEPWISE_SUFFIX if steps else "")


def _cost(answer: str | None, steps: bool) -> int:
    """The calls judging an answer takes: two in the dense mode; in the step mode the claims
    call and one per claim, estimated as one per sentence of the answer."""
    if not steps:
        return CALLS_PER_TRACE
    from cofe.judges import reference_claims as sentences

    return 1 + max(1, len(sentences(answer)))


def _version() -> str:
    from cofe.judges import PROMPT_VERSION

    return PROMPT_VERSION


def _gate_line(measure: str, gate: dict[str, tuple[float | None, int, str | None]]) -> str:
    value, pairs, failed = gate[measure]
    if value is None:
        return f"unscored: {failed}" if failed else f"not gated: valued on {pairs} control pairs"
    return f"AUC {value:.2f} over {pairs} pairs: {'unscored' if failed else 'scored'}"


def _inputs(traces: Sequence[Any]) -> Iterator[tuple[Any, Any]]:
    """Each answered trace with what the judge reads of it."""
    from cofe.evalset import EvalSample
    from cofe.judges import JudgeInputs

    for trace in traces:
        if trace.query is None or trace.answer is None:
            continue
        sample = EvalSample(id=trace.trace_id, query=trace.query)
        chunks = tuple(d.text or "" for d in trace.context or ())
        yield (
            trace,
            JudgeInputs(
                sample, trace.answer, chunks, None, "live traffic has no source document", None
            ),
        )


def _judge_controls(
    store: MonitorStore,
    client: LLMClient,
    unjudged: Sequence[str],
    pairs: int,
    budget: int,
    report: JudgeTrafficReport,
    embedder: Any,
    concurrency: int,
    steps: bool = False,
) -> int:
    """Judge known-answer controls from recent traffic and store their gate; the calls they
    took (none when the traffic or the budget cannot hold them: ``report.controls`` says
    why)."""
    from cofe._parallel import thread_map
    from cofe.judges import control_gate, judge_one, labels_of, traffic_controls

    # traces spread over the newest few hundred: enough to pair, one read
    recent = list(unjudged[-max(8 * pairs, 64) :])
    items = [inputs for _, inputs in _inputs(store.traces.by_id(recent, with_text=True))]
    wanted = traffic_controls(items, pairs)
    if not wanted:
        report.controls = {"controls": _NOT_GATED}
        return 0
    cost = sum(_cost(item.answer, steps) for item in wanted)
    if cost > budget:
        report.controls = {
            "controls": f"not gated: the controls take {cost} calls, "
            f"over the budget of {budget} (raise --budget once, or --controls 0)"
        }
        return 0
    judged: list[Any] = []
    unreached: list[Any] = []

    def finished(done: tuple[Any, bool]) -> None:
        judgement, unreachable = done
        report.calls += judgement.calls
        report.control_calls += judgement.calls
        if unreachable:
            unreached.append(judgement)
            client.check_endpoint("no control was stored: run `cofe monitor judge` again")
        judged.append(judgement)

    def judge(item: Any) -> tuple[Any, bool]:
        return judge_one(client, item, embedder, steps=steps), client.last_call_unreachable()

    thread_map(judge, wanted, finished, concurrency=concurrency)
    if unreached:  # an outage is not the judge's failing: no gate, the next pass asks again
        report.controls = {
            "controls": f"not gated yet: {len(unreached)} control(s) could not reach the "
            "endpoint; the next pass judges the controls again"
        }
        return report.control_calls
    gate = control_gate(judged, labels_of, model=client.endpoint.model, traffic=True)
    failed = dict(gate.failed)
    if gate.note:  # too few controls came back labelled: this judge's labels are not usable
        unlabelled = sum(j.status != "judged" for j in judged)
        why = (
            f"the judge labelled too few of its known-answer controls ({unlabelled} of "
            f"{len(judged)} unscored: see `cofe monitor judge`'s reasons); its values would "
            "rank windows on noise"
        )
        failed = {m.name: why for m in LABEL_FREE}
    store.judgements.set_gate(
        judge_of(client, steps),
        _version(),
        [(m.name, *gate.figures.get(m.name, (None, 0)), failed.get(m.name)) for m in LABEL_FREE],
    )
    return report.control_calls


def judged_signals(
    store: MonitorStore, trace_ids: Sequence[str]
) -> list[tuple[str, str, float | None, int, str | None]]:
    """``(stage, signal, value, n, note)`` per label-free judged measure over the judged
    traces among ``trace_ids`` -- a judge that failed its controls on a measure counts for
    nothing there, and the note says why."""
    values: dict[str, list[float]] = {m.name: [] for m in LABEL_FREE}
    reasons: dict[str, dict[str, int]] = {m.name: {} for m in LABEL_FREE}
    gates: dict[str, dict[str, tuple[float | None, int, str | None]] | None] = {}
    for name, value, reason, model in store.judgements.of(trace_ids):
        if name not in values:
            continue
        if model not in gates:
            gates[model] = store.judgements.gate(model, _version())
        failed = (gates[model] or {}).get(name, (None, 0, None))[2]
        if failed:
            reason, value = failed, None
        if value is not None:
            values[name].append(float(value))
        else:
            reasons[name][reason or "?"] = reasons[name].get(reason or "?", 0) + 1
    rows: list[tuple[str, str, float | None, int, str | None]] = []
    for measure in LABEL_FREE:
        got = values[measure.name]
        if got:
            ungated = [m for m, g in gates.items() if g is None]
            note = (
                f"not gated: judge {', '.join(sorted(ungated))} has no controls"
                if ungated
                else None
            )
            rows.append((Stage.GENERATION.value, measure.name, sum(got) / len(got), len(got), note))
        else:
            why = reasons[measure.name]
            note = (
                f"no judged trace had a value ({max(why, key=why.__getitem__)})"
                if why
                else "no trace of the window was judged (cofe monitor judge)"
            )
            rows.append((Stage.GENERATION.value, measure.name, None, 0, note))
    return rows
