"""The matcher's word lists and tables, read once from ``cofe/_data/matching/*.json``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_FOLDER = Path(__file__).resolve().parents[2] / "_data" / "matching"


@cache
def table(name: str) -> dict[str, Any]:
    """One data file (``en``, ``zh``, ``measures``), parsed once per process."""
    with (_FOLDER / f"{name}.json").open(encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def inverted(groups: dict[str, list[str]]) -> dict[str, str]:
    """{"km": ["kilometre", "km"]} -> {"kilometre": "km", "km": "km"}: each alias to its unit."""
    return {alias: unit for unit, aliases in groups.items() for alias in aliases}
