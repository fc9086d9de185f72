"""The judge's replies (validated) and what ``cofe judge`` stores per sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cofe._ids import Identifier


class ClaimsReply(BaseModel):
    answer_claims: list[str]
    # asked for until judge-5; the reference's claims are now its sentences (no call), and a
    # reply that still lists some is not refused for it
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


class StepClaimCheck(BaseModel):
    """A step's reply: one answer claim against each passage given."""

    context: bool
    source: bool | None = None
    reference: bool | None = None


class StepReferenceCheck(BaseModel):
    """A step's reply: one reference claim against the answer and the context."""

    answer: bool
    context: bool | None = None


class ReferenceClaimCheck(BaseModel):
    claim: int = Field(ge=0)
    answer: bool
    context: bool | None = None


PointVerdict = Literal["support", "partial", "not_support"]
"""Does a text convey an information point (TREC 2024 RAG's nugget assignment labels)?"""

# spellings a judge writes for the three labels (case, spaces and hyphens aside)
_SPELLINGS = {
    "supported": "support",
    "partially": "partial",
    "partially_supported": "partial",
    "partial_support": "partial",
    "not_supported": "not_support",
    "unsupported": "not_support",
}


class PointCheck(BaseModel):
    point: int = Field(ge=0)
    answer: PointVerdict
    context: PointVerdict | None = None

    @field_validator("answer", "context", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        word = "_".join(value.strip().lower().replace("-", " ").split())
        return _SPELLINGS.get(word, word)


class ChecksReply(BaseModel):
    answer_claims: list[AnswerClaimCheck] = Field(default_factory=list)  # none asked: none given
    reference_claims: list[ReferenceClaimCheck] = Field(default_factory=list)
    points: list[PointCheck] = Field(default_factory=list)
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


class PointLabel(BaseModel):
    """One information point of the sample (its index in ``fine_keywords``): does the answer
    convey it, and does the context the generator saw (None: the judge left it unlabelled)."""

    model_config = ConfigDict(extra="forbid")
    point: int = Field(ge=0)
    answer: PointVerdict | None = None
    context: PointVerdict | None = None


class Judgement(BaseModel):
    """What ``cofe judge`` concluded about one sample's answer (a line of judgements.jsonl)."""

    model_config = ConfigDict(extra="forbid")
    sample_id: Identifier
    repeat: int = Field(default=0, ge=0, description="0 scores the run; 1.. measure variance")
    control: Literal["gold", "gold_passage", "foreign"] | None = Field(
        default=None,
        description="A known-answer control (judge_controls.jsonl) judged as the answer: the "
        "sample's reference (gold), its passage's sentence closest to the reference "
        "(gold_passage), another sample's reference (foreign); None: the sample's answer.",
    )
    model: str
    prompt_version: str
    sense: int = Field(
        default=1,
        ge=1,
        description="Revision of the sense checks (judges/_sense.py) its replies were read "
        "with: a later revision reads them again on the next pass (from the reply cache, "
        "asking only what the new checks add); a new prompt version asks again.",
    )
    inputs: str = Field(
        description="Digest of the question, answer, context, source, reference and the "
        "information points."
    )
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
    points: list[PointLabel] = Field(
        default_factory=list,
        description="Per information point, in fine_keywords order (empty: none asked about).",
    )
    dropped_labels: int = Field(
        default=0, ge=0, description="Point labels dropped: no such point, or a second label."
    )
    repairs: list[str] = Field(
        default_factory=list,
        description='What was repaired in the replies, each "code: detail" (judges/_sense.py).',
    )
    no_embeddings: str | None = Field(default=None, description="Why the two are missing.")
    calls: int = 0
    raw: list[str] = Field(default_factory=list, description="The judge's replies, as received.")
