"""The scoring's settings, recorded with every score file."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cofe.matching import MatchMode
from cofe.measures import parse_measures, spell_measures


class CoarseScope(StrEnum):
    """Where a coarse keyword (the entity a question is about) must appear for a chunk to count.

    ``document`` (strict mode's default): the chunk's document names the entity.
    A chunk that holds the fact but not the name (a pronoun, an inflection, a
    title that is never repeated) still counts; that it does not name the entity
    is reported as a chunking *risk* (``EntityAnchoring``), not as a loss.
    ``chunk``: the chunk itself names the entity (the CoFE-RAG reference; the
    default of ``cofe-rag`` mode). ``off``: every chunk counts.
    """

    DOCUMENT = "document"
    CHUNK = "chunk"
    OFF = "off"


class ScoreConfig(BaseModel):
    """How a run is scored. Recorded with every score file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int | None = Field(
        default=None,
        ge=1,
        description="Context size the generator saw; default: what the run recorded "
        "(its contexts, or the manifest's top_k).",
    )
    candidates: int | None = Field(
        default=None, ge=1, description="Cutoff N of the candidate pool; default: longest pool."
    )
    mode: MatchMode = MatchMode.STRICT
    coarse_scope: CoarseScope | None = Field(
        default=None,
        description="Where coarse keywords must appear (default: document in strict mode, "
        "chunk in cofe-rag mode).",
    )
    same_source: bool = Field(
        default=False,
        description="Count fine keywords only in chunks of the sample's source document "
        "(overlapping its span when the sample gives one and the chunks have offsets).",
    )
    fuzzy: float | None = Field(
        default=None, gt=0, lt=1, description="Accept approximate matches up to this error ratio."
    )
    fuzzy_min_chars: int = Field(default=6, ge=1)
    answer_match: Literal["paraphrase", "verbatim"] = Field(
        default="paraphrase",
        description="How the answer step decides that an answer conveys a point: 'paraphrase' "
        "(words found verbatim, else content words, numbers and names after normalisation; "
        "a point it cannot settle is undecided, never blamed) or 'verbatim' (every keyword "
        "found as written, as in chunks). LLM judge labels, when present, settle the rest.",
    )

    measures: str | None = Field(
        default=None,
        description="The measures to compute, comma-separated, each [step/]Name[@cutoff] "
        "(e.g. 'KeywordRecall@4,answer/PointRecall,nDCG@10'); a measure without a step is "
        "taken at every step of the run it applies to. Default: every measure the run's "
        "shape allows. Verdicts do not depend on it.",
    )

    @field_validator("measures")
    @classmethod
    def _spelt_measures(cls, value: str | None) -> str | None:
        # parsed now (a typo fails before any scoring) and kept in one canonical spelling,
        # so two spellings of one choice name the same results folder
        return None if value is None else spell_measures(parse_measures(value))

    @model_validator(mode="before")
    @classmethod
    def _coarse_filter_flag(cls, data: Any) -> Any:
        # ``coarse_filter=False`` (the --no-coarse-filter flag) is spelt coarse_scope=off
        if isinstance(data, dict) and "coarse_filter" in data:
            data = dict(data)
            if not data.pop("coarse_filter"):
                data["coarse_scope"] = CoarseScope.OFF
        return data

    @property
    def scope(self) -> CoarseScope:
        if self.coarse_scope is not None:
            return self.coarse_scope
        return CoarseScope.CHUNK if self.mode is MatchMode.COFE_RAG else CoarseScope.DOCUMENT

    def label(self) -> str:
        """The settings that differ from the defaults, as ``name=value`` joined by commas
        (empty for the defaults): names the folder a scoring is written to."""
        changed = self.model_dump(mode="json", exclude_defaults=True)
        return ",".join(f"{name}={value}" for name, value in changed.items())
