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

Replies are checked for sense, not only for JSON (``judges/_sense.py``): claims
copied from the worked example or not taken from the answer, labels for claims
that do not exist, labels copying the example's, a claim supported by a context
that lies inside the source but not by the source -- each repaired (recorded in
the judgement's ``repairs``, counted in the pass's report) or an unscored reason;
a correctness score equal to the example's on most of a run's judgements is not
used (``correctness_echo``).

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
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import BaseModel

from cofe._errors import InputError
from cofe._jsonl import append_jsonl, read_jsonl, write_jsonl
from cofe._parallel import thread_map
from cofe.evalset import EvalSample, keyword_alternatives, read_evalset
from cofe.judges._alpha import unreliable
from cofe.judges._controls import (
    DEFAULT_PAIRS,
    POINTS,
    Control,
    ControlGate,
    control_gate,
    control_inputs,
    read_controls,
)
from cofe.judges._prompts import (
    EXAMPLE_CLAIM_LABELS,
    PROMPT_VERSION,
    STEPWISE_SUFFIX,
    again,
    checks_messages,
    claim_messages,
    claims_messages,
    inputs_key,
    reference_claim_messages,
)
from cofe.judges._prompts import reference_claims as split_reference
from cofe.judges._replies import (
    AnswerClaimCheck,
    ChecksReply,
    Claim,
    ClaimsReply,
    Judgement,
    PointCheck,
    PointLabel,
    ReferenceClaim,
    ReferenceClaimCheck,
    StepClaimCheck,
    StepReferenceCheck,
)
from cofe.judges._sense import (
    SENSE_REVISION,
    context_inside_source,
    copies_example_labels,
    correctness_echo,
    first_labels,
    from_answer,
    keep_answer_claims,
    label_echo,
    repair_code,
)
from cofe.llm import LLMClient
from cofe.measures import (
    NO_CORRECTNESS,
    NO_RELEVANCY,
    NO_SIMILARITY,
    ClaimLabels,
    Unscored,
    value_or,
)
from cofe.runlog import (
    JUDGE_CONTROLS,
    JUDGEMENTS,
    CompactRecord,
    ParsedDocument,
    RunLog,
    read_compact,
    run_folder_lock,
)

if TYPE_CHECKING:
    from cofe.pipeline import Embedder

_Reply = TypeVar("_Reply", bound=BaseModel)

# the prompt versions whose judgements score a run: the dense mode's and the step-by-step's
VERSIONS = frozenset({PROMPT_VERSION, PROMPT_VERSION + STEPWISE_SUFFIX})
SOURCE_CHARS = 12_000  # of a source document without a recorded span: a long file is cut


@dataclass(frozen=True)
class JudgeInputs:
    sample: EvalSample
    answer: str
    chunks: tuple[str, ...]  # the context the generator saw, chunk by chunk
    source: str | None
    no_source: str | None
    reference: str | None
    # a known-answer control (judges/_controls.py): the answer is the sample's reference
    # (gold), its passage's sentences covering it (gold_passage) or another sample's
    # reference (foreign); its judgement goes to judge_controls.jsonl
    control: Control | None = None

    @property
    def context(self) -> str:
        return "\n\n".join(self.chunks)

    @property
    def points(self) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """The sample's information points: per point its fragments, per fragment its
        alternatives (numbered by their index in ``fine_keywords``)."""
        return tuple(
            tuple(tuple(keyword_alternatives(k)) for k in point)
            for point in self.sample.fine_keywords
        )

    @property
    def key(self) -> str:
        return inputs_key(
            self.sample.query, self.answer, self.context, self.source, self.reference, self.points
        )


NO_EMBEDDER = "AnswerRelevancy and AnswerSimilarity need embeddings: pip install 'cofe[dense]'"


def _cosines(embedder: Embedder, anchor: str, others: list[str]) -> list[float]:
    """Cosines in [-1, 1]: unit vectors' dot products, whose float error can pass 1."""
    vectors = embedder.encode([anchor, *others])  # normalised: cosine = dot product
    return [min(1.0, max(-1.0, float(vectors[0] @ v))) for v in vectors[1:]]


