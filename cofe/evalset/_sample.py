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

    any_of: list[str] = Field(min_length=1)


Keyword = str | AnyOf
"""A verbatim text fragment, or a set of alternative fragments."""

InformationPoint = list[Keyword]
"""One item of ``fine_keywords``: hit when *all* its keywords are found."""


def keyword_alternatives(keyword: Keyword) -> list[str]:
    return [keyword] if isinstance(keyword, str) else list(keyword.any_of)


class SourceRef(BaseModel):
    """Where the answer lives: a document (file name or doc id), optionally a span."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc: Identifier
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)


class EvalSample(BaseModel):
    """One labelled query. Unknown fields of an input record are kept in ``meta``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Identifier
    query: str = Field(min_length=1)
    query_type: QueryType = QueryType.OTHER
    coarse_keywords: list[str] = Field(default_factory=list)
    fine_keywords: list[InformationPoint] = Field(default_factory=list)
    reference_answer: str | None = None
    source: SourceRef | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

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
