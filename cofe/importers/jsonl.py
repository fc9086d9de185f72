"""The native format: one EvalSample per line (see ``cofe schema``)."""

from __future__ import annotations

import os
from collections import Counter

from cofe.evalset import read_evalset
from cofe.importers._result import ImportResult


def import_jsonl(path: str | os.PathLike[str]) -> ImportResult:
    evalset = read_evalset(path)
    types = Counter(sample.query_type.value for sample in evalset.samples)
    stats = {
        "imported": len(evalset.samples),
        "rejected_lines": len(evalset.problems),
        "query_types": dict(types),
    }
    return ImportResult(evalset.samples, evalset.problems, stats)