def judge_one(
    client: LLMClient,
    item: JudgeInputs,
    embedder: Embedder | None = None,
    repeat: int = 0,
    steps: bool = False,
) -> Judgement:
    """Two calls: the claims of the answer, then their labels (the reference's claims are its
    sentences: no call); a third, narrower, for claims the second left unlabelled. With an ``embedder`` (MiniLM), also AnswerSimilarity (before any call:
    it is kept when the calls fail) and AnswerRelevancy (after the claims call). ``repeat`` > 0:
    the same judgement asked again (for the judge's variance), never served from a cache.

    Each reply is checked for sense (``judges/_sense.py``): what is repaired is recorded in
    ``repairs``; what cannot be is an unscored judgement with the reason. A judgement unscored
    after the checks call keeps the information points' labels that call gave.

    ``steps``: the step-by-step mode (``_judge_steps``): the same claims call, then one call
    per claim instead of the one checks call; its judgements carry ``PROMPT_VERSION + STEPWISE_SUFFIX``."""
    base: dict[str, Any] = {
        "sample_id": item.sample.id,
        "repeat": repeat,
        "control": item.control,
        "model": client.endpoint.model,
        "prompt_version": PROMPT_VERSION + (STEPWISE_SUFFIX if steps else ""),
        "sense": SENSE_REVISION,
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
    claims = client.structured(again(claims_messages(question, item.answer), repeat), ClaimsReply)
    raw = [claims.raw or ""]
    if claims.value is None:  # not ``claims.ok``: mypy narrows the value itself
        return Judgement(
            **base, status="unscored", reason=f"claims: {claims.error}", calls=claims.calls, raw=raw
        )
    answer_claims, questions, repairs = keep_answer_claims(
        claims.value.answer_claims, claims.value.questions, question, item.answer
    )
    base["repairs"] = repairs  # the one list: the checks' repairs below are added to it
    if claims.value.answer_claims and not answer_claims:
        return Judgement(
            **base,
            status="unscored",
            calls=claims.calls,
            raw=raw,
            reason="claims: no claim the judge listed is the answer's "
            f"({len(repairs)} dropped: copied from the worked example or "
            "not in the answer)",
        )
    base["questions"] = questions
    base["noncommittal"] = claims.value.noncommittal
    if embedder is not None:
        if claims.value.noncommittal:
            base["answer_relevancy"] = 0.0  # RAGAS: a noncommittal answer is not relevant
        elif questions:
            cosines = _cosines(embedder, question, questions)
            # RAGAS's questions are generated from the answer: one sharing no word with it
            # is not a question the answer answers, whatever it has in common with the
            # user's question -- it counts 0, as a noncommittal answer does
            stray = [n for n, asked in enumerate(questions) if not from_answer(asked, item.answer)]
            if stray:
                repairs.append(
                    f"question_not_from_answer: {len(stray)} of {len(questions)} question(s) "
                    "share no content word with the answer: counted 0 for AnswerRelevancy"
                )
            values = [0.0 if n in stray else c for n, c in enumerate(cosines)]
            base["answer_relevancy"] = sum(values) / len(values)
    reference_claims = split_reference(item.reference)
    points = item.points
    if not answer_claims and not reference_claims and not points:  # nothing to compare
        return Judgement(**base, status="judged", calls=claims.calls, raw=raw)
    if steps:
        base.update(calls=claims.calls, raw=raw)
        return _judge_steps(client, item, base, answer_claims, reference_claims, repeat)
    checks = client.structured(
        again(
            checks_messages(
                question,
                item.answer,
                list(item.chunks),
                item.source,
                item.reference,
                answer_claims,
                reference_claims,
                points,
            ),
            repeat,
        ),
        ChecksReply,
    )
    raw.append(checks.raw or "")
    calls = claims.calls + checks.calls
    if checks.value is None:
        return Judgement(
            **base, status="unscored", reason=f"checks: {checks.error}", calls=calls, raw=raw
        )
    # the point labels stand on their own: kept whatever becomes of the claim labels
    point_labels, dropped = _point_labels(
        checks.value.points, len(points), bool(item.context.strip())
    )
    base.update(points=point_labels, dropped_labels=dropped, calls=calls, raw=raw)
    if copies_example_labels(checks.value.answer_claims, len(answer_claims)):
        return Judgement(
            **base,
            status="unscored",
            reason="checks: the labels copy the worked example's "
            f"({len(EXAMPLE_CLAIM_LABELS)} claims; the answer has "
            f"{len(answer_claims)})",
        )
    by_claim, fixed = first_labels(checks.value.answer_claims, len(answer_claims), "answer")
    by_reference, fixed_ref = first_labels(
        checks.value.reference_claims, len(reference_claims), "reference"
    )
    repairs += fixed + fixed_ref
    missing = [i for i in range(len(answer_claims)) if i not in by_claim]
    missing_ref = [i for i in range(len(reference_claims)) if i not in by_reference]
    if missing or missing_ref:  # a narrower step: those claims alone, asked once more
        follow = client.structured(
            again(
                checks_messages(
                    question,
                    item.answer,
                    list(item.chunks),
                    item.source,
                    item.reference,
                    [answer_claims[i] for i in missing],
                    [reference_claims[i] for i in missing_ref],
                ),
                repeat,
            ),
            ChecksReply,
        )
        raw.append(follow.raw or "")
        base["calls"] = calls = calls + follow.calls
        if follow.value is not None:
            more, _ = first_labels(follow.value.answer_claims, len(missing), "answer")
            more_ref, _ = first_labels(follow.value.reference_claims, len(missing_ref), "reference")
            # the follow-up numbers the claims it was asked about from 0: back to their own
            by_claim.update({missing[k]: label for k, label in more.items()})
            by_reference.update({missing_ref[k]: label for k, label in more_ref.items()})
            repairs.append(
                f"asked_again: {len(more)} of {len(missing)} answer and "
                f"{len(more_ref)} of {len(missing_ref)} reference claim(s) the "
                "checks reply left unlabelled, labelled by a second call"
            )
        missing = [i for i in range(len(answer_claims)) if i not in by_claim]
        missing_ref = [i for i in range(len(reference_claims)) if i not in by_reference]
    if missing or missing_ref:
        return Judgement(
            **base,
            status="unscored",
            reason=f"checks: the judge left {len(missing)} answer claim(s) and "
            f"{len(missing_ref)} reference claim(s) unlabelled",
        )
    return _judged(
        item, base, answer_claims, reference_claims, by_claim, by_reference, checks.value
    )


def _judged(
    item: JudgeInputs,
    base: dict[str, Any],
    answer_claims: list[str],
    reference_claims: list[str],
    by_claim: Mapping[int, AnswerClaimCheck | StepClaimCheck],
    by_reference: Mapping[int, ReferenceClaimCheck | StepReferenceCheck],
    overall: ChecksReply | None,
) -> Judgement:
    """The judgement from one label per claim (``by_claim``: context, source, reference;
    ``by_reference``: answer, context) and the reply about the whole answer (useful chunks,
    correctness; None: not asked). The dense and the step-by-step modes end here alike."""
    repairs: list[str] = base["repairs"]
    inside = context_inside_source(item.chunks, item.source)
    labelled: list[Claim] = []
    for i, text in enumerate(answer_claims):
        check = by_claim[i]
        in_context = bool(check.context) and bool(item.context)
        in_source = None if item.source is None else bool(check.source)
        if in_context and in_source is False and inside:
            repairs.append(
                f"context_in_source: answer claim {i} is supported by the context, "
                "which lies inside the source: supported by the source too"
            )
            in_source = True
        labelled.append(
            Claim(
                text=text,
                context=in_context,
                source=in_source,
                reference=None if not item.reference else bool(check.reference),
            )
        )
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
        correctness=overall.correctness if item.reference and overall else None,
        useful_chunks=[n in set(overall.useful_chunks) for n in range(1, len(item.chunks) + 1)]
        if item.reference and overall
        else None,
    )


