"""One rule language: ``[[rule]]`` tables that ``cofe check`` and the monitor both read.

A rule is a target (``cofe.rules._target``), one or two comparisons and a severity::

    [[rule]]
    target = "context/KeywordRecall@4"   # a results column, a share or a traffic signal
    min = 0.8                            # the value must stay at or above
    severity = "error"

The comparisons: ``min`` and ``max`` bound the value itself (they may go together, a band);
``max_drop``, ``max_rise`` and ``max_change`` bound its change from a baseline (down, up,
either way). A consumer (a ``Dialect``) says which comparisons and severities it runs and
which keys of its own a table may hold (the monitor's ``source``, ``alpha``, ``cooldown``...);
everything else -- reading the TOML, finding each key's line, the one-line errors naming
file, line and field, the JSON Schema -- is here, once.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from cofe._errors import InputError, InputProblem
from cofe.rules._target import SignalCheck, Target, parse_target, suggest

DOC = "docs/rules.md"
MAX_LIMIT = 1e15  # limits and changes: any real measure is far below


class Bound(StrEnum):
    """How a rule compares: the value's own limits, or its change from a baseline."""

    MIN = "min"  # the value at least this
    MAX = "max"  # the value at most this
    MAX_DROP = "max_drop"  # the fall from the baseline at most this
    MAX_RISE = "max_rise"  # the rise from the baseline at most this
    MAX_CHANGE = "max_change"  # the change either way at most this

    @property
    def is_change(self) -> bool:
        return self in (Bound.MAX_DROP, Bound.MAX_RISE, Bound.MAX_CHANGE)


class RuleSpellingWarning(DeprecationWarning):
    """A rules file in an old spelling: it still reads; the message says the new one."""


@dataclass(frozen=True)
class Rule:
    """One rule as written: what it watches, how it compares, how bad a breach is, and the
    consumer's own keys (``options``, as written). ``origin`` says where it was written."""

    target: Target
    limits: tuple[tuple[Bound, float], ...]
    severity: str
    name: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    origin: str = "<rules>"

    def limit(self, bound: Bound) -> float | None:
        return dict(self.limits).get(bound)

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def __str__(self) -> str:
        shown = {
            Bound.MIN: ">=",
            Bound.MAX: "<=",
            Bound.MAX_DROP: "drop <=",
            Bound.MAX_RISE: "rise <=",
            Bound.MAX_CHANGE: "change <=",
        }
        return " and ".join(f"{self.target} {shown[b]} {v:g}" for b, v in self.limits)


@dataclass(frozen=True)
class Dialect:
    """What one consumer of the language runs."""

    reader: str  # who reads the file, for messages: "cofe check"
    bounds: tuple[Bound, ...]
    severities: tuple[str, ...] | None  # None: any word (the monitor passes it on to sinks)
    default_severity: str
    options: tuple[str, ...] = ()  # the consumer's own keys in a [[rule]] table
    signals: SignalCheck | None = None  # reads traffic signals (stage/Name)
    staged_shares: bool = False  # reads VERDICT@STAGE shares
    settings: tuple[str, ...] = ()  # top-level keys beside the [[rule]] tables


# --- reading a file ---------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")


