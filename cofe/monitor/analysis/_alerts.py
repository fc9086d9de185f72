"""Alerts that name the stage: rules over the store's series, tested like ``cofe compare``.

A rule watches one stage and one measure, either of the **canaries** (per round; the
verdict shares ``VERDICT@STAGE`` -- e.g. ``cut_by_rerank@reranking`` --, ``lost@STAGE``
(any loss blamed on the stage) and ``refused@generation`` are tested per sample, paired
with the same samples in the baseline rounds) or of the **traffic** (a label-free signal
per window, e.g. ``reranking`` / ``Top1Dropped``, tested on its per-trace values against
the baseline windows). ``kind = "change"`` fires on a significant change in the bad
``direction`` (p < alpha, at least ``min_effect`` -- for traffic, over the whole 95 % interval
of the change --, ``min_samples`` on each side);
``kind = "threshold"`` fires when the window's value crosses ``above``/``below``. A
``cooldown`` keeps one change from paging twice; a window is never alerted twice by a rule.
A traffic rule is tested on every complete window not yet evaluated, oldest first: those
since the last round of a long-running evaluator (``since_ns``), else the last
``CATCH_UP_WINDOWS`` (a change that lasted two windows between two cron runs still fires).

Each alert carries the change with its 95 % CI and p-value and example cases of the
window that show the loss: canary cases with their verdict and evidence, or traffic
traces with their label-free values.
"""

from __future__ import annotations

import bisect
import json
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from cofe.compare import choose_inference
from cofe.monitor.analysis._rules import (
    DEFAULT_RULES,
    AlertRule,
    duration_seconds,
    load_rules,
    rules_toml,
)
from cofe.monitor.analysis._signals import STATISTICS, find_signal
from cofe.monitor.analysis._unpaired import unpaired_change
from cofe.monitor.store import CANARY, TRAFFIC, MonitorStore

__all__ = [
    "DEFAULT_RULES",
    "Alert",
    "AlertRule",
    "Evaluation",
    "duration_seconds",
    "evaluate",
    "evaluate_alerts",
    "load_rules",
    "rules_toml",
    "unpaired_change",
]

LOSS_EXCLUDED = ("pipeline_error", "unscorable")  # not losses of information by a stage
CATCH_UP_WINDOWS = 12  # complete windows a one-off evaluation tests (an hour of 5-minute ones)


