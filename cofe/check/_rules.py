"""Gate rules: what ``cofe check`` asserts, from flags, a TOML file or a mapping.

A measure is named as its results column, ``step/Measure@K`` (``context/KeywordRecall@4``,
``answer/PointRecall``, ``answered/PointRecall`` for answers that do not decline); a share
names a verdict code (``not_retrieved``) or a stage (``retrieval``: every verdict blaming it).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from cofe._errors import InputError, InputProblem
from cofe.chain import STEPS as CHAIN_STEPS

ANSWERED = "answered"  # cofe.compare.ANSWERED, spelled here so that parsing stays light
STEPS = (*(spec.step.value for spec in CHAIN_STEPS if spec.passes is not None), ANSWERED)
DEFAULT_MAX_DROP = 0.02
"""The drop a baseline comparison allows each headline measure when no drop rule is given."""
COMMAND_LINE = "<command line>"


class Kind(StrEnum):
    MIN = "min"  # the run's mean at least this
    MAX = "max"  # the run's mean at most this
    MAX_DROP = "max_drop"  # the drop from the baseline at most this, or not significant
    MAX_SHARE = "max_share"  # the share of samples with this verdict (or stage) at most this


_FLAG = {
    Kind.MIN: "--min",
    Kind.MAX: "--max",
    Kind.MAX_DROP: "--max-drop",
    Kind.MAX_SHARE: "--max-share",
}


@dataclass(frozen=True)
class Rule:
    """One assertion. ``target`` is a column (``context/KeywordRecall@4``) or, for
    ``max_share``, a verdict code or a stage; ``origin`` says where it was written."""

    kind: Kind
    target: str
    limit: float
    origin: str = COMMAND_LINE
    default: bool = False  # a headline rule added because no drop rule was given

    @property
    def step(self) -> str | None:
        return self.target.split("/", 1)[0] if self.kind != Kind.MAX_SHARE else None

    @property
    def measure(self) -> str:
        return self.target.split("/", 1)[1] if self.kind != Kind.MAX_SHARE else "share"

    def __str__(self) -> str:
        if self.kind == Kind.MIN:
            return f"{self.target} >= {self.limit:g}"
        if self.kind == Kind.MAX:
            return f"{self.target} <= {self.limit:g}"
        if self.kind == Kind.MAX_DROP:
            return f"{self.target} drop <= {self.limit:g}"
        return f"share {self.target} <= {self.limit:g}"


# --- names --------------------------------------------------------------------------------


def _measure_spellings() -> dict[str, list[str]]:
    """Per step: the measures that apply there (``Name@K`` for those needing a cutoff)."""
    from cofe.measures import Measure

    out: dict[str, list[str]] = {step: [] for step in STEPS}
    for name, cls in sorted(Measure.REGISTRY.items()):
        if not name:
            continue
        spelling = f"{name}@K" if cls.NEEDS_CUTOFF else name
        for step in cls.STEPS:
            out[str(step)].append(spelling)
            if str(step) == "answer":
                out[ANSWERED].append(spelling)
    return out


def close_matches(text: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names nearest ``text`` (case and ``@K`` cutoffs set aside)."""
    known = list(known)
    bare = re.sub(r"@\w*$", "", text.strip()).lower()
    keys = {re.sub(r"@\w*$", "", k).lower(): k for k in reversed(known)}
    found = difflib.get_close_matches(bare, list(keys), n=n, cutoff=0.6)
    return [keys[f] for f in found]


def _suggest(text: str, known: Iterable[str]) -> str:
    near = close_matches(text, known)
    cutoff = re.search(r"@\d+$", text.strip())
    if cutoff:  # the cutoff the user wrote, where the suggestion takes one (ranked steps)
        near = [
            re.sub(r"@K$", "", n) + cutoff.group()
            if n.endswith("@K") or n.split("/")[0] in ("pool", "context")
            else n
            for n in near
        ]
    return f"; did you mean {', '.join(near)}?" if near else ""


