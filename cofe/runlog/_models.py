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

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RUNLOG_SCHEMA_VERSION = 1


class Stage(StrEnum):
    PARSE = "parse"
    CHUNKING = "chunking"
    RETRIEVAL = "retrieval"
    RERANKING = "reranking"
    GENERATION = "generation"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Manifest(_Record):
    """How the run was made: enough to reproduce it and to refuse mixing runs."""

    model_config = ConfigDict(frozen=True, extra="allow")

    schema_version: int = RUNLOG_SCHEMA_VERSION
    run_id: str = Field(min_length=1)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    pipeline: dict[str, Any] = Field(
        default_factory=dict, description="Pipeline configuration (splitter, sizes, models, ...)."
    )
    evalset_sha256: str | None = Field(
        default=None, description="SHA-256 of the eval-set file the run answered."
    )
    versions: dict[str, str] = Field(default_factory=dict, description="Package versions used.")


class ParsedDocument(_Record):
    """The text a parser produced for one source file."""

    doc_id: str = Field(min_length=1)
    source: str = Field(description="File name or path the text was parsed from.")
    text: str
    meta: dict[str, Any] = Field(default_factory=dict)


class Chunk(_Record):
    """One chunk of the corpus; offsets index into the parsed text of its document."""

    chunk_id: str = Field(min_length=1)
    doc_id: str = Field(min_length=1)
    text: str
    start: int | None = Field(default=None, ge=0, description="Start offset in the parsed text.")
    end: int | None = Field(default=None, ge=0, description="End offset in the parsed text.")
    meta: dict[str, Any] = Field(default_factory=dict)


class RankedChunk(_Record):
    """A chunk in a ranked list, best first."""

    chunk_id: str = Field(min_length=1)
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
    ``context`` the final ranked context given to the generator, or ``null``
    when the pipeline has no reranking stage (the context is then the pool's
    top-K). ``answer`` is ``null`` when generation did not run.
    """

    sample_id: str = Field(min_length=1)
    pool: list[RankedChunk] | None = None
    context: list[RankedChunk] | None = None
    answer: str | None = None
    latency: dict[Stage, float] = Field(
        default_factory=dict, description="Seconds spent in each stage for this sample."
    )
    error: StageError | None = None
