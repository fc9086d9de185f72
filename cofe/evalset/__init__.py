"""Eval sets: samples labelled with coarse and fine keywords, and their importers."""

from cofe.evalset._io import EvalSet, file_sha256, read_evalset, write_evalset
from cofe.evalset._sample import (
    EVALSET_SCHEMA_VERSION,
    AnyOf,
    EvalSample,
    InformationPoint,
    Keyword,
    QueryType,
    SourceRef,
    keyword_alternatives,
)

__all__ = [
    "EVALSET_SCHEMA_VERSION",
    "AnyOf",
    "EvalSample",
    "EvalSet",
    "InformationPoint",
    "Keyword",
    "QueryType",
    "SourceRef",
    "file_sha256",
    "keyword_alternatives",
    "read_evalset",
    "write_evalset",
]
