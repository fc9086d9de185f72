from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cofe._errors import InputError, InputProblem
from cofe.evalset import EvalSample


@dataclass
class ImportResult:
    """Samples read from a foreign format, what could not be read, and counts worth showing."""

    samples: list[EvalSample]
    problems: list[InputProblem] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    documents: dict[str, str] = field(
        default_factory=dict
    )  # file name -> text, to rebuild a corpus


def load_json(path: Path) -> Any:
    """A whole JSON file; a syntax error names the file and line."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(
            InputProblem(str(path), error.lineno, None, f"invalid JSON: {error.msg}")
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(
            InputProblem(str(path), None, None, f"not UTF-8 text ({error.reason})")
        ) from None
