"""Run-log records: what each stage of a pipeline produced, one JSON object per line.

A run directory holds::

    manifest.json     Manifest (written once, at the start)
    evalset.jsonl     the eval set the run answered (copied, so the run is self-contained)
    documents.jsonl   ParsedDocument, one per parsed file
    chunks.jsonl      Chunk, the chunk corpus the retriever searched
    samples.jsonl     SampleRecord, one per answered sample, appended as they finish

Any program can write these files; ``cofe schema`` prints their JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cofe._ids import Identifier
from cofe.chain import STAGE_ORDER as STAGE_ORDER  # re-exported: the log names its stages
from cofe.chain import Stage as Stage
from cofe.runlog._compat import chunk_from_v2

RUNLOG_SCHEMA_VERSION = 3
"""2: ``top_k``, ``stages`` and ``meta`` in the manifest, and no other unknown field there.
3: chunks have a ``kind`` and ``derived_from`` (derived context items: summaries, entities,
relations, windows... built from corpus chunks), and the manifest says whether its chunks
are the whole ``corpus``. Older layouts are migrated when read
(``cofe.runlog._compat``)."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Manifest(_Record):
    """How the run was made: enough to reproduce it, to refuse mixing runs, and to score it.

    ``top_k`` and ``stages`` say what the scorer must not guess: how many of
    the pool's chunks the generator received when a record's ``context`` is
    null, and which stages the pipeline has (a pipeline without ``reranking``
    is never blamed on a reranker). ``None`` means unknown.
    """

    schema_version: int = Field(
        default=RUNLOG_SCHEMA_VERSION,
        ge=1,
        description="Version of this file's layout; a newer one than the reader knows is refused.",
    )
    run_id: Identifier
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    pipeline: dict[str, Any] = Field(
        default_factory=dict, description="Pipeline configuration (splitter, sizes, models, ...)."
    )
    evalset_sha256: str | None = Field(
        default=None, description="SHA-256 of the eval-set file the run answered."
    )
    versions: dict[str, str] = Field(default_factory=dict, description="Package versions used.")
    top_k: int | None = Field(
        default=None,
        ge=1,
        description=(
            "How many chunks of the pool (its first top_k) the generator received, for records "
            "whose context is null. null: unknown."
        ),
    )
    stages: list[Stage] | None = Field(
        default=None,
        description=(
            "The stages the pipeline has, in pipeline order, e.g. "
            '["parse", "chunking", "retrieval", "generation"] for one without a reranker. '
            "null: unknown."
        ),
        json_schema_extra={"uniqueItems": True},
    )
    document_sha256: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "SHA-256 of each parsed document's text, by doc_id: resuming the run after a "
            "document changed is refused. Empty: not recorded (runs of older cofe)."
        ),
    )
    corpus: Literal["whole", "partial"] = Field(
        default="whole",
        description=(
            "Whether chunks.jsonl holds the pipeline's whole corpus, or only the chunks it "
            "returned (a canary sent to a service whose index cofe cannot read): a partial "
            "corpus is not judged, and a point no returned chunk holds is unscorable."
        ),
    )
    meta: dict[str, Any] = Field(
        default_factory=dict, description="Free-form values (anything not a field above)."
    )

    @field_validator("stages")
    @classmethod
    def _one_each_in_pipeline_order(cls, stages: list[Stage] | None) -> list[Stage] | None:
        if stages is None:
            return None
        twice = sorted({s.value for s in stages if stages.count(s) > 1})
        if twice:
            raise ValueError(f"a stage is listed more than once: {', '.join(twice)}")
        return sorted(stages, key=STAGE_ORDER.__getitem__)


class ParsedDocument(_Record):
    """The text a parser produced for one source file."""

    doc_id: Identifier
    source: str = Field(description="File name or path the text was parsed from.")
    text: str
    meta: dict[str, Any] = Field(default_factory=dict)


CHUNK = "chunk"
"""The kind of a chunk the chunker made; every other kind is a derived item."""
DERIVED_KINDS = ("replaced", "citation", "summary", "entity", "relation", "community_report")
"""Kinds of derived items cofe's adapters write (any other non-blank name is accepted)."""