def _judge_steps(
    client: LLMClient,
    item: JudgeInputs,
    base: dict[str, Any],
    answer_claims: list[str],
    reference_claims: list[str],
    repeat: int,
) -> Judgement:
    """The step-by-step mode after the claims call: one call per answer claim, one per
    reference claim, and one about the whole answer (useful chunks, correctness, information
    points) when there is a reference or a point. Any step that fails leaves the sample
    unscored with the step named."""
    question, chunks = item.sample.query, list(item.chunks)
    raw: list[str] = base["raw"]

    def step(messages: list[dict[str, str]], model: type[_Reply], what: str) -> _Reply:
        result = client.structured(again(messages, repeat), model)
        raw.append(result.raw or "")
        base["calls"] += result.calls
        if result.value is None:
            raise _StepFailed(f"checks: {what}: {result.error}")
        return result.value

    try:
        by_claim = {
            i: step(
                claim_messages(question, text, chunks, item.source, item.reference),
                StepClaimCheck,
                f"answer claim {i}",
            )
            for i, text in enumerate(answer_claims)
        }
        by_reference = {
            i: step(
                reference_claim_messages(question, text, item.answer, chunks),
                StepReferenceCheck,
                f"reference claim {i}",
            )
            for i, text in enumerate(reference_claims)
        }
        overall: ChecksReply | None = None
        if item.reference or item.points:
            overall = step(
                checks_messages(
                    question, item.answer, chunks, item.source, item.reference, [], [], item.points
                ),
                ChecksReply,
                "the whole answer",
            )
    except _StepFailed as failed:
        return Judgement(**base, status="unscored", reason=str(failed))
    if overall is not None:
        base["points"], base["dropped_labels"] = _point_labels(
            overall.points, len(item.points), bool(item.context.strip())
        )
    return _judged(item, base, answer_claims, reference_claims, by_claim, by_reference, overall)


