"""``cofe judge``: an LLM judge's claim labels for every answered sample, stored next to the run.

A separate, resumable pass: judgements go to ``RUN/judgements.jsonl``, one
line per sample, appended as each finishes; a sample already judged with the
same inputs (question, answer, context, source, reference, information
points), model and prompt version is skipped, so a killed pass resumes without
repeating a call. ``cofe score`` reads the file: re-scoring costs no call.

The checks call also labels each of the sample's information points (its
``fine_keywords``) against the answer and the context: "support", "partial" or
"not_support" (TREC 2024 RAG's nugget assignment), in the same call. A label
for a point that does not exist (or a second label for one) is dropped and
counted; a point left unlabelled is None, not an error.

Edge cases (each a recorded reason, never NaN): no answer (the pipeline did
not generate) -- not judged; an empty answer -- unscored without a call; an
answer with no claim (a refusal) -- judged, and the claim measures say there
is no claim to check (the checks call is still made when the sample has
information points: they are labelled); an empty context -- every claim
unsupported by it, and no point in it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cofe._jsonl import append_jsonl, read_jsonl
from cofe._parallel import thread_map
from cofe.evalset import EvalSample, keyword_alternatives, read_evalset
from cofe.judges._prompts import (
    PROMPT_VERSION,
    again,
    checks_messages,
    claims_messages,
    inputs_key,
)
from cofe.judges._records import (
    ChecksReply,
    Claim,
    ClaimsReply,
    Judgement,
    PointCheck,
    PointLabel,
    ReferenceClaim,
)
from cofe.llm import LLMClient
from cofe.measures import ClaimLabels, Unscored
from cofe.runlog._lock import run_folder_lock
from cofe.stages._records import Outputs, read_compact

JUDGEMENTS = "judgements.jsonl"
SOURCE_CHARS = 12_000  # of a source document without a recorded span: a long file is cut


@dataclass(frozen=True)
class JudgeInputs:
    sample: EvalSample
    answer: str
    chunks: tuple[str, ...]  # the context the generator saw, chunk by chunk
    source: str | None
    no_source: str | None
    reference: str | None

    @property
    def context(self) -> str:
        return "\n\n".join(self.chunks)

    @property
    def points(self) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """The sample's information points: per point its fragments, per fragment its
        alternatives (numbered by their index in ``fine_keywords``)."""
        return tuple(tuple(tuple(keyword_alternatives(k)) for k in point)
                     for point in self.sample.fine_keywords)  # fmt: skip

    @property
    def key(self) -> str:
        return inputs_key(self.sample.query, self.answer, self.context, self.source,
                          self.reference, self.points)  # fmt: skip


NO_EMBEDDER = "AnswerRelevancy and AnswerSimilarity need embeddings: pip install 'cofe[dense]'"


def _cosines(embedder, anchor: str, others: list[str]) -> list[float]:
    """Cosines in [-1, 1]: unit vectors' dot products, whose float error can pass 1."""
    vectors = embedder.encode([anchor, *others])  # normalised: cosine = dot product
    return [min(1.0, max(-1.0, float(vectors[0] @ v))) for v in vectors[1:]]


