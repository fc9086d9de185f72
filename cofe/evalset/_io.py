"""Reading and writing eval sets (native JSONL, one EvalSample per line)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cofe._errors import InputProblem
from cofe._jsonl import read_jsonl, write_jsonl
from cofe.evalset._sample import EvalSample


@dataclass
class EvalSet:
    """Samples in file order, plus the problems met while reading them."""

    samples: list[EvalSample]
    problems: list[InputProblem] = field(default_factory=list)
    path: str | None = None
    lines: dict[str, int] = field(default_factory=dict)  # sample id -> line in the file

    def __len__(self) -> int:
        return len(self.samples)

    def by_id(self) -> dict[str, EvalSample]:
        return {sample.id: sample for sample in self.samples}


def read_evalset(path: str | os.PathLike[str]) -> EvalSet:
    """Read a native eval set. Bad lines and duplicate ids become problems, not crashes."""
    samples: list[EvalSample] = []
    problems: list[InputProblem] = []
    seen: dict[str, int] = {}
    for line, item in read_jsonl(path, EvalSample):
        if isinstance(item, InputProblem):
            problems.append(item)
        elif item.id in seen:
            problems.append(
                InputProblem(
                    str(path),
                    line,
                    "id",
                    f"duplicate id {item.id!r} (first on line {seen[item.id]}); skipped",
                )
            )
        else:
            seen[item.id] = line
            samples.append(item)
    return EvalSet(samples, problems, str(path), seen)


def write_evalset(path: str | os.PathLike[str], samples: Iterable[EvalSample]) -> int:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(path, samples)


def file_sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