class _StepFailed(Exception):
    """A step's call gave no valid reply (its message is the judgement's reason)."""


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
        given = by_point.get(i)
        labels.append(
            PointLabel(
                point=i,
                answer=given.answer if given else None,
                context=(given.context if given else None) if has_context else "not_support",
            )
        )
    return labels, dropped


@overload
def read_judgements(run_dir: str | os.PathLike[str], repeat: int = 0) -> dict[str, Judgement]: ...
@overload
def read_judgements(
    run_dir: str | os.PathLike[str], repeat: None
) -> dict[tuple[str, int], Judgement]: ...
def read_judgements(
    run_dir: str | os.PathLike[str], repeat: int | None = 0
) -> dict[str, Judgement] | dict[tuple[str, int], Judgement]:
    """The newest judgement of each sample (bad lines are skipped: they are judged again).

    ``repeat=0``: the judgements that score the run, by sample id; ``repeat=None``: every
    repeat, by (sample id, repeat)."""
    path = Path(run_dir) / JUDGEMENTS
    every: dict[tuple[str, int], Judgement] = {}
    scoring: dict[str, Judgement] = {}
    if path.exists():
        for _line, item in read_jsonl(path, Judgement):
            if not isinstance(item, Judgement):
                continue
            if repeat is None:
                every[(item.sample_id, item.repeat)] = item
            elif item.repeat == repeat:
                scoring[item.sample_id] = item
    return every if repeat is None else scoring


@dataclass
class JudgeReport:
    samples: int = 0
    judged: int = 0
    skipped: int = 0  # already judged with the same inputs
    unscored: int = 0
    not_answered: int = 0
    left: int = 0  # still to judge after ``limit``: the next pass takes them
    reasons: dict[str, int] = field(default_factory=dict)  # unscored, by the reason's head
    # replies repaired in this pass, per repair code (judges/_sense.py): samples, not repairs
    repairs: dict[str, int] = field(default_factory=dict)
    # why the run's correctness scores are not used (the example's value echoed), or None
    correctness_echo: str | None = None
    # why none of the run's claim labels is used (the example's label pattern echoed), or None
    label_echo: str | None = None
    controls_judged: int = 0  # known-answer controls judged in this pass (judges/_controls.py)
    controls_unscored: int = 0  # ... whose calls gave no usable labels
    control_calls: int = 0  # the calls the controls took (the samples' are the rest)
    # per judged measure: the controls' AUC, pairs, and whether cofe score uses it
    controls: dict[str, str] = field(default_factory=dict)