@dataclass(frozen=True)
class RuleFile:
    """A parsed rules file with its text, so that every problem can name its line."""

    file: str
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def line_of(self, table: str | None, key: str | None, index: int | None = None) -> int | None:
        """The 1-based line setting ``key`` in ``[table]`` (``index``: the index-th
        ``[[table]]``, from 1; ``table`` None: the top level). No key, or a key not found:
        the table's header line."""
        current: tuple[str | None, int | None] = (None, None)
        seen: dict[str, int] = {}
        header_line: int | None = None
        for number, line in enumerate(self.text.splitlines(), start=1):
            match = _HEADER.match(line)
            if match:
                name = match.group(2).strip().strip("\"'")
                if match.group(1) == "[[":
                    seen[name] = seen.get(name, 0) + 1
                    current = (name, seen[name])
                else:
                    current = (name, None)
                if current == (table, index):
                    header_line = number
                elif table is None and key is not None and name == key:
                    return number  # a table where a top-level key was looked for
                continue
            if key is None or current != (table, index):
                continue
            stripped = line.strip()
            for spelt in (f'"{key}"', f"'{key}'", key):
                if stripped.startswith(spelt) and stripped[len(spelt) :].lstrip().startswith("="):
                    return number
        return header_line

    def problem(self, message: str, key: str | None = None, rule: int | None = None) -> InputError:
        """One line naming the file, the line and the field: ``rule 2 ('slow').min``."""
        if rule is None:
            return InputError(InputProblem(self.file, self.line_of(None, key), key, message))
        table = self.tables()[rule - 1] if rule <= len(self.tables()) else {}
        name = table.get("name") if isinstance(table, Mapping) else None
        named = isinstance(name, str) and name.strip()
        where = f"rule {rule}" + (f" ({name!r})" if named else "")
        return InputError(
            InputProblem(
                self.file,
                self.line_of("rule", key, rule),
                f"{where}.{key}" if key else where,
                message,
            )
        )

    def tables(self) -> list[Any]:
        tables = self.data.get("rule", [])
        return tables if isinstance(tables, list) else []

    def warn(self, message: str, key: str | None = None, rule: int | None = None) -> None:
        """An old spelling read: a ``RuleSpellingWarning`` naming where and the new spelling."""
        line = self.line_of("rule" if rule else None, key, rule)
        where = self.file if line is None else f"{self.file}:{line}"
        warnings.warn(f"{where}: {message} (see {DOC})", RuleSpellingWarning, stacklevel=_caller())


