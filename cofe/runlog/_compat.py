"""Manifests of older layouts, read as the current one; loose values read as typed fields.

Version 1 had no ``top_k``, ``stages`` or ``meta`` and allowed any other
top-level field. Reading one:

* ``top_k`` and ``stages`` come from the same-named top-level fields when they
  are valid, else from ``pipeline["top_k"]`` / ``pipeline["stages"]`` (where
  the old ``StagedPipeline``/``PythonPipeline`` wrote them), else stay ``None``
  (unknown) -- nothing is guessed;
* every other unknown top-level field moves into ``meta``;
* ``schema_version`` stays what the file says (1), so a reader can tell.

Version 2 manifests read as version 3 unchanged. Version 2 marked a derived chunk (a
sentence window, a citation re-chunk) with ``meta["derived_from"]`` (one chunk id) and
``meta["derived_by"]``; such a chunk line is read with the typed fields of version 3:
``kind`` from ``derived_by`` (else ``"derived"``) and ``derived_from`` a list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cofe.chain import STAGE_ORDER, Stage

V1_FIELDS = frozenset(
    {"schema_version", "run_id", "created_at", "pipeline", "evalset_sha256", "versions"}
)
"""The fields a version-1 manifest knew; anything else it held was a free-form extra."""

_OLD_PYTHON_STAGES = {
    "retrieve": Stage.RETRIEVAL,
    "rerank": Stage.RERANKING,
    "generate": Stage.GENERATION,
}


def top_k_from(value: Any) -> int | None:
    """A loose ``top_k`` (from a pipeline description) as the manifest field, or None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def stages_from(value: Any) -> list[Stage] | None:
    """A loose ``stages`` value as the manifest field, or None when it does not say.

    Accepted: a list of stage names (each once), or the mapping the old
    ``PythonPipeline.describe`` wrote, ``{"chunk", "retrieve", "rerank",
    "generate"}`` -> a callable's name or null (null: the stage is absent).
    """
    if isinstance(value, list | tuple):
        if not all(isinstance(v, str) and v in Stage._value2member_map_ for v in value):
            return None
        stages = [Stage(v) for v in value]
        if len(set(stages)) != len(stages):
            return None
        return sorted(stages, key=STAGE_ORDER.__getitem__)
    if isinstance(value, dict) and set(value) == {"chunk", *_OLD_PYTHON_STAGES}:
        return staged(
            retrieve=value["retrieve"] is not None,
            rerank=value["rerank"] is not None,
            generate=value["generate"] is not None,
        )
    return None


def staged(*, retrieve: bool, rerank: bool, generate: bool) -> list[Stage]:
    """The stages of a pipeline built from stage calls (parse and chunking: it has a corpus).

    A reranker only runs on a retrieved pool, so without a retriever there is no reranking.
    """
    stages = [Stage.PARSE, Stage.CHUNKING]
    if retrieve:
        stages.append(Stage.RETRIEVAL)
        if rerank:
            stages.append(Stage.RERANKING)
    if generate:
        stages.append(Stage.GENERATION)
    return stages


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in raw.items() if k in V1_FIELDS}
    extras = {k: v for k, v in raw.items() if k not in V1_FIELDS}
    meta: dict[str, Any] = {}
    if "meta" in extras:
        given = extras.pop("meta")
        if isinstance(given, dict):
            meta.update(given)
        else:
            meta["meta"] = given
    pipeline = raw.get("pipeline")
    pipeline = pipeline if isinstance(pipeline, dict) else {}
    for name, read in (("top_k", top_k_from), ("stages", stages_from)):
        value = read(extras.get(name))
        if value is not None:
            del extras[name]
        else:
            value = read(pipeline.get(name))
        out[name] = value
    meta.update(extras)
    out["meta"] = meta
    return out


def chunk_from_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """A chunk line whose derivation is in ``meta`` (version 2) with the typed fields."""
    meta = raw.get("meta")
    if "kind" in raw or "derived_from" in raw or not isinstance(meta, dict):
        return raw
    source = meta.get("derived_from")
    if not source:
        return raw
    sources = [source] if isinstance(source, str) else source
    if not isinstance(sources, list):
        return raw
    by = meta.get("derived_by")
    rest = {k: v for k, v in meta.items() if k not in ("derived_from", "derived_by")}
    kind = by if isinstance(by, str) and by.strip() and by != "chunk" else "derived"
    return {**raw, "kind": kind, "derived_from": sources, "meta": rest}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _v1_to_v2,
    2: dict,  # the manifest did not change; chunks are read by ``chunk_from_v2``
}
"""``{version: upgrade to the next version}``; applied in turn up to the current one."""
