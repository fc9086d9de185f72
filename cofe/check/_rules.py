"""Gate rules: what ``cofe check`` asserts, from flags, a rules file or a mapping.

The file is cofe's one rule language (``cofe.rules``, docs/rules.md): ``[[rule]]`` tables
whose ``target`` is a results column, ``step/Measure@K`` (``context/KeywordRecall@4``,
``answered/PointRecall`` for answers that do not decline), or a share of a verdict code
(``not_retrieved``) or a stage (``retrieval``: every verdict blaming it); compared by ``min``,
``max`` or ``max_drop`` (against ``--baseline``). The gate's own model of a rule is a
``GateRule`` (one comparison each). The old spelling -- ``[min]``, ``[max]``, ``[max_drop]``
and ``[max_share]`` tables of ``"NAME" = VALUE`` lines -- still reads, with a
``RuleSpellingWarning`` naming the new one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cofe._errors import InputError, InputProblem
from cofe.rules import (
    Bound,
    Dialect,
    Rule,
    RuleFile,
    parse_column,
    parse_rule,
    parse_share,
    read_rule_file,
    spell,
    suggest,
)

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
class GateRule:
    """One assertion of the gate (a rules file's rule, a flag or a default). ``target`` is a column (``context/KeywordRecall@4``) or, for
    ``max_share``, a verdict code or a stage; ``origin`` says where it was written."""

    kind: Kind
    target: str
    limit: float
    origin: str = COMMAND_LINE
    default: bool = False  # a headline rule added because no drop rule was given
    severity: str = "error"  # "warning": reported when it fails, the gate still passes

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


def make_rule(
    kind: Kind, target: str, limit: Any, origin: str = COMMAND_LINE, severity: str = "error"
) -> GateRule:
    """A checked rule (``ValueError`` says what is wrong with the name or the limit)."""
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise InputError(f"the limit of {target!r} must be a number, got {limit!r}")
    value = float(limit)
    if not math.isfinite(value):
        raise InputError(f"the limit of {target!r} must be finite, got {limit!r}")
    if kind == Kind.MAX and "/" not in target:  # one language: a share is bounded by max
        kind = Kind.MAX_SHARE
    if kind == Kind.MAX_SHARE:
        name = parse_share(target).text
        if not 0 <= value <= 1:
            raise InputError(f"a share is between 0 and 1, got {value:g} for {name!r}")
        return GateRule(kind, name, value, origin, severity=severity)
    column = parse_column(target)
    if kind == Kind.MAX_DROP and value < 0:
        raise InputError(f"an allowed drop is at least 0, got {value:g} for {column!r}")
    return GateRule(kind, column, value, origin, severity=severity)


def parse_flag(kind: Kind, text: str) -> GateRule:
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


@dataclass(frozen=True)
class RuleSet:
    """Rules and the settings a rules file may hold."""

    rules: tuple[GateRule, ...]
    alpha: float | None = None
    default_max_drop: float | None = None


SETTINGS = ("alpha", "default_max_drop")
SEVERITIES = ("error", "warning")  # error: a rule that fails fails the build; warning: said only
DIALECT = Dialect(
    reader="cofe check",
    bounds=(Bound.MIN, Bound.MAX, Bound.MAX_DROP),
    severities=SEVERITIES,
    default_severity="error",
    settings=SETTINGS,
)
"""What ``cofe check`` reads of the rule language."""

_OLD_TABLES = {  # the spelling before the one rule language: [min] "NAME" = VALUE
    "min": Kind.MIN,
    "max": Kind.MAX,
    "max_drop": Kind.MAX_DROP,
    "max-drop": Kind.MAX_DROP,
    "max_share": Kind.MAX_SHARE,
    "max-share": Kind.MAX_SHARE,
}
EXAMPLE_FILE = """\
# cofe check rules: [[rule]] tables (docs/rules.md). A target is a results column,
# step/Measure@K, or the share of a verdict or a stage.
alpha = 0.05              # family-wise error rate of the drop tests (Holm)
default_max_drop = 0.02   # headline measures, when no max_drop rule is given

[[rule]]                  # the run alone: its mean at least
target = "context/KeywordRecall@4"
min = 0.8

[[rule]]                  # against --baseline: fails when beyond AND significant
target = "answer/PointRecall"
max_drop = 0.02

[[rule]]
target = "pool/KeywordRecall@30"
max_drop = 0.02

[[rule]]                  # the run alone: share of samples with this verdict (or stage)
target = "not_retrieved"
max = 0.15
"""


def read_rules(path: str | os.PathLike[str]) -> RuleSet:
    """Rules from a TOML file (see ``EXAMPLE_FILE``); a bad entry is one line naming the
    file, its line and the field. The old spelling reads with a ``RuleSpellingWarning``."""
    return _rule_set(read_rule_file(path))


def rules_from_mapping(
    data: Mapping[str, Any], *, file: str = "<rules>", text: str = ""
) -> RuleSet:
    """The rules a parsed rules file (or a dict of the same shape) holds:
    ``{"rule": [{"target": "context/KeywordRecall@4", "min": 0.8}]}``."""
    return _rule_set(RuleFile(file, text, data))


def _rule_set(source: RuleFile) -> RuleSet:
    settings: dict[str, float] = {}
    known = ["rule", *SETTINGS]
    for key, value in source.data.items():
        if key in SETTINGS:
            settings[key] = _setting(source, key, value)
        elif key not in (*known, *_OLD_TABLES):
            raise source.problem(
                f"unknown table or setting{suggest(key, known)} (known: {', '.join(known)})", key
            )
    rules = _old_rules(source)
    tables = source.data.get("rule")
    if tables is not None and not isinstance(tables, list):
        raise source.problem("rules are [[rule]] tables (two brackets)", "rule")
    for index, table in enumerate(tables or [], start=1):
        rules += gate_rules(source, index, table)
    return RuleSet(tuple(rules), settings.get("alpha"), settings.get("default_max_drop"))


def _setting(source: RuleFile, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise source.problem(f"a number, got {value!r}", key)
    if key == "alpha" and not 0 < value < 1:
        raise source.problem(f"between 0 and 1, got {value}", key)
    if key == "default_max_drop" and value < 0:
        raise source.problem(f"at least 0, got {value}", key)
    return float(value)


def gate_rules(source: RuleFile, index: int, table: Any) -> list[GateRule]:
    """The gate's rules of the ``index``-th ``[[rule]]`` table (a band: two of them)."""
    rule: Rule = parse_rule(source, index, table, DIALECT)
    out = []
    for bound, limit in rule.limits:
        kind = Kind(str(bound))
        if rule.target.form == "share":
            if bound != Bound.MAX:
                raise source.problem(
                    f"cofe check bounds a share by max only (the share of samples with "
                    f"{rule.target} at most), not by {bound}",
                    str(bound),
                    index,
                )
            kind = Kind.MAX_SHARE
        try:
            out.append(make_rule(kind, rule.target.text, limit, rule.origin, rule.severity))
        except InputError as error:
            raise source.problem(str(error), str(bound), index) from None
    return out


def _old_rules(source: RuleFile) -> list[GateRule]:
    """The ``[min]``/``[max_drop]``/... tables of the old spelling, read as before; one
    warning per file saying how its first rule is written now."""
    rules: list[GateRule] = []
    for key, value in source.data.items():
        if key not in _OLD_TABLES:
            continue
        if not isinstance(value, Mapping):
            name, _, number = _example(_OLD_TABLES[key]).partition("=")
            raise source.problem(
                f'a table of NAME = VALUE lines, e.g. [{key}] then "{name}" = {number}', key
            )
        for target, limit in value.items():
            line = source.line_of(key, target)
            origin = f"{source.file}:{line}" if line else f"{source.file} [{key}]"
            try:
                rules.append(make_rule(_OLD_TABLES[key], target, limit, origin))
            except ValueError as error:
                raise InputError(
                    InputProblem(source.file, line, f"[{key}] {target}", str(error))
                ) from None
    if rules:
        first = rules[0]
        bound = "max" if first.kind == Kind.MAX_SHARE else str(first.kind)
        source.warn(
            f"[{first.kind}] tables of NAME = VALUE are the old spelling of cofe check's rules; "
            f"write a [[rule]] table for each: {spell([('target', first.target), (bound, first.limit)])}",
            next(k for k in source.data if k in _OLD_TABLES),
        )
    return rules


def merged(file_rules: Iterable[GateRule], flag_rules: Iterable[GateRule]) -> list[GateRule]:
    """The file's rules, a flag replacing the file's rule of the same kind and name."""
    flags = list(flag_rules)
    given = {(r.kind, r.target) for r in flags}
    return [r for r in file_rules if (r.kind, r.target) not in given] + flags
