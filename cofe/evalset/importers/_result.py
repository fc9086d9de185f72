from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cofe._errors import InputProblem
from cofe.evalset._sample import EvalSample


@dataclass
class ImportResult:
    """Samples read from a foreign format, what could not be read, and counts worth showing."""

    samples: list[EvalSample]
    problems: list[InputProblem] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    documents: dict[str, str] = field(
        default_factory=dict
    )  # file name -> text, to rebuild a corpus