def judge_one(client: LLMClient, item: JudgeInputs, embedder=None, repeat: int = 0) -> Judgement:
    """Two calls: the claims of the answer (and of the reference), then their labels.
    With an ``embedder`` (MiniLM), also AnswerSimilarity (before any call: it is kept when
    the calls fail) and AnswerRelevancy (after the claims call). ``repeat`` > 0: the same
    judgement asked again (for the judge's variance), never served from a cache."""
    base = {
        "sample_id": item.sample.id,
        "repeat": repeat,
        "model": client.endpoint.model,
        "prompt_version": PROMPT_VERSION,
        "inputs": item.key,
        "no_source": item.no_source,
        "no_reference": None if item.reference else "the sample has no reference answer",
        "no_embeddings": None if embedder is not None else NO_EMBEDDER,
    }
    if not item.answer.strip():
        return Judgement(**base, status="unscored", reason="the answer is empty")
    if embedder is not None and item.reference:
        base["answer_similarity"] = _cosines(embedder, item.answer, [item.reference])[0]
    question = item.sample.query
    claims = client.structured(again(claims_messages(question, item.answer, item.reference),
                                     repeat), ClaimsReply)  # fmt: skip
    raw = [claims.raw or ""]
    if not claims.ok:
        return Judgement(**base, status="unscored", reason=f"claims: {claims.error}",
                         calls=claims.calls, raw=raw)  # fmt: skip
    base["questions"] = claims.value.questions
    base["noncommittal"] = claims.value.noncommittal
    if embedder is not None:
        if claims.value.noncommittal:
            base["answer_relevancy"] = 0.0  # RAGAS: a noncommittal answer is not relevant
        elif claims.value.questions:
            cosines = _cosines(embedder, question, claims.value.questions)
            base["answer_relevancy"] = sum(cosines) / len(cosines)
    answer_claims = claims.value.answer_claims
    reference_claims = claims.value.reference_claims if item.reference else []
    points = item.points
    if not answer_claims and not reference_claims and not points:  # nothing to compare
        return Judgement(**base, status="judged", calls=claims.calls, raw=raw)
    checks = client.structured(
        again(checks_messages(question, item.answer, list(item.chunks), item.source,
                              item.reference, answer_claims, reference_claims, points), repeat),
        ChecksReply,
    )  # fmt: skip
    raw.append(checks.raw or "")
    calls = claims.calls + checks.calls
    if not checks.ok:
        return Judgement(**base, status="unscored", reason=f"checks: {checks.error}",
                         calls=calls, raw=raw)  # fmt: skip
    by_claim = {c.claim: c for c in checks.value.answer_claims}
    by_reference = {c.claim: c for c in checks.value.reference_claims}
    missing = [i for i in range(len(answer_claims)) if i not in by_claim]
    missing_ref = [i for i in range(len(reference_claims)) if i not in by_reference]
    if missing or missing_ref:
        return Judgement(**base, status="unscored", calls=calls, raw=raw,
                         reason=f"checks: the judge left {len(missing)} answer claim(s) and "
                                f"{len(missing_ref)} reference claim(s) unlabelled")  # fmt: skip
    point_labels, dropped = _point_labels(checks.value.points, len(points),
                                         bool(item.context.strip()))  # fmt: skip
    labelled = []
    for i, text in enumerate(answer_claims):
        check = by_claim[i]
        labelled.append(Claim(
            text=text,
            context=bool(check.context) and bool(item.context),
            source=None if item.source is None else bool(check.source),
            reference=None if not item.reference else bool(check.reference),
        ))  # fmt: skip
    return Judgement(
        **base,
        status="judged",
        claims=labelled,
        reference_claims=[
            ReferenceClaim(
                text=t,
                answer=by_reference[i].answer and bool(answer_claims),
                # a label the judge left out stays unknown (the measure says so), never a "no"
                context=None
                if by_reference[i].context is None
                else by_reference[i].context and bool(item.chunks),
            )
            for i, t in enumerate(reference_claims)
        ],
        correctness=checks.value.correctness if item.reference else None,
        useful_chunks=[n in set(checks.value.useful_chunks) for n in range(1, len(item.chunks) + 1)]
        if item.reference
        else None,
        points=point_labels,
        dropped_labels=dropped,
        calls=calls,
        raw=raw,
    )


def _point_labels(
    checks: list[PointCheck], points: int, has_context: bool
) -> tuple[list[PointLabel], int]:
    """One label per information point, in order (None where the judge gave none), and how
    many labels were dropped: for a point that does not exist, or a second for one point (the
    first is kept). An empty context conveys no point."""
    by_point: dict[int, PointCheck] = {}
    dropped = 0
    for check in checks:
        if check.point >= points or check.point in by_point:
            dropped += 1
        else:
            by_point[check.point] = check
    labels = []
    for i in range(points):
        check = by_point.get(i)
        labels.append(PointLabel(
            point=i,
            answer=check.answer if check else None,
            context=(check.context if check else None) if has_context else "not_support",
        ))  # fmt: skip
    return labels, dropped


def read_judgements(run_dir: str | os.PathLike[str], repeat: int | None = 0) -> dict:
    """The newest judgement of each sample (bad lines are skipped: they are judged again).

    ``repeat=0``: the judgements that score the run, by sample id; ``repeat=None``: every
    repeat, by (sample id, repeat)."""
    path = Path(run_dir) / JUDGEMENTS
    out: dict = {}
    if path.exists():
        for _line, item in read_jsonl(path, Judgement):
            if not isinstance(item, Judgement):
                continue
            if repeat is None:
                out[(item.sample_id, item.repeat)] = item
            elif item.repeat == repeat:
                out[item.sample_id] = item
    return out


