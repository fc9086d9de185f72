"""A simulated fortnight of production monitoring, in compressed time.

The built-in pipeline (BM25 -> MiniLM reranking -> the extractive generator) over the
shipped SQuAD + CMRC corpus answers a replay of traffic in every 6-hour window (other
questions, drawn at random, recorded through ``cofe.monitor.watch``) and, at the start
of every day, a canary round (a fixed, keyword-labelled set of 200). Three things break,
as in production, and stay broken (changes accumulate):

- day 5: the reranker is swapped for one that drops the evidence (it keeps the pool's
  chunks ranked just below the top-K);
- day 9: the chunk size is halved (the index is rebuilt);
- day 12: the generator starts refusing (half of the questions, chosen by hash).

After each window the default alert rules are evaluated at the window's end. The table
gives, per change, the first alert naming the right stage and its delay in windows, and
the alerts on clean days (before day 5) -- false alarms. Seeds are fixed.

    python benchmarks/monitor_fortnight.py [--days 14] [--canaries 200] [--traffic 40]

The traces and canary rounds do not depend on the rules, so a run kept with ``--workdir``
can be evaluated again with other rules without answering a query (``--replay``: the
rules at each window's end, as the run did, on a copy of its store with no alert in it);
``--no-alerts`` builds such a store without evaluating any rule.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WINDOW_S = 6 * 3600
PER_DAY = 24 * 3600 // WINDOW_S
T0 = 1_793_491_200 * 10**9  # 2026-11-01 00:00 UTC
REFUSAL = "I am unable to answer this question based on the provided context."


@dataclass(frozen=True)
class Event:
    day: int  # 1-based: day 1 is the first day
    what: str
    stage: str  # the stage an alert should name

    @property
    def window(self) -> int:
        return (self.day - 1) * PER_DAY


EVENTS = (
    Event(5, "reranker swapped for one that drops the evidence", "reranking"),
    Event(9, "chunk size halved (256 -> 128 tokens)", "chunking"),
    Event(12, "generator starts refusing half of the questions", "generation"),
)


class DroppingReranker:
    """Keeps the pool's chunks ranked just below the top-K: the evidence is handed on to
    nobody (what a misconfigured or broken reranker does)."""

    name = "drops-evidence"

    def __init__(self, top_k: int) -> None:
        self.top_k = top_k

    def prepare(self, chunks, cache) -> None:
        pass

    def __call__(self, query: str, candidates: list) -> list:
        kept = candidates[self.top_k : 2 * self.top_k] or candidates[: self.top_k]
        return [(c, 1.0 / (i + 1)) for i, c in enumerate(kept)]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name}


class RefusingGenerator:
    """The pipeline's generator, except that half of the questions (by hash) are refused."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, query: str, context: list) -> str:
        if hashlib.sha256(query.encode()).digest()[0] % 2 == 0:
            return REFUSAL
        return self.inner(query, context)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "refusing": "half"}


@dataclass
class Simulation:
    alerts: list[dict[str, Any]] = field(default_factory=list)
    windows: int = 0
    traffic: int = 0
    rounds: int = 0
    seconds: float = 0.0


def remember_encodings() -> None:
    """The simulation asks the same questions again and again (the traffic replays a few
    hundred, the canaries are the same 200 every day), and MiniLM encoding them is most of
    a run: each text's vector is computed once. The model is deterministic, so these are
    the vectors it would compute again; the traces the monitor sees are the same."""
    from cofe.pipeline._embed import shared_embedder

    embedder = shared_embedder()
    encode = embedder.encode
    known: dict[tuple[str, ...], Any] = {}

    def remembered(texts: list[str], *, progress: bool = False) -> Any:
        key = tuple(texts)
        if key not in known:
            known[key] = encode(texts, progress=progress)
        return known[key]

    embedder.encode = remembered  # type: ignore[method-assign]


def build_pipeline(chunk_size: int, cache: Any) -> Any:
    from cofe.pipeline import DefaultPipeline, PipelineConfig

    return DefaultPipeline(
        PipelineConfig(
            chunk_size=chunk_size,
            chunk_overlap=20,
            retriever="bm25",
            reranker="minilm",
            candidates=20,
            top_k=4,
            generator="extractive",
        )
    )


