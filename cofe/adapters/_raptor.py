"""Importing LlamaIndex's RAPTOR pack on the LlamaIndex cofe runs on.

``llama-index-packs-raptor`` 0.4.2 (its last release; the pack is deprecated)
imports ``BaseLlamaPack`` from ``llama_index.core.llama_pack``, a module
llama-index-core 0.14 no longer ships, so ``import llama_index.packs.raptor``
fails there although its retriever needs nothing else that was removed.
:func:`raptor_retriever` registers a stand-in for that one base class (only
when the real module is missing) and returns ``RaptorRetriever``; the
recording itself (:class:`LlamaIndexPipeline`) never imports the pack.
"""

from __future__ import annotations

import importlib
import sys
import types
from abc import ABC, abstractmethod
from typing import Any


class _BaseLlamaPack(ABC):
    """What ``llama_index.core.llama_pack.base.BaseLlamaPack`` was: a pack's two methods."""

    @abstractmethod
    def get_modules(self) -> dict[str, Any]: ...

    @abstractmethod
    def run(self, *args: Any, **kwargs: Any) -> Any: ...


def _ensure_llama_pack_base() -> None:
    try:
        importlib.import_module("llama_index.core.llama_pack.base")
    except ImportError:
        package = types.ModuleType("llama_index.core.llama_pack")
        base = types.ModuleType("llama_index.core.llama_pack.base")
        base.BaseLlamaPack = _BaseLlamaPack  # type: ignore[attr-defined]
        package.base = base  # type: ignore[attr-defined]
        package.BaseLlamaPack = _BaseLlamaPack  # type: ignore[attr-defined]
        sys.modules.setdefault("llama_index.core.llama_pack", package)
        sys.modules.setdefault("llama_index.core.llama_pack.base", base)


def raptor_retriever() -> type:
    """``llama_index.packs.raptor.RaptorRetriever``, importable on llama-index-core 0.14.

    Raises ``ImportError`` naming the install line when the pack is not installed."""
    _ensure_llama_pack_base()
    try:
        module = importlib.import_module("llama_index.packs.raptor")
    except ImportError as error:
        if "llama_index.packs" not in str(error):
            raise
        raise ImportError(
            "llama-index-packs-raptor is not installed: pip install 'cofe[raptor]' && "
            "pip install --no-deps llama-index-packs-raptor==0.4.2"
        ) from error
    retriever: type = module.RaptorRetriever
    return retriever