@dataclass
class JudgeReport:
    samples: int = 0
    judged: int = 0
    skipped: int = 0  # already judged with the same inputs
    unscored: int = 0
    not_answered: int = 0
    left: int = 0  # still to judge after ``limit``: the next pass takes them
    reasons: dict[str, int] = field(default_factory=dict)


def judge_inputs(run_dir: Path) -> tuple[list[JudgeInputs], int]:
    """What each answered sample is judged on; and how many have no answer."""
    log, records = read_compact(run_dir)
    evalset = read_evalset(run_dir / "evalset.jsonl")
    top_k = log.manifest.top_k
    source = _Sources(log)
    items, unanswered = [], 0
    for sample in evalset.samples:
        record = records.get(sample.id)
        if record is None or record.answer is None:
            unanswered += 1
            continue
        items.append(JudgeInputs(sample, record.answer, _context(log, record, top_k),
                                 *source(sample), sample.reference_answer or None))  # fmt: skip
    return items, unanswered


def _context(log, record: Outputs, top_k: int | None) -> tuple[str, ...]:
    given = record.context if record.context is not None else (record.pool or ())[: top_k or 4]
    return tuple(log.chunks[ref.chunk_id].text for ref in given if ref.chunk_id in log.chunks)


class _Sources:
    """A sample's source passage: its document found by id, file name, path or stem (an index
    built once per run, not a scan of every document per sample)."""

    def __init__(self, log) -> None:
        self.by_name: dict[str, list] = {}
        for doc in log.documents.values():
            base = os.path.basename(doc.source)
            for name in {doc.doc_id, doc.source, base, os.path.splitext(base)[0]}:
                self.by_name.setdefault(name, []).append(doc)

    def __call__(self, sample: EvalSample) -> tuple[str | None, str | None]:
        if sample.source is None:
            return None, "the sample names no source document"
        name = sample.source.doc
        base = os.path.basename(name)
        docs: list = []
        for key in (name, base, os.path.splitext(base)[0]):
            docs = self.by_name.get(key, [])
            if docs:
                break
        if len({d.doc_id for d in docs}) != 1:
            what = "no" if not docs else "several"
            return None, f"source {name!r} names {what} document(s) of the run"
        text = docs[0].text
        span = sample.source
        if span.start is not None and span.end is not None and 0 <= span.start < span.end:
            return text[span.start : span.end], None
        return text[:SOURCE_CHARS], None