def simulate(
    workdir: Path,
    *,
    days: int = 14,
    canaries: int = 200,
    traffic: int = 40,
    canary_every: int = PER_DAY,
    seed: int = 0,
    events: tuple[Event, ...] = EVENTS,
    demo: Any = None,
    log: Callable[[str], None] = lambda s: None,
    alerts: bool = True,
) -> Simulation:
    from cofe._cache import Cache
    from cofe.demo._demo import DemoConfig, build_demo_inputs
    from cofe.evalset import read_evalset, write_evalset
    from cofe.monitor import MonitorStore, refresh_windows, run_canary, watch
    from cofe.monitor.analysis._alerts import DEFAULT_RULES
    from cofe.pipeline._parse import parse_documents

    started = time.perf_counter()
    docs, evalset, _ = build_demo_inputs(workdir, demo or DemoConfig())
    samples = read_evalset(evalset).samples
    rng = random.Random(seed)
    order = samples[:]
    rng.shuffle(order)
    canary_set, replay = order[:canaries], order[canaries:]
    canary_file = workdir / "canary.jsonl"
    write_evalset(canary_file, canary_set)
    cache = Cache(workdir / "cache")
    remember_encodings()
    documents = parse_documents(docs, cache=cache).documents
    out = Simulation()
    clock = {"now": T0}
    pipeline = build_pipeline(256, cache)
    pipeline.prepare(documents, cache)
    store = MonitorStore(workdir / "monitor.db", window_seconds=WINDOW_S, retain_seconds=0)
    try:
        for w in range(days * PER_DAY):
            for event in events:
                if event.window == w:
                    log(f"window {w} (day {event.day}): {event.what}")
                    if event.stage == "reranking":
                        pipeline.rerank = DroppingReranker(pipeline.config.top_k)
                    elif event.stage == "chunking":
                        rebuilt = build_pipeline(pipeline.config.chunk_size // 2, cache)
                        rebuilt.rerank, rebuilt.generate = pipeline.rerank, pipeline.generate
                        rebuilt.prepare(documents, cache)
                        pipeline = rebuilt
                    elif event.stage == "generation":
                        pipeline.generate = RefusingGenerator(pipeline.generate)
            start = T0 + w * WINDOW_S * 10**9
            clock["now"] = start + 60 * 10**9
            if w % canary_every == 0:
                run_canary(
                    store,
                    canary_file,
                    workdir / "rounds",
                    pipeline=pipeline,
                    documents=documents,
                    cache=cache,
                    concurrency=1,
                    now_ns=lambda: clock["now"],
                )
                out.rounds += 1
            watched = watch(pipeline, store, clock=lambda: clock["now"])
            step = (WINDOW_S - 600) * 10**9 // traffic
            for i in range(traffic):
                clock["now"] = start + 300 * 10**9 + i * step
                watched.answer(rng.choice(replay).query)
            out.traffic += traffic
            refresh_windows(store)
            if alerts:
                _evaluate(store, DEFAULT_RULES, w, out, log)
            out.windows += 1
    finally:
        store.close()
    out.seconds = time.perf_counter() - started
    return out


def _evaluate(
    store: Any,
    rules: Any,
    w: int,
    out: Simulation,
    log: Callable[[str], None],
    newest_only: bool = False,
) -> None:
    """The rules at the end of window ``w``, as ``cofe monitor alerts`` run from cron would
    run them (testing the last 12 windows again), or -- ``newest_only`` -- as a long-running
    evaluator would (window ``w`` alone). The alerts are the same: a window's test reads
    nothing recorded after it ends and draws the same resamples, and a window alerted once
    is not alerted again."""
    from cofe.monitor.analysis._alerts import evaluate_alerts

    end = T0 + (w + 1) * WINDOW_S * 10**9
    since = end - WINDOW_S * 10**9 if newest_only else None
    for alert in evaluate_alerts(store, rules, now_ns=end, since_ns=since):
        out.alerts.append(
            {
                "window": w,
                "day": w // PER_DAY + 1,
                "stage": alert.stage,
                "rule": alert.rule,
                "message": alert.message,
            }
        )
        log(f"window {w}: ALERT {alert.line()}")


def replay(
    workdir: Path,
    *,
    days: int = 14,
    rules: Any = None,
    log: Callable[[str], None] = lambda s: None,
) -> Simulation:
    """The rules (default: the default rules) evaluated again over the store of a kept run,
    window by window at the times the run evaluated them (each window once: see
    ``_evaluate``), on a copy with no alert in it (a
    rule keeps quiet after its own alerts, so those of another evaluation must not count).
    What the rules read is bounded by each window's end, so later traces and rounds in the
    store change nothing."""
    import sqlite3
    from contextlib import closing

    from cofe.monitor import MonitorStore
    from cofe.monitor.analysis._alerts import DEFAULT_RULES

    started = time.perf_counter()
    out = Simulation()
    with tempfile.TemporaryDirectory(prefix="cofe-replay-") as tmp:
        copy = Path(tmp) / "monitor.db"
        kept, fresh = sqlite3.connect(workdir / "monitor.db"), sqlite3.connect(copy)
        with closing(kept), closing(fresh):
            kept.backup(fresh)  # SQLite's own copy: the run's write-ahead log included
        store = MonitorStore(copy, window_seconds=WINDOW_S, retain_seconds=0)
        try:
            store.db.execute("DELETE FROM alerts")
            end = T0 + days * 86400 * 10**9
            out.rounds = len(store.canaries.rounds(finished_by_ns=end))
            out.traffic = sum(t.is_query for t in store.traces.started_in(T0, end))
            for w in range(days * PER_DAY):
                _evaluate(store, DEFAULT_RULES if rules is None else rules, w, out, log, True)
                out.windows += 1
        finally:
            store.close()
    out.seconds = time.perf_counter() - started
    return out


def detection(sim: Simulation, events: tuple[Event, ...] = EVENTS) -> list[dict[str, Any]]:
    """Per change: the first alert naming its stage, the delay in windows, and alerts naming
    another stage between it and the next change."""
    rows = []
    for i, event in enumerate(events):
        end = events[i + 1].window if i + 1 < len(events) else sim.windows
        during = [a for a in sim.alerts if event.window <= a["window"] < end]
        right = [a for a in during if a["stage"] == event.stage]
        rows.append(
            {
                "day": event.day,
                "change": event.what,
                "stage": event.stage,
                "detected": bool(right),
                "delay_windows": right[0]["window"] - event.window if right else None,
                "first_alert": right[0]["rule"] if right else None,
                "other_alerts": sorted({a["rule"] for a in during if a["stage"] != event.stage}),
            }
        )
    return rows


def false_alarms(sim: Simulation, events: tuple[Event, ...] = EVENTS) -> list[dict[str, Any]]:
    first = min(e.window for e in events) if events else sim.windows
    return [a for a in sim.alerts if a["window"] < first]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--canaries", type=int, default=200, help="canary questions")
    parser.add_argument("--traffic", type=int, default=40, help="traffic queries per window")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="evaluate the rules again over the store of a run kept in --workdir",
    )
    parser.add_argument(
        "--no-alerts", action="store_true", help="simulate only (evaluate later with --replay)"
    )
    args = parser.parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.replay and args.workdir is None:
        parser.error("--replay reads the store of a run kept with --workdir")
    with tempfile.TemporaryDirectory(prefix="cofe-fortnight-") as tmp:
        workdir = args.workdir or Path(tmp)
        if args.replay:
            sim = replay(workdir, days=args.days, log=log)
        else:
            sim = simulate(
                workdir,
                days=args.days,
                canaries=args.canaries,
                traffic=args.traffic,
                seed=args.seed,
                log=log,
                alerts=not args.no_alerts,
            )
    if args.no_alerts:
        print(f"simulated {sim.windows} windows into {workdir} in {sim.seconds:.0f} s")
        return 0
    rows, clean = detection(sim), false_alarms(sim)
    print(
        f"{sim.windows} windows of 6 h ({args.days} days), {sim.rounds} daily canary rounds "
        f"of {args.canaries} questions, {sim.traffic} traffic queries; seed {args.seed}; "
        f"{sim.seconds:.0f} s on this machine\n"
    )
    print(
        "| day | change | expected stage | detected | delay (windows) | first alert | "
        "alerts naming another stage |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        delay = "-" if r["delay_windows"] is None else str(r["delay_windows"])
        print(
            f"| {r['day']} | {r['change']} | {r['stage']} | {'yes' if r['detected'] else 'NO'} "
            f"| {delay} | {r['first_alert'] or '-'} | {', '.join(r['other_alerts']) or 'none'} |"
        )
    print(
        f"\nFalse alarms on clean days (days 1-{EVENTS[0].day - 1}): {len(clean)}"
        + "".join(f"\n- day {a['day']}: {a['message']}" for a in clean)
    )
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "false_alarms": clean, "alerts": sim.alerts}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
