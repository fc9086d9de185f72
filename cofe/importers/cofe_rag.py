"""The CoFE-RAG release format.

``{"examples": [{"query_type", "query", "reference_answer", "file_name",
"coarse_keywords", "fine_keywords"}, ...]}``, English or Chinese. Query types
事实类/分析类/比较类/教程类 map to factual/analytical/comparative/tutorial.
A flat ``fine_keywords`` list (strings, not lists) becomes one information
point holding all of them, which is what the reference evaluator requires.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from pydantic import ValidationError

from cofe._errors import InputError, InputProblem
from cofe.evalset import EvalSample, QueryType, SourceRef
from cofe.importers._result import ImportResult, load_json

QUERY_TYPES = {
    "事实类": QueryType.FACTUAL,
    "分析类": QueryType.ANALYTICAL,
    "比较类": QueryType.COMPARATIVE,
    "教程类": QueryType.TUTORIAL,
    **{qt.value: qt for qt in QueryType},
}
_KNOWN = {
    "id",
    "query_type",
    "query",
    "reference_answer",
    "file_name",
    "coarse_keywords",
    "fine_keywords",
}


def import_cofe_rag(path: str | os.PathLike[str]) -> ImportResult:
    path = Path(path)
    data = load_json(path)
    examples = data.get("examples") if isinstance(data, dict) else data
    if not isinstance(examples, list):
        raise InputError(InputProblem(str(path), None, "examples", "expected a list of examples"))
    result = ImportResult([])
    types: dict[str, int] = {}
    for index, example in enumerate(examples):
        where = f"examples[{index}]"
        if not isinstance(example, dict):
            result.problems.append(InputProblem(str(path), None, where, "expected an object"))
            continue
        raw_type = str(example.get("query_type", "")).strip()
        query_type = QUERY_TYPES.get(raw_type, QUERY_TYPES.get(raw_type.lower(), QueryType.OTHER))
        fine = example.get("fine_keywords", [])
        if isinstance(fine, list) and fine and all(isinstance(k, str) for k in fine):
            fine = [fine]
        coarse = example.get("coarse_keywords", [])
        if isinstance(coarse, str):
            coarse = [coarse]
        meta = {key: value for key, value in example.items() if key not in _KNOWN}
        if query_type is QueryType.OTHER and raw_type:
            meta["original_query_type"] = raw_type
        file_name = example.get("file_name")
        try:
            sample = EvalSample(
                id=str(example.get("id") or f"{path.stem}-{index}"),
                # pydantic checks the type: a missing or non-text query is a ValidationError,
                # reported below
                query=cast(str, example.get("query")),
                query_type=query_type,
                coarse_keywords=coarse,
                fine_keywords=fine,
                reference_answer=example.get("reference_answer"),
                source=SourceRef(doc=file_name) if file_name else None,
                meta=meta,
            )
        except ValidationError as error:
            problem = InputProblem.from_validation(str(path), None, error)
            field = f"{where}.{problem.field}" if problem.field else where
            result.problems.append(InputProblem(str(path), None, field, problem.message))
            continue
        types[query_type.value] = types.get(query_type.value, 0) + 1
        result.samples.append(sample)
    result.stats = {
        "examples": len(examples),
        "imported": len(result.samples),
        "query_types": types,
    }
    return result
