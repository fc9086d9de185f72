"""The old path of ``cofe.importers``, kept for code that imports from it.

The importers moved out of ``cofe.evalset`` (issue 41): they use the matcher's tokens to
derive keywords, and the matcher reads eval samples, so inside ``cofe.evalset`` they made a
cycle. Each name loads from ``cofe.importers`` on first use.
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names

if TYPE_CHECKING:
    from cofe.importers import (
        IMPORTERS,
        ImportResult,
        derive_coarse,
        import_cofe_rag,
        import_jsonl,
        import_squad,
    )

__all__ = [
    "IMPORTERS",
    "ImportResult",
    "derive_coarse",
    "import_cofe_rag",
    "import_jsonl",
    "import_squad",
]
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, "cofe.importers"), __all__)
