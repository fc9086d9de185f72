"""Canaries: a keyword-labelled eval set sent through the live pipeline, scored per round.

Two ways to reach the pipeline:

- **a pipeline object** (``--pipeline module:factory``, or the built-in one): the round
  is an ordinary ``cofe run`` into ``RUNS/<round>`` -- full corpus, every stage judged;
- **the service** (``--send URL``): each query is POSTed as JSON (``{"query": ...}``)
  to the service, which is traced as usual; the round waits for the traces that come
  back to the collector, matches them by query and writes them as a run log. The
  service's corpus is not visible, only the chunks its traces list, so the corpus step
  is not judged (the manifest's ``corpus`` is ``"partial"``); losses after the pool are.

Either way the round is scored with the full stage measures and verdicts
(``score_run``), the scores are written next to the round's run log, and the store
keeps the round's measures, its verdict shares per stage and every case with its
verdict and evidence (what the dashboard drills down to).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cofe._errors import ConfigurationError
from cofe.adapters import TraceRecord
from cofe.chain import STEP_STAGE
from cofe.evalset import read_evalset
from cofe.monitor.store import CANARY, MonitorStore
from cofe.runlog import (
    Chunk,
    Manifest,
    RunWriter,
    SampleRecord,
    Stage,
    read_run,
)

VERDICTS = "verdicts"  # the step under which verdict shares are stored
_CUTOFF = re.compile(r"(?P<family>[A-Za-z][A-Za-z0-9]*)@(?P<cutoff>\d+)")
TOP_K = " (top-k)"  # the series of a step's narrower cutoff (the pool's top-k measures)


def series_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Canary measure rows (``store.canaries.series``) with the series each belongs to
    across rounds, and its cutoff: ``series`` is the measure's name without its cutoff, so a
    change of top-k (``KeywordRecall@4``, then ``@1``) stays one series of its step and
    stage -- the cutoff shows on each round's point -- and ``cutoff`` is that round's
    (None: the measure has none). A step that scores a measure at two cutoffs in one round
    (the pool: its own cutoff and the top-k) keeps the wider as the series and names the
    narrower ``"<measure> (top-k)"``. Verdict shares are their own series."""
    cutoffs: dict[tuple[Any, ...], set[int | None]] = {}
    parsed = []
    for r in rows:
        match = _CUTOFF.fullmatch(r["measure"]) if r["step"] != VERDICTS else None
        family, cutoff = (match["family"], int(match["cutoff"])) if match else (r["measure"], None)
        parsed.append((family, cutoff))
        cutoffs.setdefault((r["round_id"], r["step"], family), set()).add(cutoff)
    out = []
    for r, (family, cutoff) in zip(rows, parsed, strict=True):
        widest_first = sorted(
            cutoffs[(r["round_id"], r["step"], family)],
            key=lambda c: -(c if c is not None else float("inf")),
        )
        rank = widest_first.index(cutoff)
        series = family if rank == 0 else family + (TOP_K if rank == 1 else f" (cutoff {rank + 1})")
        out.append({**r, "series": series, "cutoff": cutoff})
    return out


@dataclass
class CanaryRound:
    round_id: str
    started_ns: int
    finished_ns: int
    samples: int
    answered: int
    run_dir: Path
    result: Any  # ScoreResult
    verdicts: dict[str, int]
    # sample id -> why its query never reached the service (--send: refused, redirected,
    # unreachable); such a round measured less than it was asked to, which the exit code says
    not_sent: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        shown = ", ".join(f"{v} {n}" for v, n in sorted(self.verdicts.items(), key=lambda x: -x[1]))
        return (
            f"canary round {self.round_id}: {self.answered}/{self.samples} answered in "
            f"{(self.finished_ns - self.started_ns) / 1e9:.1f} s; verdicts: {shown}"
        )

    def not_sent_line(self) -> str | None:
        """One line on the queries that never reached the service, or None: how many, and
        each distinct reason with the first sample it stopped."""
        if not self.not_sent:
            return None
        first: dict[str, str] = {}
        for sample_id, why in self.not_sent.items():
            first.setdefault(why, sample_id)
        reasons = "; ".join(f"{why} (sample {sample_id})" for why, sample_id in first.items())
        return (
            f"canary round {self.round_id}: {len(self.not_sent)} of {self.samples} queries "
            f"were not sent: {reasons}"
        )


def round_name(now_ns: int) -> str:
    return datetime.fromtimestamp(now_ns / 1e9, UTC).strftime("%Y%m%dT%H%M%S%fZ")


