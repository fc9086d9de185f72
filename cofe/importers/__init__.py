"""Importers, one per format: ``IMPORTERS[name](path) -> ImportResult``."""

from collections.abc import Callable

from cofe.importers._result import ImportResult
from cofe.importers.cofe_rag import import_cofe_rag
from cofe.importers.jsonl import import_jsonl
from cofe.importers.squad import derive_coarse, import_squad

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
