"""One trace's OpenInference spans -> what each stage produced for that query.

The OpenInference conventions (what Phoenix and the ``openinference-instrumentation-*``
packages emit) name the stage of a span by ``openinference.span.kind``:

- the root span (no parent in the trace) carries the query (``input.value``);
- RETRIEVER spans list the pool (``retrieval.documents.N.document.{id,content,score}``);
- RERANKER spans list what went in and came out (``reranker.input_documents`` /
  ``reranker.output_documents``): the last reranker's output is the context;
- LLM spans carry the answer (``llm.output_messages.N.message.content``, else ``output.value``).

Only the outermost span of a kind counts (a retriever calling a retriever is one
retrieval). A trace that lacks a part is still assembled: what is missing is said in
``problems``; spans of kinds that say nothing about the stages are counted in ``ignored``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cofe.adapters._trace import text_id
from cofe.monitor._spans import Span
from cofe.runlog import Stage

KNOWN_KINDS = frozenset({"CHAIN", "RETRIEVER", "RERANKER", "LLM", "EMBEDDING", "TOOL", "AGENT",
                         "GUARDRAIL", "EVALUATOR", "PROMPT", "UNKNOWN"})  # fmt: skip
STAGE_OF_KIND = {"RETRIEVER": Stage.RETRIEVAL, "RERANKER": Stage.RERANKING, "LLM": Stage.GENERATION}
NOT_A_QUERY = ("no RETRIEVER, RERANKER or LLM span: not a RAG query (index building, "
               "an embedding call, ...)")
# list indices have at most six digits: a 5,000-digit index (past Python's limit for int())
# is not a document of any real list, and is left unread rather than failing the trace
_DOC = re.compile(r"^(?P<list>.+)\.(?P<n>\d{1,6})\.document\.(?P<field>id|content|score|metadata)$")
_OUT_MESSAGE = re.compile(r"^llm\.output_messages\.(\d{1,6})\.message\.(content|role)$")


@dataclass(frozen=True, slots=True)
class Doc:
    """A chunk as a span listed it; ``chunk_id`` is content-addressed (the same text, the
    same id, whichever pipeline or trace it came from)."""

    chunk_id: str
    score: float | None
    ref: str | None  # the pipeline's own id for it (document.id)
    text: str | None  # None: the span gave an id but no content (or it was not loaded)
    chars: int | None = None  # its length, kept with the trace (the text is in the chunk table)


@dataclass
class TraceRecord:
    """What one query's trace says each stage produced; the trace id names the sample."""

    trace_id: str
    started_ns: int
    ended_ns: int
    query: str | None = None
    pool: list[Doc] | None = None
    context: list[Doc] | None = None
    answer: str | None = None
    latency: dict[Stage, float] = field(default_factory=dict)
    stages: tuple[Stage, ...] = ()  # stages seen in the trace, pipeline order
    error_stage: Stage | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)  # unknown span kind -> count
    spans: int = 0
    is_query: bool = True  # False: no stage span at all (index building, an embedding call)

    def chunks(self) -> Iterable[Doc]:
        for docs in (self.pool, self.context):
            yield from docs or ()


def documents(attributes: dict[str, Any], prefix: str) -> list[Doc] | None:
    """The documents listed under ``prefix`` (e.g. ``retrieval.documents``); None: none listed."""
    by_index: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _DOC.match(key)
        if match and match["list"] == prefix:
            by_index.setdefault(int(match["n"]), {})[match["field"]] = value
    if not by_index:
        return None
    out = []
    for n in sorted(by_index):
        doc = by_index[n]
        text = doc.get("content")
        ref = doc.get("id")
        text = text if isinstance(text, str) else None
        ref = str(ref) if ref not in (None, "") else None
        if text is not None:
            chunk_id = text_id(text)
        elif ref is not None:
            chunk_id = f"id:{ref}"
        else:
            chunk_id = f"unnamed:{n}"
        score = doc.get("score")
        try:
            score = float(score) if score is not None else None
        except (TypeError, ValueError, OverflowError):  # not a number, or past a float's range
            score = None
        out.append(Doc(chunk_id, score, ref, text, len(text) if text is not None else None))
    return out