def run_canary(
    store: MonitorStore,
    evalset: str | os.PathLike[str],
    runs_dir: str | os.PathLike[str],
    *,
    pipeline: Any = None,
    docs: str | os.PathLike[str] | None = None,
    documents: list[Any] | None = None,
    send: str | None = None,
    send_field: str = "query",
    headers: dict[str, str] | None = None,
    wait_seconds: float = 120.0,
    concurrency: int = 4,
    cache: Any = None,
    config: Any = None,
    now_ns: Callable[[], int] = time.time_ns,
) -> CanaryRound:
    """Run one canary round (see the module's docstring) and store it."""
    from cofe.stages import ScoreConfig, score_run

    if (pipeline is None) == (send is None):
        raise ConfigurationError(
            "a canary needs either a pipeline or a service URL to send to (--send)"
        )
    started = now_ns()
    round_id = round_name(started)
    out = Path(runs_dir) / round_id
    if pipeline is not None:
        from cofe.runner import run_pipeline

        run_pipeline(
            pipeline,
            evalset,
            out,
            docs=docs,
            documents=documents,
            cache=cache,
            concurrency=concurrency,
            progress=False,
            run_id=f"canary-{round_id}",
        )
        trace_of = _store_run_traces(store, out, round_id, started)
    else:
        trace_of = _send_round(
            store,
            evalset,
            out,
            round_id,
            started,
            send or "",
            send_field,
            headers or {},
            wait_seconds,
            concurrency,
        )
    result = score_run(out, config=config or ScoreConfig())
    result.write(out / "scores", replace=True)
    finished = now_ns()
    log = read_run(out)
    return _store_round(
        store,
        round_id,
        started,
        finished,
        log,
        result,
        trace_of,
        pipeline_name=send or json.dumps(log.manifest.pipeline)[:500],
    )


def _store_run_traces(
    store: MonitorStore, out: Path, round_id: str, started: int
) -> dict[str, str]:
    """The round's records as canary traces (so a case links to what each stage produced)."""
    log = read_run(out)
    evals = {s.id: s for s in read_evalset(log.evalset_path).samples}
    stages = log.manifest.stages
    records, trace_of = [], {}
    for sample_id, sample in log.records.items():
        if sample_id not in evals:
            continue
        spent = sum(sample.latency.values())
        trace_of[sample_id] = f"canary:{round_id}:{sample_id}"
        records.append(
            TraceRecord.of_sample(
                trace_of[sample_id],
                evals[sample_id].query,
                sample,
                log.chunks,
                started_ns=started,
                ended_ns=started + int(spent * 1e9),
                stages=stages,
                top_k=log.manifest.top_k,
            )
        )
    store.traces.add(records, origin=CANARY)
    return trace_of


