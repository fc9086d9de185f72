"""The JSON an annotation call must return, validated with pydantic."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DraftType = Literal["factual", "analytical", "comparative", "tutorial"]


class DraftQuery(BaseModel):
    """One query the model proposes for a segment (before the automatic checks)."""

    model_config = ConfigDict(extra="ignore")

    type: DraftType
    query: str = Field(min_length=3)
    coarse_keywords: list[str] = Field(min_length=1)
    fine_keywords: list[list[str]] = Field(min_length=1)
    answer: str = Field(min_length=1)

    @field_validator("fine_keywords")
    @classmethod
    def _points_not_empty(cls, points: list[list[str]]) -> list[list[str]]:
        if any(not point or not all(k.strip() for k in point) for point in points):
            raise ValueError("every information point needs at least one non-empty fragment")
        return points


class DraftReply(BaseModel):
    """The reply: up to four queries. Two of one type are both checked (a type that does not
    fit the query is relabelled by the checks, which can make two of one type anyway; the
    duplicate check catches a query asked twice)."""

    model_config = ConfigDict(extra="ignore")

    queries: list[DraftQuery] = Field(max_length=4)