class Chunk(_Record):
    """One item a retriever can return or a generator can read; offsets index into the parsed
    text of its document.

    ``kind`` ``"chunk"`` is a chunk of the corpus (the chunker's output). Any other kind
    (``summary``, ``entity``, ``relation``, ``community_report``, ``replaced``, ``citation``,
    ...) is a *derived item*: text a pipeline built from corpus chunks, listed in
    ``derived_from`` when known (chunk ids, possibly of other derived items: a summary of
    summaries). Keyword measures read a derived item's own text (what the generator read);
    the chunking stage ignores it, and document-level measures use the documents of the
    corpus chunks it was derived from.
    """

    chunk_id: Identifier
    doc_id: Identifier
    text: str
    start: int | None = Field(default=None, ge=0, description="Start offset in the parsed text.")
    end: int | None = Field(default=None, ge=0, description="End offset in the parsed text.")
    kind: str = Field(
        default=CHUNK,
        min_length=1,
        pattern=r"\S",
        description=(
            '"chunk": a chunk of the corpus. Anything else is a derived item (e.g. "summary", '
            '"entity", "relation", "community_report", "replaced", "citation").'
        ),
    )
    derived_from: list[Identifier] | None = Field(
        default=None,
        description=(
            "A derived item's sources: the chunk ids it was built from (corpus chunks, or "
            "other derived items). [] or null: not known."
        ),
    )
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _typed_derivation(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        raw = chunk_from_v2(raw)
        if raw.get("derived_from") is not None and "kind" not in raw:
            raw = {**raw, "kind": "derived"}  # sources given: derived, of no named kind
        return raw

    @model_validator(mode="after")
    def _derived_items_have_a_kind(self) -> Chunk:
        if self.kind == CHUNK and self.derived_from is not None:
            raise ValueError(
                'an item with derived_from is a derived item: give it a kind other than "chunk" '
                '(e.g. "summary", "entity", "relation")'
            )
        return self

    @property
    def is_derived(self) -> bool:
        """Built by the pipeline from corpus chunks, not made by the chunker."""
        return self.kind != CHUNK


class RankedChunk(_Record):
    """A chunk in a ranked list, best first."""

    chunk_id: Identifier
    score: float | None = None


class StageError(_Record):
    """An exception a stage raised for one sample; later stages did not run."""

    stage: Stage
    type: str
    message: str
    traceback: str | None = None


class SampleRecord(_Record):
    """What the pipeline produced for one eval sample.

    ``pool`` is the retriever's ranked candidate pool (before any reranking);
    ``context`` the ranked chunks the generator received, or ``null`` when
    they are the pool's first ``Manifest.top_k`` (a pipeline that slices its
    pool without reranking). ``answer`` is ``null`` when generation did not run.
    """

    sample_id: Identifier
    pool: list[RankedChunk] | None = None
    context: list[RankedChunk] | None = None
    answer: str | None = None
    latency: dict[Stage, float] = Field(
        default_factory=dict, description="Seconds spent in each stage for this sample."
    )
    error: StageError | None = None


class Ranked(Protocol):
    """An item of a ranked list, as any record of a query holds it: named by its chunk id."""

    @property
    def chunk_id(self) -> str: ...


class QueryOutputs(Protocol):
    """What one query produced at each stage: the fields every record of a query shares.

    One family, one base (these fields, as ``SampleRecord`` declares them), and a view per
    job, each converting to and from ``SampleRecord``:

    - ``SampleRecord``: the run log's line (this, with its sample id and error);
    - ``CompactRecord`` (``cofe.runlog``): its compact form for scoring and judging -- shared
      chunk ids, no pydantic objects (``compact_record``);
    - ``RecordDraft`` (``cofe.adapters``): a ``SampleRecord`` while an adapter builds it,
      stage by stage (``RecordDraft.of``, ``.record(sample_id)``);
    - ``TraceRecord`` (``cofe.adapters``): a live trace's record, assembled from its spans
      -- the documents with their texts, the query, what the spans lacked
      (``TraceRecord.sample``, ``TraceRecord.of_sample``).

    mypy checks that each keeps these fields (``cofe.adapters._span_assembly``).
    """

    @property
    def pool(self) -> Sequence[Ranked] | None: ...
    @property
    def context(self) -> Sequence[Ranked] | None: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def latency(self) -> Mapping[Stage, float]: ...


QUERY_OUTPUTS = ("pool", "context", "answer", "latency")
"""The fields of ``QueryOutputs``, by name (every record of a query has them)."""