def reason_head(reason: str | None) -> str:
    """A reason without its particulars, for counting ("checks: invalid reply after one
    repair: answer_claims.0: ..." -> "checks: invalid reply after one repair")."""
    return ":".join((reason or "").split(":")[:2]).strip()


def judge_inputs(run_dir: Path) -> tuple[list[JudgeInputs], int]:
    """What each answered sample is judged on; and how many have no answer."""
    log, records = read_compact(run_dir)
    evalset = read_evalset(run_dir / "evalset.jsonl")
    top_k = log.manifest.top_k
    source = _Sources(log)
    items: list[JudgeInputs] = []
    unanswered = 0
    for sample in evalset.samples:
        record = records.get(sample.id)
        if record is None or record.answer is None:
            unanswered += 1
            continue
        items.append(
            JudgeInputs(
                sample,
                record.answer,
                _context(log, record, top_k),
                *source(sample),
                sample.reference_answer or None,
            )
        )
    return items, unanswered


def _context(log: RunLog, record: CompactRecord, top_k: int | None) -> tuple[str, ...]:
    given = record.context if record.context is not None else (record.pool or ())[: top_k or 4]
    return tuple(log.chunks[ref.chunk_id].text for ref in given if ref.chunk_id in log.chunks)


class _Sources:
    """A sample's source passage: its document found by id, file name, path or stem (an index
    built once per run, not a scan of every document per sample)."""

    def __init__(self, log: RunLog) -> None:
        self.by_name: dict[str, list[ParsedDocument]] = {}
        for doc in log.documents.values():
            base = os.path.basename(doc.source)
            for name in {doc.doc_id, doc.source, base, os.path.splitext(base)[0]}:
                self.by_name.setdefault(name, []).append(doc)

    def __call__(self, sample: EvalSample) -> tuple[str | None, str | None]:
        if sample.source is None:
            return None, "the sample names no source document"
        name = sample.source.doc
        base = os.path.basename(name)
        docs: list[ParsedDocument] = []
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
    embedder: Embedder | None = None,
    repeats: int = 1,
    cluster: Any = None,
    limit: int | None = None,
    steps: bool = False,
    controls: int = DEFAULT_PAIRS,
) -> JudgeReport:
    """Judge every answered sample not yet judged with the same inputs; append as each ends.
    ``repeats`` > 1 asks each judgement that many times (the first scores the run);
    ``limit`` judges at most that many of them, in eval-set order (a first look at a slow
    model; the next pass resumes with the rest). An endpoint that stops answering
    (``LLMClient.check_endpoint``: calls in a row that cannot reach it) ends the pass with
    ``EndpointDown``; what was judged stays in judgements.jsonl for the next pass.
    ``steps``: the step-by-step mode (``judge_one``); a sample judged in the other mode is
    judged again. ``controls``: how many known-answer control samples to judge first
    (``judges/_controls.py``: right answers and another document's, judged as the sample's
    answer; 0: none); they are judged once, outside ``limit`` -- by the pass that leaves no
    sample to judge, so a first look is not made to wait -- and gate the measures."""
    version = PROMPT_VERSION + (STEPWISE_SUFFIX if steps else "")
    if repeats < 1:
        raise InputError(f"repeats must be at least 1, not {repeats}")
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, not {limit}")
    run_dir = Path(run_dir)
    with run_folder_lock(run_dir, purpose="cofe judge"):  # one writer per run folder
        items, unanswered = judge_inputs(run_dir)
        done = read_judgements(run_dir, repeat=None)
        report = JudgeReport(samples=len(items) + unanswered, not_answered=unanswered)
        todo: list[tuple[JudgeInputs, int]] = []
        for item in items:
            for repeat in range(repeats):
                old = done.get((item.sample.id, repeat))
                if _current(old, item, client, version):
                    report.skipped += 1
                else:
                    todo.append((item, repeat))
        if limit is not None and len(todo) > limit:
            report.left = len(todo) - limit
            todo = todo[:limit]
        # the controls this run calls for now; any other in the file (a sample gone, its
        # reference or passages edited, fewer asked for) is dropped, so none that is stale
        # gates the run
        wanted = control_inputs(items, controls)
        judged_controls = _prune_controls(run_dir, wanted)
        # a first look (--limit, samples left over) is not made to wait for the controls:
        # the pass that reaches the last sample judges them
        waiting = report.left > 0
        control_todo = [
            (inputs, 0)
            for inputs in ([] if waiting else wanted)
            if inputs.control is not None
            and not _current(
                judged_controls.get((inputs.sample.id, inputs.control)), inputs, client, version
            )
        ]
        lock = threading.Lock()
        path = run_dir / JUDGEMENTS

        def finished(judgement: Judgement) -> None:
            with lock:
                if judgement.control is not None:  # a control: its own file and counts
                    append_jsonl(run_dir / JUDGE_CONTROLS, [judgement])
                    report.control_calls += judgement.calls
                    if judgement.status == "judged":
                        report.controls_judged += 1
                    else:
                        report.controls_unscored += 1
                else:
                    append_jsonl(path, [judgement])
                    if judgement.status == "judged":
                        report.judged += 1
                    else:
                        report.unscored += 1
                        key = reason_head(judgement.reason)
                        report.reasons[key] = report.reasons.get(key, 0) + 1
                    codes = {repair_code(r) for r in judgement.repairs}
                    if judgement.dropped_labels:  # point labels: no such point, or a second
                        codes.add("dropped_point_label")
                    for code in codes:
                        report.repairs[code] = report.repairs.get(code, 0) + 1
            if on_judged:
                on_judged(judgement)
            if judgement.status != "judged":  # a dead endpoint stops the pass, not each sample
                client.check_endpoint(kept())

        def kept() -> str:
            return (
                f"stopped after judging {report.judged} sample(s) and "
                f"{report.controls_judged} control(s) in this pass; every judgement so far "
                f"is kept in {path} and {run_dir / JUDGE_CONTROLS}: run `cofe judge` again "
                "to resume"
            )

        # the controls first: a judge that cannot tell a right answer from a wrong one is
        # known after them, not after the whole run
        if cluster is not None:  # slices of the samples judged on a Dask cluster
            from cofe.judges._cluster import judge_on_cluster  # distributed: --dask only

            judge_on_cluster(
                client,
                control_todo + todo,
                finished,
                cluster,
                concurrency=concurrency,
                embeddings=embedder is not None,
                steps=steps,
            )
        else:
            for tasks, what in ((control_todo, "control"), (todo, "sample")):
                thread_map(
                    lambda task: judge_one(client, task[0], embedder, task[1], steps),
                    tasks,
                    finished,
                    concurrency=concurrency,
                    progress=("judging", what) if progress and tasks else None,
                )
        # the last samples could not reach the endpoint, fewer than would stop the pass:
        # they are left for the next one all the same, and the exit says so
        client.check_endpoint(kept(), at_least=1)
        judgements = read_judgements(run_dir)
        report.correctness_echo = correctness_echo(_correctness_values(judgements))
        report.label_echo = label_echo(_context_labels(judgements))
        report.controls = _gate(run_dir, judgements).summary()
        if waiting and wanted and "controls" in report.controls:
            report.controls["controls"] = (
                "not judged yet: this pass left samples (--limit); the pass that judges the "
                "last sample judges them first"
            )
        return report