def parse_column(text: str) -> str:
    """``"context/KeywordRecall@4"`` checked against the measures' registry and steps;
    returns it as the results column is spelled. ``ValueError`` names close matches."""
    from cofe.measures import Measure, parse_measure

    spellings = _measure_spellings()
    every = [f"{step}/{m}" for step, names in spellings.items() for m in names]
    text = text.strip()
    step, slash, measure_text = text.partition("/")
    if not slash:
        raise InputError(
            f"{text!r} names no step: write it as a results column, step/Measure "
            f"(e.g. context/KeywordRecall@4){_suggest('answer/' + text, every)}"
        )
    if step not in STEPS:
        raise InputError(
            f"unknown step {step!r} in {text!r} (steps: {', '.join(STEPS)}){_suggest(text, every)}"
        )
    try:
        measure = parse_measure(measure_text)
    except ValueError as error:
        if re.sub(r"@.*$", "", measure_text.strip()) in Measure.REGISTRY:  # a bad cutoff
            raise InputError(f"{text!r}: {error}") from None
        raise InputError(
            f"unknown measure {measure_text!r} in {text!r}{_suggest(text, every)}"
        ) from None
    applies = {str(s) for s in measure.STEPS} | ({ANSWERED} if "answer" in measure.STEPS else set())
    if step not in applies:
        raise InputError(
            f"{measure.NAME} is not measured at the {step} step (only at "
            f"{', '.join(s for s in STEPS if s in applies)})"
            f"{_suggest(text, every)}"
        )
    return f"{step}/{measure.name}"


def higher_is_better(column: str) -> bool:
    from cofe.measures import parse_measure

    return parse_measure(column.split("/", 1)[1]).HIGHER_IS_BETTER


def share_names() -> list[str]:
    """What a ``max_share`` rule may name: every verdict code and every stage."""
    from cofe.diagnose import Verdict
    from cofe.runlog import Stage

    return [str(v) for v in Verdict] + [str(s) for s in Stage]


def parse_share_target(text: str) -> str:
    text = text.strip()
    names = share_names()
    if text not in names:
        raise InputError(
            f"unknown verdict or stage {text!r}{_suggest(text, names)} "
            f"(verdicts and stages: {', '.join(names)})"
        )
    return text


def make_rule(kind: Kind, target: str, limit: Any, origin: str = COMMAND_LINE) -> Rule:
    """A checked rule (``ValueError`` says what is wrong with the name or the limit)."""
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise InputError(f"the limit of {target!r} must be a number, got {limit!r}")
    value = float(limit)
    if not math.isfinite(value):
        raise InputError(f"the limit of {target!r} must be finite, got {limit!r}")
    if kind == Kind.MAX_SHARE:
        name = parse_share_target(target)
        if not 0 <= value <= 1:
            raise InputError(f"a share is between 0 and 1, got {value:g} for {name!r}")
        return Rule(kind, name, value, origin)
    column = parse_column(target)
    if kind == Kind.MAX_DROP and value < 0:
        raise InputError(f"an allowed drop is at least 0, got {value:g} for {column!r}")
    return Rule(kind, column, value, origin)


def parse_flag(kind: Kind, text: str) -> Rule:
    """``--min context/KeywordRecall@4=0.8`` (the flag's value) as a rule."""
    target, equals, number = text.rpartition("=")
    if not equals or not target.strip():
        raise InputError(
            InputProblem(
                COMMAND_LINE,
                None,
                _FLAG[kind],
                f"{text!r}: write NAME=VALUE, e.g. {_example(kind)}",
            )
        )
    try:
        value = float(number)
    except ValueError:
        raise InputError(
            InputProblem(COMMAND_LINE, None, _FLAG[kind], f"{text!r}: {number!r} is not a number")
        ) from None
    try:
        return make_rule(kind, target, value, f"{_FLAG[kind]} {text}")
    except ValueError as error:
        raise InputError(InputProblem(COMMAND_LINE, None, _FLAG[kind], str(error))) from None


def _example(kind: Kind) -> str:
    return {
        Kind.MIN: "context/KeywordRecall@4=0.8",
        Kind.MAX: "context/RerankLoss@4=0.1",
        Kind.MAX_DROP: "answer/PointRecall=0.02",
        Kind.MAX_SHARE: "not_retrieved=0.15",
    }[kind]


# --- files --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSet:
    """Rules and the settings a rules file may hold."""

    rules: tuple[Rule, ...]
    alpha: float | None = None
    default_max_drop: float | None = None


