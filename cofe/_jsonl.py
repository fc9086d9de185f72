"""JSON Lines reading and appending, shared by eval sets and run logs.

Reading never stops at a bad line: each one becomes an :class:`InputProblem`
naming file, line and field, and the good records around it are kept.
Appending is crash-safe: a line torn by an interrupted write is cut off before
new records are added, so one crash never corrupts the next record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from cofe._errors import InputProblem

M = TypeVar("M", bound=BaseModel)


def read_jsonl(
    path: str | os.PathLike[str], model: type[M]
) -> Iterator[tuple[int, M | InputProblem]]:
    """Yield ``(line_number, record or problem)`` for every non-blank line."""
    path = Path(path)
    name = str(path)
    with path.open("rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    torn_tail = not data.endswith(b"\n") and data != b""
    for index, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:  # fast path: pydantic parses and validates the bytes in one go
            yield index, model.model_validate_json(raw)
            continue
        except ValidationError:
            pass  # parse again below to name the precise problem
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield index, InputProblem(name, index, None, f"not UTF-8 text ({error.reason})")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            is_last = index == len(lines)
            hint = (
                " (last line cut short: the writer was interrupted?)"
                if is_last and torn_tail
                else ""
            )
            yield index, InputProblem(name, index, None, f"invalid JSON: {error.msg}{hint}")
            continue
        if not isinstance(obj, dict):
            yield index, InputProblem(name, index, None, "expected a JSON object on each line")
            continue
        try:
            yield index, model.model_validate(obj)
        except ValidationError as error:
            yield index, InputProblem.from_validation(name, index, error)


def repair_torn_tail(path: str | os.PathLike[str]) -> int:
    """Cut an unterminated last line left by a crash; return the bytes removed."""
    path = Path(path)
    if not path.exists():
        return 0
    with path.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return len(data) - keep


def append_jsonl(
    path: str | os.PathLike[str], records: Iterable[BaseModel], *, sync: bool = True
) -> int:
    """Append records as lines; flushed (and fsync'ed) so a crash loses nothing written."""
    path = Path(path)
    repair_torn_tail(path)
    count = 0
    with path.open("a", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json(exclude_defaults=False) + "\n")
            count += 1
        handle.flush()
        if sync:
            os.fsync(handle.fileno())
    return count


def write_jsonl(path: str | os.PathLike[str], records: Iterable[BaseModel]) -> int:
    """Write a whole file atomically (temp file, then rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
            count += 1
    os.replace(tmp, path)
    return count