def _current(old: Judgement | None, item: JudgeInputs, client: LLMClient, version: str) -> bool:
    """Is ``old`` the judgement of ``item`` by this model and prompt version (no call needed)?"""
    return (
        old is not None
        and old.status == "judged"
        and old.inputs == item.key
        and old.model == client.endpoint.model
        and old.prompt_version == version
        and old.sense == SENSE_REVISION  # read by older sense checks: read again
    )


def _gate(run_dir: Path, judgements: Mapping[str, Judgement]) -> ControlGate:
    """The known-answer controls' gate for the labels that score the run: the controls judged
    by the model and prompt version of most of its judgements, for samples the run has
    judged (``cofe judge`` drops the controls a changed run no longer calls for)."""
    kinds = Counter(
        (j.model, j.prompt_version) for j in judgements.values() if j.status == "judged"
    )
    if not kinds:
        return control_gate((), labels_of)
    (model, version), _ = kinds.most_common(1)[0]
    controls = [c for c in read_controls(run_dir).values() if c.sample_id in judgements]
    return control_gate(controls, labels_of, model=model, versions=frozenset({version}))


def _prune_controls(
    run_dir: Path, wanted: list[JudgeInputs]
) -> dict[tuple[str, Control], Judgement]:
    """The judged controls still called for (same sample, kind and inputs), the file
    rewritten to hold only those when it held others."""
    keys = {(c.sample.id, c.control): c.key for c in wanted if c.control is not None}
    judged = read_controls(run_dir)
    kept = {k: j for k, j in judged.items() if keys.get(k) == j.inputs}
    if len(kept) < len(judged) or _has_extra_lines(run_dir / JUDGE_CONTROLS, len(judged)):
        write_jsonl(run_dir / JUDGE_CONTROLS, list(kept.values()))
    return kept