_TABLES = {
    "min": Kind.MIN,
    "max": Kind.MAX,
    "max_drop": Kind.MAX_DROP,
    "max-drop": Kind.MAX_DROP,
    "max_share": Kind.MAX_SHARE,
    "max-share": Kind.MAX_SHARE,
}
_SETTINGS = ("alpha", "default_max_drop")
EXAMPLE_FILE = """\
# cofe check rules (TOML). Names are results columns: step/Measure@K.
alpha = 0.05              # family-wise error rate of the drop tests (Holm)
default_max_drop = 0.02   # headline measures, when no [max_drop] rule is given

[min]                     # the run alone: its mean at least
"context/KeywordRecall@4" = 0.8

[max_drop]                # against --baseline: fails when beyond AND significant
"answer/PointRecall" = 0.02
"pool/KeywordRecall@30" = 0.02

[max_share]               # the run alone: share of samples with this verdict (or stage)
not_retrieved = 0.15
"""


def _line_of(text: str, table: str | None, key: str) -> int | None:
    """The line where ``key`` is set inside ``[table]`` (None: top level), 1-based."""
    current: str | None = None
    header = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    for number, line in enumerate(text.splitlines(), start=1):
        match = header.match(line)
        if match:
            current = match.group(1).strip().strip("\"'")
            if table is None and current == key:  # an unknown table: its header
                return number
            continue
        stripped = line.strip()
        if current == table and any(stripped.startswith(k) for k in (f'"{key}"', f"'{key}'", key)):
            rest = stripped[len(key) + (0 if stripped.startswith(key) else 2) :].lstrip()
            if rest.startswith("="):
                return number
    return None


def read_rules(path: str | os.PathLike[str]) -> RuleSet:
    """Rules from a TOML file (see ``EXAMPLE_FILE``); a bad entry names the file, its line
    and the field."""
    file = str(path)
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"at line (\d+)", str(error))
        raise InputError(
            InputProblem(
                file, int(line.group(1)) if line else None, None, f"not valid TOML: {error}"
            )
        ) from None
    return rules_from_mapping(data, file=file, text=text)


def rules_from_mapping(
    data: Mapping[str, Any], *, file: str = "<rules>", text: str = ""
) -> RuleSet:
    """The rules a parsed rules file (or a dict of the same shape) holds."""
    rules: list[Rule] = []
    settings: dict[str, float] = {}
    for key, value in data.items():
        if key in _SETTINGS:
            where = _line_of(text, None, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(InputProblem(file, where, key, f"a number, got {value!r}"))
            if key == "alpha" and not 0 < value < 1:
                raise InputError(InputProblem(file, where, key, f"between 0 and 1, got {value}"))
            if key == "default_max_drop" and value < 0:
                raise InputError(InputProblem(file, where, key, f"at least 0, got {value}"))
            settings[key] = float(value)
            continue
        if key not in _TABLES:
            known = [*_SETTINGS, "min", "max", "max_drop", "max_share"]
            raise InputError(
                InputProblem(
                    file,
                    _line_of(text, None, key),
                    key,
                    f"unknown table or setting{_suggest(key, known)} (known: {', '.join(known)})",
                )
            )
        if not isinstance(value, Mapping):
            name, _, number = _example(_TABLES[key]).partition("=")
            raise InputError(
                InputProblem(
                    file,
                    _line_of(text, None, key),
                    key,
                    f'a table of NAME = VALUE lines, e.g. [{key}] then "{name}" = {number}',
                )
            )
        for target, limit in value.items():
            line = _line_of(text, key, target)
            origin = f"{file}:{line}" if line else f"{file} [{key}]"
            try:
                rules.append(make_rule(_TABLES[key], target, limit, origin))
            except ValueError as error:
                raise InputError(
                    InputProblem(file, line, f"[{key}] {target}", str(error))
                ) from None
    return RuleSet(tuple(rules), settings.get("alpha"), settings.get("default_max_drop"))


def merged(file_rules: Iterable[Rule], flag_rules: Iterable[Rule]) -> list[Rule]:
    """The file's rules, a flag replacing the file's rule of the same kind and name."""
    flags = list(flag_rules)
    given = {(r.kind, r.target) for r in flags}
    return [r for r in file_rules if (r.kind, r.target) not in given] + flags