class _Refused(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: urllib would carry ``Authorization`` (the canary's token)
    to whatever origin a 301/302/303 names, and turn the POST into a GET."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


_NO_REDIRECTS = urllib.request.build_opener(_Refused)


def _post(url: str, field: str, query: str, headers: dict[str, str], timeout: float) -> str | None:
    """POST one canary query; the reason it failed, or None."""
    body = json.dumps({field: query}).encode()
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with _NO_REDIRECTS.open(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as error:
        if 300 <= error.code < 400:
            return (
                f"the service answered HTTP {error.code} (a redirect: not followed, so the "
                "query and the token go nowhere else; give the service's own URL)"
            )
        return f"the service answered HTTP {error.code}"
    except (urllib.error.URLError, OSError) as error:
        return f"the service could not be reached ({getattr(error, 'reason', error)})"
    return None


def _send_round(
    store: MonitorStore,
    evalset: str | os.PathLike[str],
    out: Path,
    round_id: str,
    started: int,
    url: str,
    field: str,
    headers: dict[str, str],
    wait_seconds: float,
    concurrency: int,
) -> dict[str, str]:
    evals = read_evalset(evalset)
    samples = evals.samples
    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        failures = list(
            pool.map(lambda s: _post(url, field, s.query, headers, wait_seconds), samples)
        )
    sent = [s for s, failed in zip(samples, failures, strict=True) if failed is None]
    wanted: dict[str, int] = {}
    for s in sent:
        wanted[s.query] = wanted.get(s.query, 0) + 1
    deadline = time.monotonic() + wait_seconds
    found: dict[str, list[TraceRecord]] = {}
    while True:
        found = store.traces.by_query(list(wanted), started)
        complete = all(
            len([t for t in found.get(q, []) if _answered_or_failed(t)]) >= n
            for q, n in wanted.items()
        )
        if complete or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    chunks: dict[str, Chunk] = {}
    records: list[SampleRecord] = []
    trace_of: dict[str, str] = {}
    stages: set[Stage] = set()
    taken: dict[str, int] = {}
    for s in sent:
        queue = [t for t in found.get(s.query, []) if _answered_or_failed(t)]
        at = taken.get(s.query, 0)
        if at >= len(queue):
            continue  # no trace came back in time: the sample stays unanswered (and says so)
        taken[s.query] = at + 1
        trace = queue[at]
        trace_of[s.id] = trace.trace_id
        stages.update(trace.stages)
        for doc in trace.chunks():
            if doc.text is not None and doc.chunk_id not in chunks:
                chunks[doc.chunk_id] = Chunk(
                    chunk_id=doc.chunk_id, doc_id=doc.chunk_id, text=doc.text, meta={"ref": doc.ref}
                )
        records.append(trace.sample(s.id))
    writer = RunWriter(out)
    manifest = Manifest(
        run_id=f"canary-{round_id}",
        pipeline={"service": url},
        stages=sorted(stages | {Stage.RETRIEVAL}, key=list(Stage).index),
        corpus="partial",  # the service's index is not visible: only the chunks its traces list
        meta={
            "canary": "sent to the service; the chunks are those its traces listed",
            "not_sent": {s.id: f for s, f in zip(samples, failures, strict=True) if f},
        },
    )
    writer.start(manifest, evalset)
    writer.add_chunks(chunks.values())
    writer.add_samples(records)
    store.traces.set_origin(list(trace_of.values()), CANARY)
    return trace_of


def _answered_or_failed(trace: TraceRecord) -> bool:
    return trace.is_query and (trace.answer is not None or trace.error_stage is not None)


def _context_stage(result: Any) -> str:
    return "reranking" if "reranking" in (result.shape.get("stages") or []) else "retrieval"


# the stage whose output each step holds (the context's depends on the run)
_STEP_STAGE = {step.value: stage.value for step, stage in STEP_STAGE.items()}


def _store_round(
    store: MonitorStore,
    round_id: str,
    started: int,
    finished: int,
    log: Any,
    result: Any,
    trace_of: dict[str, str],
    pipeline_name: str,
) -> CanaryRound:
    evals = {s.id: s for s in read_evalset(log.evalset_path).samples}
    summary = result.summary()
    context_stage = _context_stage(result)
    measures = [
        (
            round_id,
            _STEP_STAGE.get(r.step, context_stage),
            r.step,
            r.measure,
            None if r.mean != r.mean else float(r.mean),
            int(r.scored),
            int(r.unscored),
        )
        for r in summary.itertuples()
    ]
    verdicts = result.verdicts
    counts = verdicts["verdict"].value_counts().to_dict()
    total = len(verdicts)
    by_stage = verdicts.groupby(["verdict", "stage"], dropna=False).size()
    for (verdict, stage), n in by_stage.items():
        stage_name = stage if isinstance(stage, str) else "none"
        measures.append(
            (round_id, stage_name, VERDICTS, f"{verdict}@{stage_name}", n / total, total, 0)
        )
    cases = [
        (
            round_id,
            r.sample_id,
            trace_of.get(r.sample_id),
            evals[r.sample_id].query if r.sample_id in evals else "",
            r.verdict,
            r.stage if isinstance(r.stage, str) else None,
            json.dumps({"explanation": r.explanation, "points": int(r.points)}),
        )
        for r in verdicts.itertuples()
    ]
    scores = result.scores
    store.canaries.add_round(
        {
            "round_id": round_id,
            "started_ns": started,
            "finished_ns": finished,
            "evalset_sha256": log.manifest.evalset_sha256,
            "pipeline": pipeline_name,
            "samples": len(evals),
            "answered": len(log.records),
            "run_dir": str(log.path),
            "summary": json.dumps(result.to_dict(), default=str),
        },
        [
            dict(
                zip(
                    ("round_id", "stage", "step", "measure", "value", "n", "unscored"),
                    m,
                    strict=True,
                )
            )
            for m in measures
        ],
        [
            dict(
                zip(
                    ("round_id", "sample_id", "trace_id", "query", "verdict", "stage", "evidence"),
                    c,
                    strict=True,
                )
            )
            for c in cases
        ],
        [
            {
                "round_id": round_id,
                "sample_id": sample_id,
                "step": step,
                "measure": measure,
                "value": float(value),
            }
            for sample_id, step, measure, value in zip(
                scores["sample_id"], scores["step"], scores["measure"], scores["value"], strict=True
            )
        ],
    )
    return CanaryRound(
        round_id,
        started,
        finished,
        len(evals),
        len(log.records),
        log.path,
        result,
        {str(k): int(v) for k, v in counts.items()},
        dict(log.manifest.meta.get("not_sent") or {}),
    )
