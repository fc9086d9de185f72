"""JSON Lines reading and appending, shared by eval sets and run logs.

Reading never stops at a bad line: each one becomes an :class:`InputProblem`
naming file, line and field, and the good records around it are kept.
Appending is crash-safe: a line torn by an interrupted write is cut off before
new records are added, so one crash never corrupts the next record.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from cofe._atomic import open_own, open_own_for_append, replace_atomically
from cofe._errors import InputProblem, InputWarning

M = TypeVar("M", bound=BaseModel)


def read_jsonl(
    path: str | os.PathLike[str], model: type[M]
) -> Iterator[tuple[int, M | InputProblem]]:
    """Yield ``(line_number, record or problem)`` for every non-blank line, reading the file
    line by line (memory does not grow with the file)."""
    path = Path(path)
    name = str(path)
    with path.open("rb") as handle:
        for index, raw in enumerate(handle, start=1):
            if index == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]  # an editor's UTF-8 mark, not the record
            if not raw.strip():
                continue
            try:  # fast path: pydantic parses and validates the bytes in one go
                yield index, model.model_validate_json(raw)
                continue
            except ValidationError:
                pass  # parse again below to name the precise problem (or repair the record)
            # a line with no newline can only be the last: a writer interrupted mid-line
            torn = not raw.endswith(b"\n")
            yield index, parse_slowly(raw, model, name, index, torn)


def parse_slowly(raw: bytes, model: type[M], name: str, index: int, torn: bool) -> M | InputProblem:
    """One line that failed the fast parse, parsed again to say exactly what is wrong with it
    (or repaired: lone surrogates); ``torn``: the file's last line, cut by a crash."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return InputProblem(name, index, None, f"not UTF-8 text ({error.reason})")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (last line cut short: the writer was interrupted?)" if torn else ""
        return InputProblem(name, index, None, f"invalid JSON: {error.msg}{hint}")
    except RecursionError:
        return InputProblem(name, index, None, "invalid JSON: nested too deeply")
    except ValueError as error:  # e.g. an integer of thousands of digits
        return InputProblem(name, index, None, f"invalid JSON: {error}"[:300])
    if not isinstance(obj, dict):
        return InputProblem(name, index, None, "expected a JSON object on each line")
    obj, repaired = scrub_surrogates(obj)
    if repaired:
        warnings.warn(
            InputWarning(f"{name}:{index}: {repaired} lone UTF-16 surrogate(s) replaced by U+FFFD"),
            stacklevel=2,
        )
    try:
        return model.model_validate(obj)
    except ValidationError as error:
        return InputProblem.from_validation(name, index, error)
    except RecursionError:
        return InputProblem(name, index, None, "nested too deeply")


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` with every lone UTF-16 surrogate (which UTF-8 cannot encode: a JSON
    ``"\\ud800"`` escape, a broken decoder's output) replaced by U+FFFD, and how many."""
    if isinstance(value, str):
        fixed, count = _SURROGATE.subn("\ufffd", value)
        return fixed, count
    if isinstance(value, dict):
        total = 0
        out = {}
        for key, item in value.items():
            key, n_key = scrub_surrogates(key)
            out[key], n_item = scrub_surrogates(item)
            total += n_key + n_item
        return out, total
    if isinstance(value, list | tuple):
        total = 0
        items = []
        for item in value:
            item, n = scrub_surrogates(item)
            items.append(item)
            total += n
        return items, total
    return value, 0


def _json_line(record: BaseModel, path: Path) -> str:
    """One record as a JSON line; text UTF-8 cannot hold (lone surrogates) is replaced and
    reported, never a crash that loses the batch."""
    try:
        return record.model_dump_json() + "\n"
    except PydanticSerializationError:
        data, repaired = scrub_surrogates(record.model_dump(mode="python"))
        if not repaired:
            raise
        fixed = type(record).model_validate(data)
        warnings.warn(
            InputWarning(f"{path}: {repaired} lone UTF-16 surrogate(s) replaced by U+FFFD"),
            stacklevel=3,
        )
        return fixed.model_dump_json() + "\n"


def repair_torn_tail(path: str | os.PathLike[str]) -> int:
    """Cut an unterminated last line left by a crash; return the bytes removed."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return 0
    with open_own(path, os.O_RDWR, "rb+") as handle:  # never through a link
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
    with open_own_for_append(path) as handle:  # never through a link (a user's file)
        for record in records:
            handle.write(_json_line(record, path).encode("utf-8"))
            count += 1
        handle.flush()
        if sync:
            os.fsync(handle.fileno())
    return count


def write_jsonl(path: str | os.PathLike[str], records: Iterable[BaseModel]) -> int:
    """Write a whole file atomically (temp file, then rename)."""
    path = Path(path)
    count = 0

    def write(tmp: Path) -> None:
        nonlocal count
        with tmp.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(_json_line(record, path))
                count += 1

    replace_atomically(path, write)
    return count
