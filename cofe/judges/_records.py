"""The judge's replies (validated) and what ``cofe judge`` stores per sample."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cofe._ids import Identifier


class ClaimsReply(BaseModel):
    answer_claims: list[str]
    reference_claims: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    noncommittal: bool = False

    @field_validator("answer_claims", "reference_claims", "questions")
    @classmethod
    def _no_blank(cls, claims: list[str]) -> list[str]:
        return [c.strip() for c in claims if c and c.strip()]


class AnswerClaimCheck(BaseModel):
    claim: int = Field(ge=0)
    context: bool
    source: bool | None = None
    reference: bool | None = None


class ReferenceClaimCheck(BaseModel):
    claim: int = Field(ge=0)
    answer: bool
    context: bool | None = None


class ChecksReply(BaseModel):
    answer_claims: list[AnswerClaimCheck]
    reference_claims: list[ReferenceClaimCheck] = Field(default_factory=list)
    useful_chunks: list[int] = Field(default_factory=list)
    correctness: int | None = Field(default=None, ge=1, le=5)


class Claim(BaseModel):
    """One answer claim and where it is supported (None: that passage was not given)."""

    model_config = ConfigDict(extra="forbid")
    text: str
    context: bool
    source: bool | None = None
    reference: bool | None = None

    @property
    def label(self) -> str:
        """supported by the context / by the source only / by neither (RAGChecker's terms)."""
        if self.context:
            return "context"
        if self.source:
            return "source_only"
        return "unsupported" if self.source is not None else "not_in_context"


class ReferenceClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    answer: bool
    context: bool | None = None  # supported by the context (None: not asked)


class Judgement(BaseModel):
    """What ``cofe judge`` concluded about one sample's answer (a line of judgements.jsonl)."""

    model_config = ConfigDict(extra="forbid")
    sample_id: Identifier
    repeat: int = Field(default=0, ge=0, description="0 scores the run; 1.. measure variance")
    model: str
    prompt_version: str
    inputs: str = Field(description="Digest of the question, answer, context, source, reference.")
    status: Literal["judged", "unscored"]
    reason: str | None = None
    claims: list[Claim] = Field(default_factory=list)
    reference_claims: list[ReferenceClaim] = Field(default_factory=list)
    no_source: str | None = None
    no_reference: str | None = None
    questions: list[str] = Field(default_factory=list, description="Questions the answer answers.")
    noncommittal: bool | None = None
    answer_relevancy: float | None = None
    answer_similarity: float | None = None
    correctness: int | None = Field(default=None, ge=1, le=5, description="1-5 vs the reference.")
    useful_chunks: list[bool] | None = Field(
        default=None, description="Per context chunk: helps reach the reference (RAGAS)."
    )
    no_embeddings: str | None = Field(default=None, description="Why the two are missing.")
    calls: int = 0
    raw: list[str] = Field(default_factory=list, description="The judge's replies, as received.")