def judge_run(
    run_dir: str | os.PathLike[str],
    client: LLMClient,
    *,
    concurrency: int = 4,
    progress: bool = False,
    on_judged: Callable[[Judgement], None] | None = None,
    embedder=None,
    repeats: int = 1,
    cluster: Any = None,
    limit: int | None = None,
) -> JudgeReport:
    """Judge every answered sample not yet judged with the same inputs; append as each ends.
    ``repeats`` > 1 asks each judgement that many times (the first scores the run);
    ``limit`` judges at most that many of them, in eval-set order (a first look at a slow
    model; the next pass resumes with the rest). An endpoint that stops answering
    (``LLMClient.check_endpoint``: calls in a row that cannot reach it) ends the pass with
    ``EndpointDown``; what was judged stays in judgements.jsonl for the next pass."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    run_dir = Path(run_dir)
    with run_folder_lock(run_dir, purpose="cofe judge"):  # one writer per run folder
        items, unanswered = judge_inputs(run_dir)
        done = read_judgements(run_dir, repeat=None)
        report = JudgeReport(samples=len(items) + unanswered, not_answered=unanswered)
        todo = []
        for item in items:
            for repeat in range(repeats):
                old = done.get((item.sample.id, repeat))
                if old is not None and old.status == "judged" and old.inputs == item.key \
                        and old.model == client.endpoint.model \
                        and old.prompt_version == PROMPT_VERSION:  # fmt: skip
                    report.skipped += 1
                else:
                    todo.append((item, repeat))
        if limit is not None and len(todo) > limit:
            report.left = len(todo) - limit
            todo = todo[:limit]
        lock = threading.Lock()
        path = run_dir / JUDGEMENTS

        def finished(judgement: Judgement) -> None:
            with lock:
                append_jsonl(path, [judgement])
                if judgement.status == "judged":
                    report.judged += 1
                else:
                    report.unscored += 1
                    key = (judgement.reason or "").split(":")[0]
                    report.reasons[key] = report.reasons.get(key, 0) + 1
            if on_judged:
                on_judged(judgement)
            if judgement.status != "judged":  # a dead endpoint stops the pass, not each sample
                client.check_endpoint(
                    f"stopped after judging {report.judged} sample(s) in this pass; every "
                    f"judgement so far is kept in {path}: run `cofe judge` again to resume"
                )

        if cluster is not None:  # slices of the samples judged on a Dask cluster
            from cofe._distributed import judge_on_cluster

            judge_on_cluster(client, todo, finished, cluster, concurrency=concurrency,
                             embeddings=embedder is not None)  # fmt: skip
        else:
            thread_map(lambda task: judge_one(client, task[0], embedder, task[1]), todo,
                       finished, concurrency=concurrency,
                       progress=("judging", "sample") if progress else None)  # fmt: skip
        return report


def labels_for_scoring(
    run_dir: Path, log, records: dict[str, Outputs], samples: list[EvalSample]
) -> dict[str, ClaimLabels | Unscored]:
    """Per answered sample with a judgement: its claim labels, or why they cannot be used."""
    judgements = read_judgements(run_dir)
    if not judgements:
        return {}
    top_k = log.manifest.top_k
    source = _Sources(log)
    out: dict[str, ClaimLabels | Unscored] = {}
    for sample in samples:
        record = records.get(sample.id)
        judgement = judgements.get(sample.id)
        if record is None or record.answer is None or judgement is None:
            continue
        now = JudgeInputs(sample, record.answer, _context(log, record, top_k),
                          *source(sample), sample.reference_answer or None)  # fmt: skip
        if now.key != judgement.inputs or judgement.prompt_version != PROMPT_VERSION:
            out[sample.id] = Unscored("judged on other inputs or prompts: run `cofe judge` again")
        elif judgement.status != "judged":
            out[sample.id] = unscored_labels(judgement)
        else:
            out[sample.id] = labels_of(judgement, len(sample.fine_keywords))
    return out


def unscored_labels(judgement: Judgement) -> ClaimLabels | Unscored:
    """Why a judgement that failed gives no claim labels; with the embedding measures it did
    compute (AnswerSimilarity needs no call; AnswerRelevancy only the claims call), which the
    two measures still report."""
    reason = f"the judge gave no labels: {judgement.reason}"
    if judgement.answer_similarity is None and judgement.answer_relevancy is None:
        return Unscored(reason)
    return ClaimLabels(context=(), source=(), reference=(), reference_in_answer=(),
                       relevancy=judgement.answer_relevancy,
                       similarity=judgement.answer_similarity, failed=reason)  # fmt: skip


def labels_of(judgement: Judgement, points: int | None = None) -> ClaimLabels:
    """A judged sample's labels, as the measures read them. ``points``: how many information
    points the sample has (its point labels come one per point, None where unlabelled);
    None: as many as the judgement labelled."""
    by_point = {label.point: label for label in judgement.points}
    if points is None:
        points = max(by_point, default=-1) + 1
    point_labels = [by_point.get(i) for i in range(points)]
    return ClaimLabels(
        context=tuple(c.context for c in judgement.claims),
        source=tuple(c.source for c in judgement.claims),
        reference=tuple(c.reference for c in judgement.claims),
        reference_in_answer=tuple(c.answer for c in judgement.reference_claims),
        no_source=judgement.no_source,
        no_reference=judgement.no_reference,
        texts=tuple(c.text for c in judgement.claims),
        relevancy=judgement.answer_relevancy,
        similarity=judgement.answer_similarity,
        no_relevancy=judgement.no_embeddings
        or (None if judgement.questions else "the judge wrote no question the answer answers"),
        no_similarity=judgement.no_embeddings or judgement.no_reference,
        reference_in_context=tuple(c.context for c in judgement.reference_claims),
        useful=None if judgement.useful_chunks is None else tuple(judgement.useful_chunks),
        correctness=judgement.correctness,
        noncommittal=judgement.noncommittal,
        points=tuple(label.answer if label else None for label in point_labels),
        points_in_context=tuple(label.context if label else None for label in point_labels),
    )
