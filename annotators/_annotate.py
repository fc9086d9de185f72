"""``annotate``: documents in, a checked eval set out; resumable, concurrent, accounted.

Files, next to ``out``:

- ``out`` -- the accepted samples (eval-set JSONL), appended as segments finish;
- ``out.progress.jsonl`` -- one line per finished segment: accepted ids,
  rejected drafts with reasons, check counts, or the reason the call failed.

A segment's samples are appended *before* its progress line, so after a
crash the samples of unfinished segments are removed and those segments are
annotated again (the LLM cache makes that free); failed segments are tried
again on the next run. ``limit`` annotates at most that many segments not yet
done (the next run takes the rest); an endpoint that stops answering ends the
run with ``EndpointDown`` (the segments done so far are kept).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, Field

from annotators._checks import Checked, Checker, CheckStats
from annotators._prompts import PROMPT_VERSION, build_messages, detect_language
from annotators._reply import DraftReply, DraftType
from annotators._segment import Segment, segment_documents
from cofe._cache import Cache
from cofe._errors import InputError, InputProblem
from cofe._jsonl import append_jsonl, read_jsonl, write_jsonl
from cofe._parallel import thread_map
from cofe.evalset import EvalSample, QueryType, SourceRef, read_evalset
from cofe.llm import LLMClient, Structured, estimate_tokens
from cofe.runlog import ParsedDocument

TYPES: tuple[str, ...] = get_args(DraftType)  # the four types the reply may use
COMPLETION_TOKENS_PER_SEGMENT = 450  # a typical four-query reply; used only by the dry run


@dataclass(frozen=True)
class AnnotateConfig:
    max_segment_tokens: int = 400
    concurrency: int = 4
    language: str = "auto"  # auto | en | zh
    types: tuple[str, ...] = TYPES
    max_segments: int | None = None

    def __post_init__(self) -> None:
        if self.language not in ("auto", "en", "zh"):
            raise InputError(f"language must be auto, en or zh, not {self.language!r}")
        unknown = set(self.types) - set(TYPES)
        if unknown or not self.types:
            raise InputError(f"query types must be among {', '.join(TYPES)}; got {sorted(unknown)}")
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, not {self.concurrency}")


class SegmentDone(BaseModel):
    """A progress line: what became of one segment."""

    segment_id: str
    accepted: list[str] = Field(default_factory=list)
    rejected: list[dict[str, str]] = Field(default_factory=list)
    checks: dict[str, dict[str, int]] = Field(default_factory=dict)
    error: str | None = None
    calls: int = 0
    drafted: int = 0


@dataclass
class AnnotationSummary:
    segments: int
    resumed_segments: int
    failed_segments: int
    drafted: int
    accepted: int
    rejected_by_check: Counter[str]
    type_mix: Counter[str]
    checks: dict[str, Any]
    usage: dict[str, float]
    seconds: float
    failures: list[str] = field(default_factory=list)
    out: Path | None = None
    accepted_now: int = 0  # accepted in this run: what this run's calls and tokens bought
    left: int = 0  # segments not yet done, left by ``limit`` for the next run

    def to_dict(self) -> dict[str, Any]:
        per = self.accepted_now or None
        return {
            "segments": self.segments,
            "resumed_segments": self.resumed_segments,
            "failed_segments": self.failed_segments,
            "queries_drafted": self.drafted,
            "accepted": self.accepted,
            "rejected_by_check": dict(self.rejected_by_check),
            "type_mix": dict(self.type_mix),
            "checks": self.checks,
            "usage": self.usage,
            "accepted_this_run": self.accepted_now,
            "calls_per_accepted": round(self.usage["calls"] / per, 3) if per else None,
            "tokens_per_accepted": round(self.usage["total_tokens"] / per, 1) if per else None,
            "seconds": round(self.seconds, 2),
            "segments_left": self.left,
            "failures": self.failures[:20],
        }

    def why_none(self) -> str | None:
        """Why no sample was accepted (one line), or None when some were, or there was
        nothing to annotate."""
        if self.accepted or not self.segments:
            return None
        if self.failed_segments == self.segments:
            first = " ".join(self.failures[0].split()) if self.failures else "no reason recorded"
            return f"no sample accepted: the call failed for every segment ({first})"
        if not self.drafted:
            return (
                "no sample accepted: the model drafted no query of the types asked for "
                "(replies with no query; see the progress file)"
            )
        rejected = ", ".join(f"{k} {v}" for k, v in sorted(self.rejected_by_check.items()))
        failed = f"; {self.failed_segments} segment(s) failed" if self.failed_segments else ""
        return (
            f"no sample accepted: the checks rejected all {self.drafted} drafted "
            f"queries ({rejected or 'none recorded'}){failed}"
        )

    def render(self) -> str:
        d = self.to_dict()
        usage = d["usage"]
        failed = usage.get("failed_requests", 0)
        per = (
            f"{d['calls_per_accepted']} calls and {d['tokens_per_accepted']} tokens per "
            f"sample accepted in this run"
            if self.accepted_now
            else "no sample accepted in this run"
        )
        lines = [
            f"segments {self.segments} ({self.resumed_segments} already done before this run, "
            f"{self.failed_segments} failed)",
            f"queries drafted {self.drafted}, accepted {self.accepted}, rejected "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.rejected_by_check.items())) or "none"),
            "type mix: " + (", ".join(f"{t} {self.type_mix.get(t, 0)}" for t in TYPES)),
            "checks (checked / repaired / rejected / acceptance): "
            + "; ".join(
                f"{name} {c['checked']}/{c['repaired']}/{c['rejected']}/"
                + ("-" if c["acceptance"] is None else f"{c['acceptance']:.0%}")
                for name, c in self.checks.items()
            ),
            f"calls {usage['calls']} answered"
            + (f", {failed} failed" if failed else "")
            + f" (+{usage['cached']} from cache, {usage['repairs']} repairs), tokens "
            f"{usage['total_tokens']}; {per}; {d['seconds']} s",
        ]
        if self.left:
            lines.append(f"{self.left} segment(s) left by --limit: run again to annotate them")
        lines += [f"failed: {f}" for f in self.failures[:5]]
        if self.out:
            lines.append(f"eval set: {self.out}  (progress: {progress_path(self.out)})")
        return "\n".join(lines)


def progress_path(out: Path) -> Path:
    return out.with_name(out.name + ".progress.jsonl")


def load_documents(
    docs: str | os.PathLike[str], cache: Cache | None
) -> tuple[list[ParsedDocument], list[InputProblem]]:
    from cofe.pipeline import parse_documents

    parsed = parse_documents(docs, cache=cache)
    if not parsed.documents:
        raise InputError(
            InputProblem(
                str(docs),
                None,
                None,
                f"no document could be parsed ({len(parsed.problems)} problem(s))",
            )
        )
    return parsed.documents, parsed.problems


def plan_segments(documents: list[ParsedDocument], config: AnnotateConfig) -> list[Segment]:
    segments = segment_documents(documents, max_tokens=config.max_segment_tokens)
    return segments[: config.max_segments] if config.max_segments else segments


def _language(segment: Segment, config: AnnotateConfig) -> str:
    return detect_language(segment.text) if config.language == "auto" else config.language


def dry_run(documents: list[ParsedDocument], config: AnnotateConfig) -> dict[str, Any]:
    """Calls and tokens an annotation would spend, without calling anything."""
    segments = plan_segments(documents, config)
    prompt = sum(
        estimate_tokens(
            "\n".join(m["content"] for m in build_messages(s.title, s.text, _language(s, config)))
        )
        for s in segments
    )
    n = len(segments)
    return {
        "segments": n,
        "calls": {
            "at_least": n,
            "at_most": 2 * n,
            "note": "one per segment, plus one repair per invalid reply",
        },
        "prompt_tokens": prompt,
        "completion_tokens_estimate": n * COMPLETION_TOKENS_PER_SEGMENT,
        "total_tokens_estimate": prompt + n * COMPLETION_TOKENS_PER_SEGMENT,
    }


def _sample(
    segment: Segment, checked: Checked, client: LLMClient, language: str, taken: set[str]
) -> EvalSample:
    """The accepted sample; its id is the segment's and its type's, with "-2", "-3" ... for a
    second query of one type (``taken``: the segment's ids so far)."""
    draft = checked.draft
    sample_id, n = f"{segment.segment_id}/{checked.type}", 1
    while sample_id in taken:
        n += 1
        sample_id = f"{segment.segment_id}/{checked.type}-{n}"
    taken.add(sample_id)
    return EvalSample(
        id=sample_id,
        query=draft.query,
        query_type=QueryType(checked.type),
        coarse_keywords=checked.coarse,
        fine_keywords=[[*point] for point in checked.fine],  # points of plain fragments
        reference_answer=draft.answer,
        source=SourceRef(doc=segment.doc_id, start=segment.start, end=segment.end),
        meta={
            "annotation": {
                "model": client.endpoint.model,
                "prompt_version": PROMPT_VERSION,
                "segment": segment.segment_id,
                "span": [segment.start, segment.end],
                "language": language,
                "repairs": checked.repairs,
            }
        },
    )


def _read_progress(path: Path) -> dict[str, SegmentDone]:
    done: dict[str, SegmentDone] = {}
    if path.exists():
        for _, item in read_jsonl(path, SegmentDone):
            if isinstance(item, SegmentDone):
                done[item.segment_id] = item  # the newest line of a segment counts
    return done


def _restore(out: Path, finished: set[str], checker: Checker) -> None:
    """Keep only samples of finished segments (a crash may have left a half-written segment)."""
    if not out.exists():
        return
    existing = read_evalset(out)
    keep = [s for s in existing.samples if s.meta.get("annotation", {}).get("segment") in finished]
    if len(keep) != len(existing.samples) or existing.problems:
        write_jsonl(out, keep)
    for sample in keep:
        checker.remember(sample.query)


def annotate(
    docs: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    client: LLMClient,
    config: AnnotateConfig | None = None,
    *,
    documents: list[ParsedDocument] | None = None,
    fresh: bool = False,
    progress: bool | None = None,
    cache: Cache | None = None,
    limit: int | None = None,
) -> AnnotationSummary:
    """Annotate every segment of the documents under ``docs`` into the eval set ``out``
    (at most ``limit`` segments not yet done: the next run takes the rest)."""
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, not {limit}")
    config = config or AnnotateConfig()
    out = Path(out)
    state = progress_path(out)
    progress = sys.stderr.isatty() if progress is None else progress
    started = time.perf_counter()
    if documents is None:
        if docs is None:
            raise InputError("give docs (a folder) or documents")
        documents, _ = load_documents(docs, cache)
    segments = plan_segments(documents, config)
    if fresh:
        out.unlink(missing_ok=True)
        state.unlink(missing_ok=True)
    elif out.exists() and not state.exists():
        raise InputError(
            InputProblem(
                str(out),
                None,
                None,
                "exists and is not an annotation in progress (no .progress.jsonl); pass --fresh to replace it",
            )
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.touch()  # the eval set exists from the start, even if nothing is accepted

    previous = _read_progress(state)
    finished = {sid for sid, d in previous.items() if d.error is None}
    checker = Checker()
    _restore(out, finished, checker)
    todo = [s for s in segments if s.segment_id not in finished]
    resumed = len(segments) - len(todo)
    left = max(0, len(todo) - limit) if limit is not None else 0
    todo = todo[: len(todo) - left]

    def call(segment: Segment) -> tuple[Segment, str, Structured[DraftReply]]:
        language = _language(segment, config)
        return (
            segment,
            language,
            client.structured(build_messages(segment.title, segment.text, language), DraftReply),
        )

    def finish(outcome: tuple[Segment, str, Structured[DraftReply]]) -> None:
        segment, language, result = outcome
        stats = CheckStats()
        if result.value is None:  # the call failed (``not result.ok``)
            record = SegmentDone(
                segment_id=segment.segment_id, error=result.error, calls=result.calls
            )
        else:
            accepted: list[EvalSample] = []
            rejected: list[dict[str, str]] = []
            taken: set[str] = set()
            drafts = [q for q in result.value.queries if q.type in config.types]
            for draft in drafts:
                checked = checker.check(draft, segment.text, segment.title, stats)
                if not checked.rejected and checked.type not in config.types:
                    checked = replace(
                        checked,
                        check="type",
                        rejected=(f"relabelled {checked.type}, a type not asked for"),
                    )
                if checked.rejected:
                    rejected.append(
                        {
                            "type": draft.type,
                            "query": draft.query,
                            "check": checked.check or "",
                            "reason": checked.rejected,
                        }
                    )
                else:
                    accepted.append(_sample(segment, checked, client, language, taken))
            append_jsonl(out, accepted)  # samples first, then the progress line
            record = SegmentDone(
                segment_id=segment.segment_id,
                accepted=[s.id for s in accepted],
                rejected=rejected,
                checks=stats.counts(),
                calls=result.calls,
                drafted=len(drafts),
            )
        append_jsonl(state, [record])
        previous[segment.segment_id] = record
        if not result.ok:  # a dead endpoint stops the run, not each segment in turn
            client.check_endpoint(kept())

    def kept() -> str:
        done = sum(1 for r in previous.values() if r.error is None)
        return (
            f"stopped with {done} segment(s) annotated; they are kept in {out} (progress: "
            f"{state}): run `cofe annotate` again to resume"
        )

    thread_map(
        call,
        todo,
        finish,
        concurrency=config.concurrency,
        progress=("annotating", "segment") if progress else None,
        name="cofe-annotate",
    )
    # the last segments could not reach the endpoint, too few to stop the run midway
    client.check_endpoint(kept(), at_least=1)
    done_now = {s.segment_id for s in todo}
    return _summarise(
        segments, resumed, previous, done_now, client, out, time.perf_counter() - started, left
    )


def _summarise(
    segments: list[Segment],
    resumed: int,
    records: dict[str, SegmentDone],
    done_now: set[str],
    client: LLMClient,
    out: Path,
    seconds: float,
    left: int = 0,
) -> AnnotationSummary:
    current = [records[s.segment_id] for s in segments if s.segment_id in records]
    stats = CheckStats()
    rejected: Counter[str] = Counter()
    for record in current:
        stats.add_counts(record.checks)
        rejected.update(r["check"] for r in record.rejected)
    accepted_ids = [i for r in current for i in r.accepted]
    accepted_now = sum(len(r.accepted) for r in current if r.segment_id in done_now)
    type_mix = Counter(i.rsplit("/", 1)[1].split("-")[0] for i in accepted_ids)  # "factual-2"
    failures = [f"{r.segment_id}: {r.error}" for r in current if r.error]
    usage = client.usage.to_dict()
    return AnnotationSummary(
        segments=len(segments),
        resumed_segments=resumed,
        failed_segments=len(failures),
        drafted=sum(r.drafted for r in current),
        accepted=len(accepted_ids),
        rejected_by_check=rejected,
        type_mix=type_mix,
        checks=stats.to_dict(),
        usage=usage,
        seconds=seconds,
        failures=failures,
        out=out,
        accepted_now=accepted_now,
        left=left,
    )