def _has_extra_lines(path: Path, records: int) -> bool:
    """Does the file hold more lines than records (superseded or unreadable ones)?"""
    if not path.exists():
        return False
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip()) > records


def _context_labels(judgements: dict[str, Judgement]) -> list[list[bool]]:
    """Per judgement that scores the run (this prompt version): its claims' context labels."""
    return [
        [claim.context for claim in j.claims]
        for j in judgements.values()
        if j.status == "judged" and j.prompt_version in VERSIONS
    ]


def _correctness_values(judgements: dict[str, Judgement]) -> list[int]:
    """The correctness scores of the judgements that score the run (this prompt version)."""
    return [
        j.correctness
        for j in judgements.values()
        if j.status == "judged" and j.prompt_version in VERSIONS and j.correctness is not None
    ]


def labels_for_scoring(
    run_dir: Path, log: RunLog, records: dict[str, CompactRecord], samples: list[EvalSample]
) -> dict[str, ClaimLabels | Unscored]:
    """Per answered sample with a judgement: its claim labels, or why they cannot be used."""
    every = read_judgements(run_dir, repeat=None)
    judgements = {sample_id: j for (sample_id, repeat), j in every.items() if repeat == 0}
    if not judgements:
        return {}
    # with --repeats: measures the judge disagrees with itself on are unscored for everyone
    # (a run judged once has nothing to compare: no measure is evaluated for it)
    repeated = len(every) > len(judgements)
    shaky: tuple[tuple[str, str], ...] = (
        unreliable({key: labels_of(j) for key, j in every.items() if j.status == "judged"})
        if repeated
        else ()
    )
    # the example's correctness on most samples is an echo: no sample's score is used (the
    # judge's other labels are); cofe judge's summary says why
    echo = correctness_echo(_correctness_values(judgements))
    # the example's label pattern on most answers: no claim label of the run is used (the
    # embedding measures and the information points' labels are)
    echoed_labels = label_echo(_context_labels(judgements))
    # the known-answer controls: a measure the judge cannot tell reference answers from other
    # samples' answers with is unscored for everyone; failed point labels are not used (the
    # answer step decides by the offline matcher)
    gate = _gate(run_dir, judgements)
    shaky += tuple(failed for failed in gate.failed if failed[0] != POINTS)
    drop_points = any(name == POINTS for name, _ in gate.failed)
    top_k = log.manifest.top_k
    source = _Sources(log)
    out: dict[str, ClaimLabels | Unscored] = {}
    for sample in samples:
        record = records.get(sample.id)
        judgement = judgements.get(sample.id)
        if record is None or record.answer is None or judgement is None:
            continue
        now = JudgeInputs(
            sample,
            record.answer,
            _context(log, record, top_k),
            *source(sample),
            sample.reference_answer or None,
        )
        if now.key != judgement.inputs or judgement.prompt_version not in VERSIONS:
            out[sample.id] = Unscored("judged on other inputs or prompts: run `cofe judge` again")
        elif judgement.status != "judged":
            failed = unscored_labels(judgement, len(sample.fine_keywords))
            if isinstance(failed, ClaimLabels):  # the gates hold for what it kept, too
                if drop_points:
                    failed = replace(failed, points=(), points_in_context=())
                failed = replace(failed, unreliable=shaky) if shaky else failed
            out[sample.id] = failed
        else:
            labels = labels_of(judgement, len(sample.fine_keywords))
            if echo:
                labels = replace(labels, correctness=Unscored(echo))
            if echoed_labels:  # no claim left to blame a verdict on, nor to call a refusal
                labels = ClaimLabels(
                    context=(),
                    source=(),
                    reference=(),
                    reference_in_answer=(),
                    relevancy=labels.relevancy,
                    similarity=labels.similarity,
                    points=labels.points,
                    points_in_context=labels.points_in_context,
                    failed=echoed_labels,
                )
            if drop_points:
                labels = replace(labels, points=(), points_in_context=())
            out[sample.id] = replace(labels, unreliable=shaky) if shaky else labels
    return out