class _Ancestry:
    """What each span inherits from its ancestors, computed once per span from its parent's
    (a chain of 20,000 spans is 20,000 steps, not 20,000 walks of up to 20,000 each); a
    cycle in bad data is cut where it closes."""

    def __init__(self, by_id: dict[str, Span]) -> None:
        self.by_id = by_id
        self._stage: dict[str, Span | None] = {}  # the outermost stage span, itself included
        self._kinded: dict[str, bool] = {}  # some ancestor has an OpenInference kind

    def _resolve(self, span: Span) -> None:
        chain: list[Span] = []  # the span and its ancestors not yet resolved, nearest first
        seen: set[str] = set()
        current: Span | None = span
        while current is not None and current.span_id not in self._stage \
                and current.span_id not in seen:  # fmt: skip
            seen.add(current.span_id)
            chain.append(current)
            current = self.by_id.get(current.parent_id or "")
        outer: Span | None
        if current is None or current.span_id in seen:  # the top, or a cycle: cut there
            outer, kinded = None, False
        else:  # resolved before: what it passes on to its children
            outer = self._stage[current.span_id]
            kinded = self._kinded[current.span_id] or current.kind is not None
        for link in reversed(chain):  # outermost first
            if outer is None and link.kind in STAGE_OF_KIND:
                outer = link
            self._stage[link.span_id] = outer
            self._kinded[link.span_id] = kinded
            kinded = kinded or link.kind is not None

    def stage_span(self, span: Span) -> Span | None:
        """The outermost stage span (RETRIEVER, RERANKER, LLM) the span is in, itself
        included: an LLM call inside a reranker (an LLM reranker) is reranking."""
        if span.span_id not in self._stage:
            self._resolve(span)
        return self._stage[span.span_id]

    def has_kinded_ancestor(self, span: Span) -> bool:
        if span.span_id not in self._kinded:
            self._resolve(span)
        return self._kinded[span.span_id]


def _outermost(spans: Sequence[Span], kind: str, stage_of: dict[str, Span | None]) -> list[Span]:
    """Spans of ``kind`` inside no other stage span, in start order (``spans`` are)."""
    return [s for s in spans if s.kind == kind and stage_of[s.span_id] is s]


def _query(root: Span) -> str | None:
    value = root.attributes.get("input.value")
    if not isinstance(value, str):
        return None
    if str(root.attributes.get("input.mime_type", "")).endswith("json"):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
        if isinstance(parsed, dict):
            if isinstance(parsed.get("query_bundle"), dict):  # LlamaIndex's inner spans
                parsed = parsed["query_bundle"]
            for key in ("query", "query_str", "question", "message", "input"):
                if isinstance(parsed.get(key), str):
                    return parsed[key]
    return value


def _answer(llm: Span) -> str | None:
    messages: dict[int, dict[str, Any]] = {}
    for key, value in llm.attributes.items():
        match = _OUT_MESSAGE.match(key)
        if match:
            messages.setdefault(int(match[1]), {})[match[2]] = value
    contents = [m.get("content") for _, m in sorted(messages.items())
                if m.get("role") in (None, "assistant") and isinstance(m.get("content"), str)]  # fmt: skip
    if contents:
        return contents[-1]
    value = llm.attributes.get("output.value")
    return value if isinstance(value, str) else None


def _error_text(span: Span) -> str:
    raised = span.exception()
    if raised is not None:
        kind, message = raised
        return f"{kind}: {message}" if message else kind
    return span.status_message or "the span's status is ERROR"


