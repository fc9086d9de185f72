"""Importers, one per format: ``IMPORTERS[name](path) -> ImportResult``."""

from collections.abc import Callable

from cofe.evalset.importers._result import ImportResult
from cofe.evalset.importers.cofe_rag import import_cofe_rag
from cofe.evalset.importers.jsonl import import_jsonl
from cofe.evalset.importers.squad import derive_coarse, import_squad

IMPORTERS: dict[str, Callable[..., ImportResult]] = {
    "cofe-rag": import_cofe_rag,
    "squad": import_squad,
    "jsonl": import_jsonl,
}

__all__ = [
    "IMPORTERS",
    "ImportResult",
    "derive_coarse",
    "import_cofe_rag",
    "import_jsonl",
    "import_squad",
]
