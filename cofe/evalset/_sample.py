"""The evaluation sample: a query labelled with coarse and fine keywords."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cofe._ids import Identifier

EVALSET_SCHEMA_VERSION = 1


class QueryType(StrEnum):
    FACTUAL = "factual"
    ANALYTICAL = "analytical"
    COMPARATIVE = "comparative"
    TUTORIAL = "tutorial"
    OTHER = "other"


class AnyOf(BaseModel):
    """A keyword given as alternatives: found when any one of them is found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    any_of: list[str] = Field(
        min_length=1,
        description=(
            'Alternative spellings of one keyword (e.g. ["1889", "eighteen eighty-nine"]): '
            "the keyword is found when any one of them is."
        ),
    )


Keyword = str | AnyOf
"""A verbatim text fragment, or a set of alternative fragments."""

InformationPoint = list[Keyword]
"""One item of ``fine_keywords``: hit when *all* its keywords are found."""


def keyword_alternatives(keyword: Keyword) -> list[str]:
    return [keyword] if isinstance(keyword, str) else list(keyword.any_of)


class SourceRef(BaseModel):
    """Where the answer lives: a document (file name or doc id), optionally a span."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc: Identifier = Field(
        description="The document holding the answer: its file name (as under --docs) or doc_id."
    )
    start: int | None = Field(
        default=None, ge=0, description="Where the answer's span starts in the parsed text."
    )
    end: int | None = Field(
        default=None, ge=0, description="Where the answer's span ends in the parsed text."
    )


class EvalSample(BaseModel):
    """One labelled query. Unknown fields of an input record are kept in ``meta``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Identifier = Field(description="The sample's id, unique in the eval set.")
    query: str = Field(min_length=1, description="The question sent to the pipeline.")
    query_type: QueryType = Field(
        default=QueryType.OTHER, description="The kind of question (results are split by it)."
    )
    coarse_keywords: list[str] = Field(
        default_factory=list,
        description=(
            'The entity the question is about (e.g. ["Eiffel Tower"]): a chunk counts for '
            "the sample when its document names one of them (or is the sample's source)."
        ),
    )
    fine_keywords: list[InformationPoint] = Field(
        default_factory=list,
        description=(
            "The information points the answer needs, as a list of points; each point is a "
            "list of keywords that must ALL be found for the point to count, e.g. "
            '[["Eiffel Tower", "1889"], ["324 metres"]] is two points. A keyword is a '
            "verbatim fragment of the parsed text (see cofe parse FILE) or "
            '{"any_of": [alternatives]}. A flat list ["a", "b"] is not a point list: write '
            '[["a"], ["b"]] (two points) or [["a", "b"]] (one point needing both).'
        ),
    )
    reference_answer: str | None = Field(
        default=None, description="A correct answer, for the answer measures that compare."
    )
    source: SourceRef | None = Field(
        default=None, description="Where the answer lives (a document, optionally a span)."
    )
    meta: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form values; an input record's unknown fields are kept here.",
    )

    @model_validator(mode="before")
    @classmethod
    def _keep_unknown_fields_in_meta(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields)
        extra = {key: value for key, value in data.items() if key not in known}
        if not extra:
            return data
        kept = {key: value for key, value in data.items() if key in known}
        meta = dict(kept.get("meta") or {})
        meta.update(extra)
        kept["meta"] = meta
        return kept