def assemble(trace_id: str, spans: Sequence[Span]) -> TraceRecord:
    """The stage record of one trace (see the module's docstring)."""
    spans = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    by_id = {s.span_id: s for s in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in by_id]
    record = TraceRecord(
        trace_id=trace_id,
        started_ns=min((s.start_ns for s in spans), default=0),
        ended_ns=max((s.end_ns for s in spans), default=0),
        spans=len(spans),
    )
    true_roots = [s for s in roots if s.parent_id is None]
    # a root whose parent is elsewhere (a caller's traceparent) is the trace's root here; the
    # query is on the outermost OpenInference span (an HTTP server span may be the root)
    root = true_roots[0] if true_roots else next(
        (s for s in roots if s.kind in ("CHAIN", "AGENT")), None)  # (a stage span's chain is missing)
    if root is None:
        record.problems.append("no root span (the trace is incomplete: its first span never came)")
    ancestry = _Ancestry(by_id)
    if root is not None and root.attributes.get("input.value") is None:
        root = next((s for s in spans if s.kind and s.attributes.get("input.value") is not None
                     and not ancestry.has_kinded_ancestor(s)), root)  # fmt: skip
    for span in spans:
        if span.kind is None:
            record.ignored["(no openinference.span.kind)"] = record.ignored.get("(no openinference.span.kind)", 0) + 1  # fmt: skip
        elif span.kind not in KNOWN_KINDS:
            record.ignored[span.kind] = record.ignored.get(span.kind, 0) + 1
    if root is not None:
        record.query = _query(root)
        if record.query is None:
            record.problems.append("the root span has no input.value (the query)")

    stage_of = {s.span_id: ancestry.stage_span(s) for s in spans}
    retrievers = _outermost(spans, "RETRIEVER", stage_of)
    rerankers = _outermost(spans, "RERANKER", stage_of)
    llms = _outermost(spans, "LLM", stage_of)
    if not (retrievers or rerankers or llms):
        # stored and counted, but not a query: its stages say nothing about the pipeline's
        record.is_query = False
        record.problems = [NOT_A_QUERY]
        return record
    seen = []
    for stage, group in ((Stage.RETRIEVAL, retrievers), (Stage.RERANKING, rerankers),
                         (Stage.GENERATION, llms)):  # fmt: skip
        if group:
            seen.append(stage)
            record.latency[stage] = round(sum(s.seconds for s in group), 6)
    record.stages = tuple(seen)

    # an error counts when a stage span or the root failed; one handled inside (a retried
    # embedding call in a retriever that then succeeded) does not
    staged_failures = [s for s in (*retrievers, *rerankers, *llms) if s.status == "error"]
    if staged_failures:
        first = min(staged_failures, key=lambda s: (s.start_ns, s.end_ns))
        record.error_stage, record.error = STAGE_OF_KIND[str(first.kind)], _error_text(first)
    elif root is not None and root.status == "error":
        # the chain failed outside the stage spans: blame the stage after the last one seen
        # (never a reranker the trace does not show), or generation after it
        after = {Stage.RETRIEVAL: Stage.GENERATION, Stage.RERANKING: Stage.GENERATION,
                 Stage.GENERATION: Stage.GENERATION}  # fmt: skip
        stage = after[seen[-1]] if seen else Stage.RETRIEVAL
        failed = [s for s in spans if s.status == "error"]
        failed_parents = {f.parent_id for f in failed}  # a set: linear in the failures
        deepest = next((f for f in failed if f.span_id not in failed_parents), root)
        record.error_stage, record.error = stage, _error_text(deepest)

    ok_retrievers = [s for s in retrievers if s.status != "error"]
    if ok_retrievers:
        pool: list[Doc] = []
        listed = False
        for span in ok_retrievers:
            docs = documents(span.attributes, "retrieval.documents")
            if docs is not None:
                listed = True
                pool += docs
        record.pool = pool
        if not listed:
            record.problems.append("the RETRIEVER span lists no documents")
    elif record.error_stage is not Stage.RETRIEVAL:
        record.problems.append("no RETRIEVER span (the pool is unknown)")

    ok_rerankers = [s for s in rerankers if s.status != "error"]
    if ok_rerankers:
        last = ok_rerankers[-1]
        context = documents(last.attributes, "reranker.output_documents")
        if context is None:
            record.problems.append("the RERANKER span lists no output documents")
        record.context = context if context is not None else []
        if record.pool is None:  # no retriever span: the first reranker's input is the pool
            record.pool = documents(ok_rerankers[0].attributes, "reranker.input_documents")
    elif record.pool is not None and not rerankers:
        record.context = list(record.pool)  # no reranker: the generator saw the pool

    ok_llms = [s for s in llms if s.status != "error"]
    if ok_llms:
        record.answer = _answer(max(ok_llms, key=lambda s: s.end_ns))
    if record.answer is None and ok_llms:  # streaming: only the innermost call has the text
        inner = [s for s in spans if s.kind == "LLM" and s.status != "error" and _answer(s)
                 and stage_of[s.span_id] in ok_llms]  # fmt: skip
        if inner:
            record.answer = _answer(max(inner, key=lambda s: s.end_ns))
    if record.answer is None and root is not None and root.status != "error" and ok_llms:
        value = root.attributes.get("output.value")
        plain = not str(root.attributes.get("output.mime_type", "")).endswith("json")
        record.answer = value if isinstance(value, str) and plain else None
    if record.answer is None and record.error_stage is None:
        record.problems.append("no LLM span with an answer" if not ok_llms
                               else "the LLM span has no output message")  # fmt: skip
    cut = sum(s.dropped_attributes for s in (*retrievers, *rerankers, *llms))
    if cut:
        record.problems.append(
            f"{cut} attribute(s) of stage spans were dropped by the tracer's attribute limit: "
            "documents may be missing (raise OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, e.g. to 10000)")
    repaired = sum(s.repaired for s in spans)
    if repaired:
        record.problems.append(
            f"{repaired} value(s) repaired to be stored (lone surrogates as U+FFFD, NUL "
            "removed, numbers out of range dropped)")
    missing_text = sum(1 for d in record.chunks() if d.text is None)
    if missing_text:
        record.problems.append(f"{missing_text} listed document(s) have no content")
    return record