@dataclass
class Alert:
    alert_id: str
    rule: str
    fired_ns: int
    origin: str
    stage: str
    measure: str
    severity: str
    window_start_ns: int
    window_end_ns: int
    baseline: float | None
    current: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    message: str
    examples: list[dict[str, Any]] = field(default_factory=list)
    baseline_from_ns: int | None = None  # where the baseline a change was tested on began

    def line(self) -> str:
        when = datetime.fromtimestamp(self.window_start_ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M")
        return f"cofe alert [{self.severity}] {self.stage}: {self.message} (window {when} UTC)"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _bad(rule: AlertRule, difference: float, baseline: float) -> bool:
    """A canary change is at least ``min_effect`` the bad way (its estimate: the rounds are
    paired on the same questions)."""
    if rule.relative:
        difference = difference / abs(baseline) if baseline else math.copysign(math.inf, difference)
    if rule.direction == "up":
        return difference >= rule.min_effect
    if rule.direction == "down":
        return -difference >= rule.min_effect
    return abs(difference) >= rule.min_effect


def _surely_bad(rule: AlertRule, low: float, high: float, baseline: float) -> bool:
    """A traffic change is at least ``min_effect`` the bad way over its whole 95 % interval.

    A window's value depends on which queries came as well as on the pipeline: its estimate
    of a change carries that sampling noise, and an estimate just past ``min_effect`` is as
    likely to be a smaller change (or none) that this window's queries exaggerated. Asking
    the interval's near end to reach ``min_effect`` makes a rule say what it is written to
    say -- a change of at least that much -- with 95 % confidence rather than 50 %."""
    effect = rule.min_effect * abs(baseline) if rule.relative else rule.min_effect
    rose, fell = low >= effect, high <= -effect
    if rule.direction == "up":
        return rose
    if rule.direction == "down":
        return fell
    return rose or fell


def _fmt(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3g}"


# --- canaries ------------------------------------------------------------------------------


def _rounds(store: MonitorStore, now_ns: int, count: int) -> list[tuple[str, int, int]]:
    """The newest round and up to ``count - 1`` before it that answered the same eval set
    (an edited golden set starts a new baseline: its samples are not the same questions)."""
    rounds = store.canaries.rounds(finished_by_ns=now_ns, newest_first=True)
    if not rounds:
        return []
    same = [
        (r.round_id, r.started_ns, r.finished_ns)
        for r in rounds
        if r.evalset_sha256 == rounds[0].evalset_sha256
    ]
    return list(reversed(same[:count]))


def _sample_values(store: MonitorStore, round_id: str, measure: str) -> dict[str, float]:
    """Per sample of the round: its value of ``step/Measure`` (as scored), or of a verdict
    share -- 1 when its verdict is ``VERDICT@STAGE`` (``lost@STAGE``: any loss blamed on it)."""
    if "/" in measure:
        step, name = measure.split("/", 1)
        return store.canaries.sample_scores(round_id, step, name)
    verdict, stage = measure.split("@", 1)
    out = {}
    for case in store.canaries.cases(round_id):
        if verdict == "lost":
            hit = case.stage == stage and case.verdict not in LOSS_EXCLUDED
        else:
            hit = case.verdict == verdict and (case.stage or "none") == stage
        out[case.sample_id] = 1.0 if hit else 0.0
    return out


def _canary_examples(
    store: MonitorStore, round_id: str, measure: str, changed: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """Cases of the round that show the change: the samples whose value moved most the bad
    way (``changed``: per sample, current - baseline), else those with the verdict."""
    if changed is not None:
        hits = [s for s, d in sorted(changed.items(), key=lambda x: x[1]) if d < 0][:5]
    else:
        flags = _sample_values(store, round_id, measure)
        hits = sorted(s for s, v in flags.items() if v)[:5]
    if not hits:
        return []
    return [
        {
            "round_id": round_id,
            "sample_id": case.sample_id,
            "trace_id": case.trace_id,
            "query": case.query,
            "verdict": case.verdict,
            "stage": case.stage,
            "evidence": json.loads(case.evidence).get("explanation"),
        }
        for case in store.canaries.cases(round_id, hits)
    ]


def _evaluate_canary(
    store: MonitorStore, rule: AlertRule, now_ns: int, seen: set[str] | None = None
) -> Alert | None:
    rounds = _rounds(store, now_ns, rule.baseline + 1)
    if seen is not None:
        seen.update(r[0] for r in rounds)
    if not rounds:
        return None
    current_id, start, end = rounds[-1]
    if rule.kind == "threshold":
        if "@" in rule.measure or "/" in rule.measure:  # a verdict share, or step/Measure
            values = list(_sample_values(store, current_id, rule.measure).values())
            value, n = (sum(values) / len(values) if values else None), len(values)
        else:  # a measure name as the round's summary lists it (step= picks among steps)
            found = store.canaries.measure(current_id, rule.measure, rule.stage, rule.step)
            value, n = found if found is not None else (None, 0)
        if value is None or n < rule.min_samples:
            return None
        value = float(value)
        if not _crossed(rule, value):
            return None
        examples = (
            _canary_examples(store, current_id, rule.measure)
            if "@" in rule.measure.split("/")[0]
            else []
        )
        return _alert(
            rule,
            CANARY,
            (start, end),
            value,
            f"{rule.measure} is {_fmt(value)} in canary round {current_id} ({_limits(rule)})",
            examples,
        )
    if len(rounds) < 2:
        return None
    current = _sample_values(store, current_id, rule.measure)
    before = [_sample_values(store, r[0], rule.measure) for r in rounds[:-1]]
    shared = sorted(set(current).intersection(*before))
    if len(shared) < rule.min_samples:
        return None
    now = np.array([current[s] for s in shared])
    then = np.array([sum(b[s] for b in before) / len(before) for s in shared])
    # the comparisons' one rule; the store keeps no canary sample's source document, so
    # the samples are the units (the alert holds for the canary set's documents)
    test = choose_inference(None, questions=len(shared)).paired(now, then)
    diff = test.difference.estimate
    if not (test.p_value < rule.alpha and _bad(rule, diff, float(then.mean()))):
        return None
    return _alert(
        rule,
        CANARY,
        (start, end),
        float(now.mean()),
        f"{rule.measure} {_fmt(then.mean())} -> {_fmt(now.mean())} ({diff:+.3g}, 95% CI "
        f"[{_fmt(test.difference.low)}, {_fmt(test.difference.high)}], p={test.p_value:.2g}, "
        f"{test.test}; {len(shared)} canary samples, round {current_id} vs the {len(before)} "
        f"before)",
        _canary_examples(
            store,
            current_id,
            rule.measure,
            None if "@" in rule.measure else _moved(rule, shared, now, then),
        ),
        (float(then.mean()), test.difference.low, test.difference.high, test.p_value),
        baseline_from=rounds[0][1],
    )


def _moved(
    rule: AlertRule, samples: list[str], now: np.ndarray, then: np.ndarray
) -> dict[str, float]:
    """Per sample, how far it moved the bad way (negative: worse), for choosing examples."""
    sign = -1.0 if rule.direction == "down" else 1.0
    return {s: -sign * float(a - b) for s, a, b in zip(samples, now, then, strict=True)}


# --- traffic -------------------------------------------------------------------------------


def _traffic_examples(rule: AlertRule, traces: Sequence[Any]) -> list[dict[str, Any]]:
    signal = find_signal(rule.stage, rule.measure)
    valued = [(v, t) for t in traces if (v := signal.of(t)) is not None]
    valued.sort(key=lambda vt: vt[0], reverse=rule.direction != "down")
    return [
        {
            "trace_id": t.trace_id,
            "query": t.query,
            rule.measure: v,
            "answer": (t.answer or "")[:300],
            "stages": [s.value for s in t.stages],
            "error": t.error,
            "problems": t.problems,
        }
        for v, t in valued[:5]
    ]


def _evaluate_traffic(
    store: MonitorStore, rule: AlertRule, now_ns: int, queries: Callable[[int, int], list[Any]]
) -> Alert | None:
    signal = find_signal(rule.stage, rule.measure)
    end = store.window_of(now_ns)
    start = end - store.window_ns
    current_traces = queries(start, end)
    current = signal.values(current_traces)
    counted = signal.statistic == "count"  # a count is a value even at zero (traffic stopped)
    if len(current) < rule.min_samples and not counted:
        return None
    if rule.kind == "threshold":
        value = STATISTICS[signal.statistic](current)
        if not _crossed(rule, value):
            return None
        return _alert(
            rule,
            TRAFFIC,
            (start, end),
            value,
            f"{rule.measure} is {_fmt(value)} over {len(current)} traces ({_limits(rule)})",
            _traffic_examples(rule, current_traces),
        )
    base_start = start - rule.baseline * store.window_ns
    baseline = signal.values(queries(base_start, start))
    if len(baseline) < rule.min_samples:
        return None
    diff, low, high, p = unpaired_change(current, baseline, signal.statistic)
    stat = STATISTICS[signal.statistic]
    then, now = stat(baseline), stat(current)
    if not (p < rule.alpha and _surely_bad(rule, low, high, then)):
        return None
    return _alert(
        rule,
        TRAFFIC,
        (start, end),
        now,
        f"{rule.measure} {_fmt(then)} -> {_fmt(now)} ({diff:+.3g}, 95% CI [{_fmt(low)}, "
        f"{_fmt(high)}], p={p:.2g}; {len(current)} traces vs {len(baseline)} in the "
        f"{rule.baseline} windows before)",
        _traffic_examples(rule, current_traces),
        (then, low, high, p),
        baseline_from=base_start,
    )


def _crossed(rule: AlertRule, value: float) -> bool:
    return (rule.above is not None and value > rule.above) or (
        rule.below is not None and value < rule.below
    )


def _limits(rule: AlertRule) -> str:
    parts = [
        f"above {rule.above:g}" if rule.above is not None else "",
        f"below {rule.below:g}" if rule.below is not None else "",
    ]
    return "alert " + " or ".join(p for p in parts if p)


def _alert(
    rule: AlertRule,
    origin: str,
    window: tuple[int, int],
    current: float | None,
    message: str,
    examples: list[dict[str, Any]],
    change: tuple[float, float, float, float] | None = None,
    baseline_from: int | None = None,
) -> Alert:
    """An alert of a threshold crossed (no ``change``) or of a change found against a
    baseline (``change``: the baseline, the 95 % interval's ends, the p-value)."""
    start, end = window
    baseline, low, high, p = change if change is not None else (None, None, None, None)
    return Alert(
        uuid.uuid4().hex,
        rule.name,
        time.time_ns(),
        origin,
        rule.stage,
        rule.measure,
        rule.severity,
        start,
        end,
        baseline,
        current,
        low,
        high,
        p,
        f"{message} [rule {rule.name!r}]",
        examples,
        baseline_from,
    )


# --- the evaluation --------------------------------------------------------------------------


def _quiet(store: MonitorStore, rule: AlertRule, alert: Alert, fired: dict[str, int]) -> bool:
    """The rule already alerted this window; or the change it found is the one it alerted
    before (that alert's window is still in the baseline); or it is cooling down. ``fired``:
    the window each rule alerted in this evaluation (not stored yet)."""
    last = fired.get(rule.name)
    if last is None:
        last = store.alerts.last_window(rule.name)
    if last is None:
        return False
    if alert.baseline_from_ns is not None and last >= alert.baseline_from_ns:
        return True
    start = alert.window_start_ns
    return start <= last or start - last < rule.cooldown * 1_000_000_000


@dataclass
class Evaluation:
    """One evaluation of the rules: the alerts that fired and the data the rules read."""

    fired: list[Alert]
    rules: int  # rules evaluated
    windows: int  # traffic windows read (the current one and the baselines)
    traces: int  # query traces in them
    rounds: int  # canary rounds read
    through_ns: int = 0  # the end of the last complete window evaluated (the next round's since)

    def line(self) -> str:
        """One line for the log of a cron job: what was evaluated, and whether any fired."""
        outcome = f"{len(self.fired)} fired" if self.fired else "none fired"
        return (
            f"cofe alerts: {self.rules} rule{'s' * (self.rules != 1)} evaluated over "
            f"{self.windows} traffic window{'s' * (self.windows != 1)} ({self.traces} "
            f"query trace{'s' * (self.traces != 1)}) and {self.rounds} canary "
            f"round{'s' * (self.rounds != 1)}; {outcome}"
        )


def evaluate_alerts(
    store: MonitorStore,
    rules: Sequence[AlertRule] = DEFAULT_RULES,
    *,
    now_ns: int | None = None,
    since_ns: int | None = None,
) -> list[Alert]:
    """Every rule at ``now_ns`` (default: now); new alerts are stored and returned."""
    return evaluate(store, rules, now_ns=now_ns, since_ns=since_ns).fired


def evaluate(
    store: MonitorStore,
    rules: Sequence[AlertRule] = DEFAULT_RULES,
    *,
    now_ns: int | None = None,
    since_ns: int | None = None,
) -> Evaluation:
    """Every rule at ``now_ns`` (default: now); new alerts are stored. Traffic rules are
    tested on each complete window starting at or after ``since_ns`` (default: the last
    ``CATCH_UP_WINDOWS``), oldest first. Returns the alerts with how much data the rules read
    (for the line ``cofe monitor alerts`` prints) and the end of the last window tested."""
    now = now_ns or time.time_ns()
    width = store.window_ns
    through = store.window_of(now)  # the current window is not complete: up to its start
    first = through - CATCH_UP_WINDOWS * width if since_ns is None else store.window_of(since_ns)
    ends = list(range(max(first, 0) + width, through + width, width)) or [through]
    traffic = [r for r in rules if r.source != CANARY]
    deepest = max((r.baseline for r in traffic), default=0)
    loaded: list[Any] = []
    times: list[int] = []
    if traffic:  # every trace the windows and their baselines need, read once
        needed = store.traces.started_in(ends[0] - (1 + deepest) * width, ends[-1])
        loaded = sorted((t for t in needed if t.is_query), key=lambda t: t.started_ns)
        times = [t.started_ns for t in loaded]
    read: dict[tuple[int, int], list[Any]] = {}

    def _ends(rule: AlertRule, ends: list[int]) -> list[int]:
        """A count (traffic that stopped) is a value even in an empty window: it is tested
        from the first window the read holds traffic in (a new store's empty past is not
        traffic that stopped), or only in the last window when it holds none."""
        if find_signal(rule.stage, rule.measure).statistic != "count":
            return ends
        if not times:
            return ends[-1:]
        return [end for end in ends if end > store.window_of(times[0])] or ends[-1:]

    def queries(start: int, end: int) -> list[Any]:
        """The query traces of a span of time, sliced once for all the rules of this evaluation."""
        if (start, end) not in read:
            read[start, end] = loaded[
                bisect.bisect_left(times, start) : bisect.bisect_left(times, end)
            ]
        return read[start, end]

    fired: list[Alert] = []
    last_fired: dict[str, int] = {}
    rounds: set[str] = set()
    for rule in rules:
        if rule.source == CANARY:
            found = [_evaluate_canary(store, rule, now, rounds)]
        else:
            found = [_evaluate_traffic(store, rule, end, queries) for end in _ends(rule, ends)]
        for alert in found:
            if alert is None or _quiet(store, rule, alert, last_fired):
                continue
            fired.append(alert)
            last_fired[rule.name] = alert.window_start_ns
    if fired:
        store.alerts.add(
            {
                **{k: v for k, v in asdict(a).items() if k != "baseline_from_ns"},
                "examples": json.dumps(a.examples, default=str),
            }
            for a in fired
        )
    windows = {w for start, end in read for w in range(start, end, width)}
    traces = {t.trace_id for records in read.values() for t in records}
    return Evaluation(fired, len(rules), len(windows), len(traces), len(rounds), through)
