"""Public names that load on first use (PEP 562): one helper for every lazy ``__init__``.

``import cofe`` or ``import cofe.stages`` then costs nothing until a name is used. Not a
way around the layers: tests/test_layers.py reads these homes as imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], names: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each of ``names`` imported from
    its home module (``homes``; ``"module:attribute"`` when it has another name there) when
    first read, then kept as a plain attribute."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value  # once loaded, a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
