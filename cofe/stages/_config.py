from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cofe.matching import MatchMode


class ScoreConfig(BaseModel):
    """How a run is scored. Recorded with every score file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int = Field(default=4, ge=1, description="Size of the context the generator saw.")
    candidates: int | None = Field(
        default=None, ge=1, description="Cutoff N of the candidate pool; default: longest pool."
    )
    mode: MatchMode = MatchMode.STRICT
    coarse_filter: bool = Field(
        default=True,
        description="Count fine keywords only in chunks that mention a coarse keyword.",
    )
    same_source: bool = Field(
        default=False,
        description="Count fine keywords only in chunks of the sample's source document.",
    )
    fuzzy: float | None = Field(
        default=None, gt=0, lt=1, description="Accept approximate matches up to this error ratio."
    )
    fuzzy_min_chars: int = Field(default=6, ge=1)