def unscored_labels(judgement: Judgement, points: int | None = None) -> ClaimLabels | Unscored:
    """Why a judgement that failed gives no claim labels; with what it did give: the embedding
    measures (AnswerSimilarity needs no call; AnswerRelevancy only the claims call), and the
    information points' labels when the checks call gave them (the answer step reads those
    whatever became of the claims). ``points``: as in ``labels_of``."""
    reason = f"the judge gave no labels: {judgement.reason}"
    if (
        judgement.answer_similarity is None
        and judgement.answer_relevancy is None
        and not judgement.points
    ):
        return Unscored(reason)
    answer, context = _point_tuples(judgement, points)
    return ClaimLabels(
        context=(),
        source=(),
        reference=(),
        reference_in_answer=(),
        relevancy=value_or(judgement.answer_relevancy, NO_RELEVANCY),
        similarity=value_or(judgement.answer_similarity, NO_SIMILARITY),
        failed=reason,
        points=answer,
        points_in_context=context,
    )


def _point_tuples(
    judgement: Judgement, points: int | None
) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    """Per information point (``points`` of them; None: as many as were labelled): the
    answer's and the context's label, None where the judge gave none."""
    by_point = {label.point: label for label in judgement.points}
    if points is None:
        points = max(by_point, default=-1) + 1
    labels = [by_point.get(i) for i in range(points)]
    return (
        tuple(label.answer if label else None for label in labels),
        tuple(label.context if label else None for label in labels),
    )


def labels_of(judgement: Judgement, points: int | None = None) -> ClaimLabels:
    """A judged sample's labels, as the measures read them. ``points``: how many information
    points the sample has (its point labels come one per point, None where unlabelled);
    None: as many as the judgement labelled."""
    answer, context = _point_tuples(judgement, points)
    return ClaimLabels(
        context=tuple(c.context for c in judgement.claims),
        # the stored judgement's no_source / no_reference (its file's fields) read as the
        # one spelling of a missing value: the Unscored saying why
        source=(
            Unscored(judgement.no_source)
            if judgement.no_source
            else tuple(c.source for c in judgement.claims)
        ),
        reference=(
            Unscored(judgement.no_reference)
            if judgement.no_reference
            else tuple(c.reference for c in judgement.claims)
        ),
        reference_in_answer=tuple(c.answer for c in judgement.reference_claims),
        texts=tuple(c.text for c in judgement.claims),
        relevancy=value_or(
            judgement.answer_relevancy,
            NO_RELEVANCY,
            judgement.no_embeddings
            or (None if judgement.questions else "the judge wrote no question the answer answers"),
        ),
        similarity=value_or(
            judgement.answer_similarity,
            NO_SIMILARITY,
            judgement.no_embeddings or judgement.no_reference,
        ),
        reference_in_context=tuple(c.context for c in judgement.reference_claims),
        useful=None if judgement.useful_chunks is None else tuple(judgement.useful_chunks),
        correctness=value_or(judgement.correctness, NO_CORRECTNESS),
        noncommittal=judgement.noncommittal,
        points=answer,
        points_in_context=context,
    )
