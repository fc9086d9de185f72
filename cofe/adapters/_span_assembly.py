"""One query's OpenInference spans -> what each stage produced (framework-neutral).

The one span->record code of cofe: ``cofe run`` over an instrumented LangChain, LangGraph,
Haystack or DSPy pipeline (:mod:`cofe.adapters._openinference`) assembles each query's
spans here, and production monitoring can assemble a stored trace with the same function
(both hold :class:`Span`, the one span type).

OpenInference conventions read (``openinference.span.kind`` names the kind):

- the root span carries the query (``input.value``; a JSON input's ``query``...);
- RETRIEVER spans list documents (``retrieval.documents.N.document.{id,content,score}``).
  A retriever holding other retrievers (multi-query, ensemble/fusion, contextual
  compression) is *composite*: the **pool** is what the innermost retrievers returned --
  their lists merged rank by rank (a list's first documents, then every list's second...),
  each document once -- and the composite's own output is a step after the pool, like a
  reranker's;
- RERANKER spans list what went in and came out (``reranker.input_documents`` /
  ``reranker.output_documents``); the last reranker's output is what the generator got;
- LLM spans carry the answer (``llm.output_messages.N.message.content``, else
  ``output.value``) and the prompt (``llm.input_messages.N.message.content``). An LLM span
  inside a retriever or reranker (query rewriting, an LLM filter) belongs to that stage;
  the generation is the last LLM span outside them.
- **context**: the documents of the last step before generation (the last reranker's output,
  else the outermost retrievers' merged output) that the generating LLM's prompt holds,
  when its prompt is recorded: a chain that formats only some documents, or an agent that
  read only some retrievals, is recorded as what the LLM read.

A trace that lacks a part is still assembled: what is missing is said in ``problems``;
spans of kinds that say nothing about the stages are counted in ``ignored``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cofe.adapters._draft import text_id
from cofe.runlog import Chunk, RankedChunk, SampleRecord, Stage, StageError

if TYPE_CHECKING:
    from cofe.adapters._draft import RecordDraft
    from cofe.runlog import CompactRecord, QueryOutputs

KIND = "openinference.span.kind"
KNOWN_KINDS = frozenset(
    {
        "CHAIN",
        "RETRIEVER",
        "RERANKER",
        "LLM",
        "EMBEDDING",
        "TOOL",
        "AGENT",
        "GUARDRAIL",
        "EVALUATOR",
        "PROMPT",
        "UNKNOWN",
    }
)
STAGE_OF_KIND = {"RETRIEVER": Stage.RETRIEVAL, "RERANKER": Stage.RERANKING, "LLM": Stage.GENERATION}
NOT_A_QUERY = (
    "no RETRIEVER, RERANKER or LLM span: not a RAG query (index building, an embedding call, ...)"
)
# list indices have at most six digits: a 5,000-digit index (past Python's limit for int())
# is not a document of any real list, and is left unread rather than failing the trace
_DOC_FIELDS = {f"document.{f}": f for f in ("id", "content", "score", "metadata")}
_OUT_MESSAGE = re.compile(r"^llm\.output_messages\.(\d{1,6})\.message\.(content|role)$")
_IN_MESSAGE = re.compile(
    r"^llm\.input_messages\.(\d{1,6})\.message\.(?:content"
    r"|contents\.(\d{1,6})\.message_content\.text)$"
)
# a document counts as in the prompt when the prompt holds it whole or holds its first
# characters (a chain that truncates long documents still gave them to the LLM)
PROMPT_PREFIX_CHARS = 100


@dataclass(frozen=True, slots=True)
class Span:
    """One finished span (ids as lower-case hex): as the OpenTelemetry SDK gave it in
    process (``cofe run``'s adapters), or as the monitor read it from an export and stored
    it (``cofe.monitor``: its times checked, its values made storable). The one span type."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    status: str
    status_message: str
    attributes: dict[str, Any]
    events: tuple[dict[str, Any], ...] = ()  # {"name", "time_ns", "attributes"}
    dropped_attributes: int = 0  # attributes the SDK's limit dropped (128 by default)
    repaired: int = 0  # values the monitor changed or dropped to store them

    @property
    def kind(self) -> str | None:
        return kind_of(self)

    @property
    def seconds(self) -> float:
        return _seconds(self)


# the old name of what the assembler reads: every span is a Span now
SpanLike = Span


def kind_of(span: Span) -> str | None:
    """The OpenInference span kind (``RETRIEVER``, ``LLM``, ...), upper case; None if absent."""
    kind = span.attributes.get(KIND)
    return kind.upper() if isinstance(kind, str) and kind.strip() else None


def _seconds(span: Span) -> float:
    return max(0, span.end_ns - span.start_ns) / 1e9


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
    """What one query's trace says each stage produced; the trace id names the sample. The
    family's view of a live trace (``cofe.runlog.QueryOutputs``): its documents carry their
    texts (the monitor stores them), and it says what the spans lacked."""

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
    retrievals: int = 0  # innermost retrievals merged into the pool (an agent's several)

    def chunks(self) -> Iterable[Doc]:
        for docs in (self.pool, self.context):
            yield from docs or ()

    def sample(
        self, sample_id: str, ranked: Callable[[list[Doc]], list[RankedChunk]] | None = None
    ) -> SampleRecord:
        """This trace as the run-log record of a sample (the one record of a query): the
        pool's and the context's documents as ranked chunks (``ranked``; default: by their
        content ids), the stage latencies, the failing stage as the sample's error."""
        rank = ranked or _content_ranked
        error = None
        if self.error_stage is not None:
            kind, _, message = (self.error or "Error").partition(": ")
            error = StageError(stage=self.error_stage, type=kind, message=message)
        return SampleRecord(
            sample_id=sample_id,
            pool=rank(self.pool) if self.pool is not None else None,
            context=rank(self.context) if self.context is not None else None,
            answer=self.answer,
            latency=dict(self.latency),
            error=error,
        )

    @classmethod
    def of_sample(
        cls,
        trace_id: str,
        query: str,
        sample: SampleRecord,
        chunks: Mapping[str, Chunk],
        *,
        started_ns: int,
        ended_ns: int,
        stages: Sequence[Stage] | None,
        top_k: int | None,
    ) -> TraceRecord:
        """A run-log record (what an adapter produced for one query) as a trace record: its
        chunks' texts from ``chunks``; no context and a known ``top_k``: the pool's top-K."""
        pool = _docs_of(sample.pool, chunks)
        context = _docs_of(sample.context, chunks)
        if context is None and pool is not None and top_k is not None:
            context = pool[:top_k]  # no reranker: the generator received the pool's top-K
        seen = [
            s
            for s in (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)
            if s in sample.latency or (stages is not None and s in stages and sample.error is None)
        ]
        error = sample.error
        return cls(
            trace_id=trace_id,
            started_ns=started_ns,
            ended_ns=ended_ns,
            query=query,
            pool=pool,
            context=context,
            answer=sample.answer,
            latency={s: v for s, v in sample.latency.items() if s in STAGE_OF_KIND.values()},
            stages=tuple(seen),
            error_stage=error.stage if error else None,
            error=f"{error.type}: {error.message}" if error else None,
        )


def _content_ranked(docs: list[Doc]) -> list[RankedChunk]:
    return [RankedChunk(chunk_id=d.chunk_id, score=d.score) for d in docs]


def _docs_of(ranked: Sequence[RankedChunk] | None, chunks: Mapping[str, Chunk]) -> list[Doc] | None:
    if ranked is None:
        return None
    out = []
    for r in ranked:
        chunk = chunks.get(r.chunk_id)
        text = chunk.text if chunk is not None else None
        out.append(
            Doc(
                text_id(text) if text is not None else f"id:{r.chunk_id}",
                r.score,
                r.chunk_id,
                text,
                len(text) if text is not None else None,
            )
        )
    return out


def documents_of_span(attributes: Mapping[str, Any], prefix: str) -> list[Doc] | None:
    """The documents listed under ``prefix`` (e.g. ``retrieval.documents``); None: none listed."""
    by_index: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    start = len(head)
    for key, value in attributes.items():
        if not key.startswith(head):  # most attributes are not this list's
            continue
        # "{prefix}.{n}.document.{field}", read without a regex: n of one to six digits, one
        # of the four fields
        index, _, tail = key[start:].partition(".")
        if 0 < len(index) <= 6 and index.isdecimal() and tail in _DOC_FIELDS:
            by_index.setdefault(int(index), {})[_DOC_FIELDS[tail]] = value
    if not by_index:
        return None
    out = []
    for n in sorted(by_index):
        doc = by_index[n]
        content, given = doc.get("content"), doc.get("id")
        text = content if isinstance(content, str) else None
        ref = str(given) if given not in (None, "") else None
        if text is not None:
            chunk_id = text_id(text)
        elif ref is not None:
            chunk_id = f"id:{ref}"
        else:
            chunk_id = f"unnamed:{n}"
        raw = doc.get("score")
        try:
            score = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            score = None
        out.append(Doc(chunk_id, score, ref, text, len(text) if text is not None else None))
    return out


def merged_ranks(lists: Sequence[Sequence[Doc]]) -> list[Doc]:
    """Several ranked lists as one: every list's first document, then every list's second...,
    each document once (the first time it comes). Rank r of the result holds the r-th results
    of every retrieval, so a cutoff looks as deep into each."""
    out: list[Doc] = []
    seen: set[str] = set()
    for rank in range(max((len(docs) for docs in lists), default=0)):
        for docs in lists:
            if rank < len(docs) and docs[rank].chunk_id not in seen:
                seen.add(docs[rank].chunk_id)
                out.append(docs[rank])
    return out


class _Ancestry:
    """What each span inherits from its ancestors, computed once per span from its parent's
    (a chain of 20,000 spans is 20,000 steps, not 20,000 walks of up to 20,000 each); a
    cycle in bad data is cut where it closes."""

    def __init__(self, by_id: Mapping[str, Span], kinds: Mapping[str, str | None]) -> None:
        self.by_id, self.kinds = by_id, kinds
        self._stage: dict[str, Span | None] = {}  # the outermost stage span, itself included
        self._kinded: dict[str, bool] = {}  # some ancestor has an OpenInference kind

    def _resolve(self, span: Span) -> None:
        chain: list[Span] = []  # the span and its ancestors not yet resolved, nearest first
        seen: set[str] = set()
        current: Span | None = span
        while (
            current is not None
            and current.span_id not in self._stage
            and current.span_id not in seen
        ):
            seen.add(current.span_id)
            chain.append(current)
            current = self.by_id.get(current.parent_id or "")
        outer: Span | None
        if current is None or current.span_id in seen:  # the top, or a cycle: cut there
            outer, kinded = None, False
        else:  # resolved before: what it passes on to its children
            outer = self._stage[current.span_id]
            kinded = self._kinded[current.span_id] or self.kinds[current.span_id] is not None
        for link in reversed(chain):  # outermost first
            if outer is None and self.kinds[link.span_id] in STAGE_OF_KIND:
                outer = link
            self._stage[link.span_id] = outer
            self._kinded[link.span_id] = kinded
            kinded = kinded or self.kinds[link.span_id] is not None

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


def _listing_retrievers(
    spans: Sequence[Span], by_id: Mapping[str, Span], listed: Mapping[str, list[Doc]]
) -> tuple[list[Span], list[Span]]:
    """(innermost, outermost) RETRIEVER spans that list documents, in start order (``spans``
    are). Spans listing nothing are passed through: LlamaIndex nests a ``_retrieve`` span
    without documents inside each ``retrieve`` that lists them."""
    # each span's nearest listing ancestor, found once per span (a parent chain of 10,000
    # listing retrievers walked every ancestor of every span: 18 s inside the write lock)
    nearest: dict[str, str | None] = {}
    for span in spans:
        chain: list[str] = []
        on_chain: set[str] = set()
        found: str | None = None
        parent = by_id.get(span.parent_id or "")
        node = span.span_id
        while True:
            if node in nearest:
                break
            chain.append(node)
            on_chain.add(node)
            if parent is None or parent.span_id in on_chain:  # a root, or a cycle is cut
                found = None
                break
            if parent.span_id in listed:
                found = parent.span_id
                break
            node, parent = parent.span_id, by_id.get(parent.parent_id or "")
        if node in nearest and node not in on_chain:
            found = nearest[node] if node not in listed else node
        for walked in reversed(chain):  # the chain's spans share the answer found above
            nearest[walked] = found
            if walked in listed:
                found = walked
    held = {s for s in listed if nearest.get(s) is not None}
    holders = {a for s in listed if (a := nearest.get(s)) is not None}
    inner = [s for s in spans if s.span_id in listed and s.span_id not in holders]
    outer = [s for s in spans if s.span_id in listed and s.span_id not in held]
    return inner, outer


def query_of(root: Span) -> str | None:
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
                    return str(parsed[key])
    return value


def answer_of(llm: Span) -> str | None:
    messages: dict[int, dict[str, Any]] = {}
    for key, value in llm.attributes.items():
        match = _OUT_MESSAGE.match(key)
        if match:
            messages.setdefault(int(match[1]), {})[match[2]] = value
    contents = [
        m.get("content")
        for _, m in sorted(messages.items())
        if m.get("role") in (None, "assistant") and isinstance(m.get("content"), str)
    ]
    if contents:
        return str(contents[-1])
    value = llm.attributes.get("output.value")
    return value if isinstance(value, str) else None


def prompt_of(llm: Span) -> str | None:
    """The text an LLM span was given (its input messages, else ``input.value``); None when
    the span does not record it (a tracer configured to hide inputs)."""
    parts: list[tuple[int, int, str]] = []
    for key, value in llm.attributes.items():
        match = _IN_MESSAGE.match(key)
        if match and isinstance(value, str):
            parts.append((int(match[1]), int(match[2] or 0), value))
    if parts:
        return "\n".join(text for _, _, text in sorted(parts))
    value = llm.attributes.get("input.value")
    if not isinstance(value, str) or not value:
        return None
    if value[:1] in "{[":  # a JSON input (LlamaIndex: the template and its prompt_args): its
        # strings as written, newlines and all, not their escaped form
        try:
            return "\n".join(_strings(json.loads(value)))
        except (ValueError, RecursionError):
            pass
    return value


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _normal(text: str) -> str:
    # str.split() splits at the characters ``\s`` matches (str.isspace): the same text as
    # re.sub(r"\s+", " ", text).strip(), in a third of the time
    return " ".join(text.split())


# a document's text is normalised once, not on every query that lists it (a pool of 30
# chunks, each normalised per query, was most of the assembly's time)
_normal_doc = functools.lru_cache(maxsize=1 << 15)(_normal)


def in_prompt(docs: Sequence[Doc], prompt: str, query: str | None = None) -> list[Doc]:
    """The documents a prompt holds (up to whitespace), whole or by their first characters
    -- each in its own place. Overlapping chunks share words: a chunk whose text appears only
    inside a longer one's, or whose first characters (a template may cut a long text) start
    inside a document the prompt holds whole, was not given; nor a short chunk (a title)
    that the prompt holds only as words of the question."""
    flat = _normal(prompt)
    if query and _normal(query):
        flat = flat.replace(_normal(query), "\x00")
    whole: list[tuple[Doc, str]] = []
    prefix: list[tuple[Doc, str]] = []
    for doc in docs:
        text = _normal_doc(doc.text) if doc.text is not None else ""
        if not text:
            continue
        if text in flat:
            whole.append((doc, text))
        elif text[:PROMPT_PREFIX_CHARS] in flat:
            prefix.append((doc, text[:PROMPT_PREFIX_CHARS]))
    placed = [(at, at + len(text)) for _, text in whole for at in [flat.find(text)]]
    given: set[int] = set()
    for is_whole, (doc, needle) in [(True, w) for w in whole] + [(False, p) for p in prefix]:
        at = flat.find(needle)
        while at != -1:
            end = at + len(needle)
            if is_whole:  # inside a longer document the prompt holds
                hidden = any(s <= at and end <= e and e - s > end - at for s, e in placed)
            else:  # starting inside a document the prompt holds whole
                hidden = any(s <= at < e for s, e in placed)
            if not hidden:
                given.add(id(doc))
                break
            at = flat.find(needle, at + 1)
    return [doc for doc in docs if id(doc) in given]


def _error_text(span: Span) -> str:
    for event in span.events:
        if event.get("name") == "exception":
            attrs = event.get("attributes") or {}
            kind = str(attrs.get("exception.type") or "Exception")
            message = str(attrs.get("exception.message") or "")
            return f"{kind}: {message}" if message else kind
    return span.status_message or "the span's status is ERROR"


def assemble(trace_id: str, spans: Sequence[Span]) -> TraceRecord:
    """The stage record of one trace (see the module's docstring)."""
    spans = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    by_id = {s.span_id: s for s in spans}
    kinds = {s.span_id: kind_of(s) for s in spans}  # read once: every rule below asks
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
    root = (
        true_roots[0]
        if true_roots
        else next((s for s in roots if kinds[s.span_id] in ("CHAIN", "AGENT")), None)
    )  # (a stage span's chain is missing)
    if root is None:
        record.problems.append("no root span (the trace is incomplete: its first span never came)")
    ancestry = _Ancestry(by_id, kinds)
    if root is not None and root.attributes.get("input.value") is None:
        root = next(
            (
                s
                for s in spans
                if kinds[s.span_id]
                and s.attributes.get("input.value") is not None
                and not ancestry.has_kinded_ancestor(s)
            ),
            root,
        )
    for span in spans:
        kind = kinds[span.span_id]
        if kind is None:
            record.ignored["(no openinference.span.kind)"] = (
                record.ignored.get("(no openinference.span.kind)", 0) + 1
            )
        elif kind not in KNOWN_KINDS:
            record.ignored[kind] = record.ignored.get(kind, 0) + 1
    if root is not None:
        record.query = query_of(root)
        if record.query is None:
            record.problems.append("the root span has no input.value (the query)")

    stage_of = {s.span_id: ancestry.stage_span(s) for s in spans}

    def outermost(kind: str) -> list[Span]:
        return [s for s in spans if kinds[s.span_id] == kind and stage_of[s.span_id] is s]

    retrievers, rerankers, llms = outermost("RETRIEVER"), outermost("RERANKER"), outermost("LLM")
    if not (retrievers or rerankers or llms):
        # stored and counted, but not a query: its stages say nothing about the pipeline's
        record.is_query = False
        record.problems = [NOT_A_QUERY]
        return record
    seen = []
    for stage, group in (
        (Stage.RETRIEVAL, retrievers),
        (Stage.RERANKING, rerankers),
        (Stage.GENERATION, llms),
    ):
        if group:
            seen.append(stage)
            record.latency[stage] = round(sum(_seconds(s) for s in group), 6)
    record.stages = tuple(seen)
    _blame(record, root, spans, retrievers, rerankers, llms, seen)

    ok_retrievers = [s for s in retrievers if s.status != "error"]
    selected: list[Doc] | None = None  # the last step's documents before generation
    if ok_retrievers:
        ok_ids = {id(s) for s in ok_retrievers}
        listed = {
            s.span_id: docs
            for s in spans
            if kinds[s.span_id] == "RETRIEVER"
            and id(stage_of[s.span_id]) in ok_ids
            and s.status != "error"
            and (docs := documents_of_span(s.attributes, "retrieval.documents")) is not None
        }
        # the pool: what the innermost retrievers returned (a composite's output comes after)
        inner, outer = _listing_retrievers(spans, by_id, listed)
        record.retrievals = len(inner)
        record.pool = merged_ranks([listed[s.span_id] for s in inner])
        selected = merged_ranks([listed[s.span_id] for s in outer])
        if not listed:
            record.problems.append("the RETRIEVER span lists no documents")
    elif record.error_stage is not Stage.RETRIEVAL:
        record.problems.append("no RETRIEVER span (the pool is unknown)")

    ok_rerankers = [s for s in rerankers if s.status != "error"]
    if ok_rerankers:
        last = ok_rerankers[-1]
        selected = documents_of_span(last.attributes, "reranker.output_documents")
        if selected is None:
            record.problems.append("the RERANKER span lists no output documents")
            selected = []
        if record.pool is None:  # no retriever span: the first reranker's input is the pool
            record.pool = documents_of_span(ok_rerankers[0].attributes, "reranker.input_documents")
    elif rerankers:
        selected = None  # the reranker failed: nothing reached the generator

    ok_llms = [s for s in llms if s.status != "error"]
    generator = max(ok_llms, key=lambda s: s.end_ns) if ok_llms else None
    if selected is not None:
        record.context = _given(selected, generator, record.problems, record.query)
    if generator is not None:
        record.answer = answer_of(generator)
    if record.answer is None and ok_llms:  # streaming: only the innermost call has the text
        inner = [
            s
            for s in spans
            if kinds[s.span_id] == "LLM"
            and s.status != "error"
            and answer_of(s)
            and stage_of[s.span_id] in ok_llms
        ]
        if inner:
            record.answer = answer_of(max(inner, key=lambda s: s.end_ns))
    if record.answer is None and root is not None and root.status != "error" and ok_llms:
        value = root.attributes.get("output.value")
        plain = not str(root.attributes.get("output.mime_type", "")).endswith("json")
        record.answer = value if isinstance(value, str) and plain else None
    if record.answer is None and record.error_stage is None:
        record.problems.append(
            "no LLM span with an answer" if not ok_llms else "the LLM span has no output message"
        )
    _say_losses(record, spans, retrievers, rerankers, llms)
    return record


def _given(
    selected: list[Doc], generator: Span | None, problems: list[str], query: str | None = None
) -> list[Doc]:
    """What the generating LLM read of the selected documents: those its prompt holds."""
    if generator is None:
        return list(selected)
    prompt = prompt_of(generator)
    if prompt is None:
        return list(selected)
    given = in_prompt(selected, prompt, query)
    if selected and not given:  # a prompt that rewrites documents: keep what was selected
        problems.append(
            "the generating LLM's prompt holds none of the retrieved documents' "
            "text; the context is the documents selected before it"
        )
        return list(selected)
    return given


def _blame(
    record: TraceRecord,
    root: Span | None,
    spans: Sequence[Span],
    retrievers: list[Span],
    rerankers: list[Span],
    llms: list[Span],
    seen: list[Stage],
) -> None:
    """The stage that raised: an error counts when a stage span or the root failed; one
    handled inside (a retried embedding call in a retriever that then succeeded) does not."""
    failures = [s for s in (*retrievers, *rerankers, *llms) if s.status == "error"]
    if failures:
        first = min(failures, key=lambda s: (s.start_ns, s.end_ns))
        kind = kind_of(first)
        assert kind is not None  # a stage span has a kind
        record.error_stage, record.error = STAGE_OF_KIND[kind], _error_text(first)
    elif root is not None and root.status == "error":
        # the chain failed outside the stage spans: blame the stage after the last one seen
        # (never a reranker the trace does not show), or generation after it
        stage = Stage.GENERATION if seen else Stage.RETRIEVAL
        failed = [s for s in spans if s.status == "error"]
        failed_parents = {f.parent_id for f in failed}  # a set: linear in the failures
        deepest = next((f for f in failed if f.span_id not in failed_parents), root)
        record.error_stage, record.error = stage, _error_text(deepest)


def _say_losses(
    record: TraceRecord,
    spans: Sequence[Span],
    retrievers: list[Span],
    rerankers: list[Span],
    llms: list[Span],
) -> None:
    cut = sum(s.dropped_attributes for s in (*retrievers, *rerankers, *llms))
    if cut:
        record.problems.append(
            f"{cut} attribute(s) of stage spans were dropped by the tracer's attribute limit: "
            "documents may be missing (raise OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, e.g. to 10000)"
        )
    repaired = sum(s.repaired for s in spans)
    if repaired:
        record.problems.append(
            f"{repaired} value(s) repaired to be stored (lone surrogates as U+FFFD, NUL "
            "removed, numbers out of range dropped)"
        )
    missing_text = sum(1 for d in record.chunks() if d.text is None)
    if missing_text:
        record.problems.append(f"{missing_text} listed document(s) have no content")


if TYPE_CHECKING:

    def _one_family(
        sample: SampleRecord, compact: CompactRecord, draft: RecordDraft, trace: TraceRecord
    ) -> list[QueryOutputs]:
        """mypy --strict checks here that every record of a query still has the fields
        the family shares (``QueryOutputs``), typed alike."""
        return [sample, compact, draft, trace]