def _caller() -> int:
    """The stack level of the first caller outside cofe: the line a warning should name,
    however deep the reader that found the old spelling sits."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("cofe."):
        frame, level = frame.f_back, level + 1
    return level


def read_rule_file(path: str | os.PathLike[str]) -> RuleFile:
    """A TOML rules file; not TOML, not UTF-8 or nested beyond reason: one line."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"at line (\d+)", str(error))
        raise InputError(
            InputProblem(
                file, int(line.group(1)) if line else None, None, f"not valid TOML: {error}"
            )
        ) from None
    except RecursionError:  # thousands of nested arrays or tables
        raise InputError(
            InputProblem(file, None, None, "not valid TOML: nested too deeply")
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(
            InputProblem(file, None, None, f"not UTF-8 text ({error.reason})")
        ) from None
    return RuleFile(file, text, data)


def number(value: Any, what: str) -> float:
    """A finite number within ``MAX_LIMIT`` (``"0.1"`` and ``true`` are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number, not {_shown(value)}")
    if value != value or abs(value) == float("inf"):
        raise ValueError(f"{what} must be a finite number, not {_shown(value)}")
    if abs(value) > MAX_LIMIT:
        raise ValueError(f"{what} must be at most {MAX_LIMIT:g} in size, not {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


COMMON = ("target", "severity", "name")


def parse_rule(source: RuleFile, index: int, table: Any, dialect: Dialect) -> Rule:
    """The ``index``-th ``[[rule]]`` table (from 1) in ``dialect``; one-line errors."""
    if not isinstance(table, Mapping):
        raise source.problem("a rule is a [[rule]] table", rule=index)
    keys = [*COMMON, *(str(b) for b in dialect.bounds), *dialect.options]
    for key in table:
        if key not in keys:
            other = [str(b) for b in Bound if b not in dialect.bounds]
            why = (
                f"{dialect.reader} does not compare by {key}"
                if key in other
                else f"unknown field{suggest(key, keys)}"
            )
            raise source.problem(f"{why} (fields: {', '.join(keys)})", key, index)
    if "target" not in table:
        raise source.problem(
            'every rule names its target (e.g. target = "context/KeywordRecall@4")',
            "target",
            index,
        )
    try:
        target = parse_target(
            table["target"], signals=dialect.signals, staged_shares=dialect.staged_shares
        )
    except InputError as error:
        raise source.problem(str(error), "target", index) from None
    limits: list[tuple[Bound, float]] = []
    for bound in dialect.bounds:
        if str(bound) in table:
            try:
                value = number(table[str(bound)], str(bound))
            except ValueError as error:
                raise source.problem(str(error), str(bound), index) from None
            if bound.is_change and value < 0:
                raise source.problem(f"a change allowed is at least 0, not {value:g}", bound, index)
            limits.append((bound, value))
    if not limits:
        raise source.problem(
            f"a rule needs a comparison: one of {', '.join(dialect.bounds)}", None, index
        )
    changes = [b for b, _ in limits if b.is_change]
    if changes and len(limits) > 1:
        raise source.problem(
            "a rule compares one way: min and/or max, or one of max_drop, max_rise, max_change",
            str(limits[1][0]),
            index,
        )
    low, high = dict(limits).get(Bound.MIN), dict(limits).get(Bound.MAX)
    if low is not None and high is not None and low > high:
        raise source.problem(f"min {low:g} is above max {high:g}: nothing passes", "min", index)
    severity = table.get("severity", dialect.default_severity)
    if not isinstance(severity, str) or not severity.strip():
        raise source.problem(f"severity is a word, not {_shown(severity)}", "severity", index)
    if dialect.severities is not None and severity not in dialect.severities:
        raise source.problem(
            f"{dialect.reader} knows severities {', '.join(dialect.severities)}, "
            f"not {severity!r}{suggest(severity, dialect.severities)}",
            "severity",
            index,
        )
    name = table.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise source.problem(f"a name is a word, not {_shown(name)}", "name", index)
    line = source.line_of("rule", None, index)
    return Rule(
        target,
        tuple(limits),
        severity,
        name,
        tuple((k, v) for k, v in table.items() if k in dialect.options),
        f"{source.file}:{line}" if line else source.file,
    )


def parse_rules(source: RuleFile, dialect: Dialect) -> list[Rule]:
    """Every ``[[rule]]`` table of a file in ``dialect``; the first bad one is one line."""
    for key in source.data:
        if key != "rule" and key not in dialect.settings:
            known = ["rule", *dialect.settings]
            raise source.problem(
                f"unknown table or setting{suggest(key, known)} (known: {', '.join(known)})", key
            )
    tables = source.data.get("rule")
    if tables is not None and not isinstance(tables, list):
        raise source.problem("rules are [[rule]] tables (two brackets)", "rule")
    return [parse_rule(source, i, t, dialect) for i, t in enumerate(tables or [], start=1)]


def rule_schema(dialect: Dialect, options: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON Schema of one ``[[rule]]`` table in ``dialect`` (``options``: the schema of
    each of the consumer's own keys)."""
    severity: dict[str, Any] = {"type": "string", "default": dialect.default_severity}
    if dialect.severities is not None:
        severity["enum"] = list(dialect.severities)
    forms = "a results column (step/Measure@K), a share (a verdict or a stage"
    forms += ", or VERDICT@STAGE)" if dialect.staged_shares else ")"
    forms += ", or a traffic signal (stage/Signal)" if dialect.signals else ""
    properties: dict[str, Any] = {
        "target": {"type": "string", "description": f"what the rule watches: {forms}"},
        "name": {"type": "string", "minLength": 1},
        "severity": severity,
    }
    for bound in dialect.bounds:
        properties[str(bound)] = {
            "type": "number",
            "minimum": 0 if bound.is_change else -MAX_LIMIT,
            "maximum": MAX_LIMIT,
            "description": {
                Bound.MIN: "the value at least this",
                Bound.MAX: "the value at most this",
                Bound.MAX_DROP: "its fall from the baseline at most this",
                Bound.MAX_RISE: "its rise from the baseline at most this",
                Bound.MAX_CHANGE: "its change either way from the baseline at most this",
            }[bound],
        }
    properties.update({k: dict(v) for k, v in options.items()})
    return {
        "title": f"a [[rule]] table read by {dialect.reader} ({DOC})",
        "type": "object",
        "properties": properties,
        "required": ["target"],
        "additionalProperties": False,
    }


@contextmanager
def old_spellings_said(stream: IO[str] | None = None) -> Iterator[None]:
    """Inside: each old spelling a rules file is read in becomes one line on ``stream``
    (stderr) instead of a warning -- what the CLI shows. Other warnings pass through."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuleSpellingWarning)
        yield
    for warning in caught:
        if issubclass(warning.category, RuleSpellingWarning):
            print(f"cofe: warning: {warning.message}", file=stream or sys.stderr)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )


def spell(values: Sequence[tuple[str, Any]]) -> str:
    """``key = value`` pairs as TOML writes them, for messages naming the new spelling."""
    import json

    return ", ".join(
        f"{k} = {json.dumps(v) if isinstance(v, str) else format(v, 'g') if isinstance(v, float) else v}"
        for k, v in values
    )
