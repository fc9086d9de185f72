"""Alert rules: what a rules file's ``[[rule]]`` tables say, as pydantic models.

A rule watches one stage and one measure of the canaries or of the traffic (see
``cofe.monitor._alerts``). Every value is checked when a rule is made or loaded --
types strictly, numbers finite and bounded, durations finite -- and a bad one is one line
naming the file, the rule and the field (:func:`load_rules`); :func:`rules_toml` writes
rules back as TOML. ``Rule.model_json_schema()`` is the rule file's JSON Schema.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cofe._errors import InputError, InputProblem
from cofe.monitor.analysis._signals import find_signal
from cofe.monitor.store import TRAFFIC

MAX_BASELINE = 10_000  # windows or rounds a baseline may span
MAX_SAMPLES = 10**9
MAX_COOLDOWN = 100 * 366 * 86400  # a century of seconds: past it, a time overflows 64 bits
MAX_LIMIT = 1e15  # thresholds and effects: any real measure is far below


class Rule(BaseModel):
    """One alert rule, as a rules file's ``[[rule]]`` table writes it (see the module).
    Every value is checked when the rule is made -- types strictly (``"0.1"`` is not a
    number), numbers finite and within bounds (``nan`` would never fire, ``1e11`` windows
    overflow the store's times) -- so a rule that loads can run."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str = Field(min_length=1, pattern=r"\S")
    source: Literal["traffic", "canary"]
    stage: str = Field(min_length=1, pattern=r"\S")
    measure: str = Field(min_length=1, pattern=r"\S")
    kind: Literal["change", "threshold"] = "change"
    direction: Literal["up", "down", "either"] = "up"  # the change that is bad
    above: float | None = Field(default=None, allow_inf_nan=False, ge=-MAX_LIMIT, le=MAX_LIMIT)
    below: float | None = Field(default=None, allow_inf_nan=False, ge=-MAX_LIMIT, le=MAX_LIMIT)
    step: str | None = None  # canary thresholds on a measure of several steps (pool, context)
    baseline: int = Field(default=3, ge=1, le=MAX_BASELINE)  # windows (traffic) or rounds (canary)
    min_samples: int = Field(default=20, ge=1, le=MAX_SAMPLES)  # in the current window and baseline
    alpha: float = Field(default=0.001, gt=0, lt=1, allow_inf_nan=False)
    # change of the mean: absolute (a rate: 0.1 = ten points), or as a share of the baseline
    # (0.2 = a fifth) when relative
    min_effect: float = Field(default=0.1, ge=0, le=MAX_LIMIT, allow_inf_nan=False)
    relative: bool = False
    cooldown: int = Field(
        default=24 * 3600, ge=0, le=MAX_COOLDOWN
    )  # seconds of quiet after an alert
    severity: str = Field(default="warning", min_length=1, pattern=r"\S")

    @field_validator("cooldown", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return duration_seconds(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> Rule:
        if self.kind == "threshold" and self.above is None and self.below is None:
            raise ValueError("a threshold rule needs above or below")
        if self.source == TRAFFIC:
            signal = find_signal(self.stage, self.measure)  # a misspelt signal fails at load
            if self.kind == "change" and signal.statistic == "count":
                raise ValueError(
                    f"{self.measure} is a count per window: watch it with a "
                    "threshold rule (e.g. below = 1 for traffic that stopped)"
                )
        elif (
            self.kind == "change"
            and "@" not in self.measure.split("/")[0]
            and "/" not in self.measure
        ):
            raise ValueError(
                f"a canary change rule tests a verdict share (VERDICT@STAGE or "
                f"lost@STAGE) or a measure of a step (e.g. corpus/EntityAnchoring), "
                f"not {self.measure!r}"
            )
        return self


_WHOLE = ("int_type", "int_parsing", "int_from_float")
_NUMBER = ("float_type", "float_parsing")


def _rule_problem(error: ValidationError) -> tuple[str | None, str]:
    """(field, one-line message) of a rule's first problem, its value shortened."""
    first = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    shown = repr(first.get("input"))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    kind = first["type"]
    if kind in _WHOLE:
        message = f"{field} must be a whole number, not {shown}"
    elif kind in _NUMBER:
        message = f"{field} must be a number, not {shown}"
    elif kind == "finite_number":
        message = f"{field} must be a finite number, not {shown}"
    elif kind == "extra_forbidden":
        message = "unknown field"
    elif kind == "value_error":
        message = str(first["msg"]).removeprefix("Value error, ")
    else:
        message = f"{field}: {first['msg']}, not {shown}" if field else str(first["msg"])
    return field, message


def _canary_rule(stage: str, measure: str, severity: str = "critical") -> Rule:
    return Rule(
        name=f"canary {measure}",
        source="canary",
        stage=stage,
        measure=measure,
        min_samples=10,
        alpha=0.01,
        min_effect=0.1,
        severity=severity,
    )


def _traffic_rule(
    stage: str, measure: str, effect: float, direction: str = "up", relative: bool = False
) -> Rule:
    return Rule(
        name=f"traffic {stage} {measure}",
        source="traffic",
        stage=stage,
        measure=measure,
        direction=direction,  # type: ignore[arg-type]
        min_samples=20,
        alpha=0.001,
        min_effect=effect,
        relative=relative,
    )


DEFAULT_RULES: tuple[Rule, ...] = (
    *(
        _canary_rule(s, f"lost@{s}")
        for s in ("parse", "chunking", "retrieval", "reranking", "generation")
    ),
    _canary_rule("generation", "refused@generation"),
    # the chunker's own measures: a chunking change shows here even when a later stage
    # already loses the same facts (verdicts name only the first loss)
    *(
        Rule(
            name=f"canary corpus/{m}",
            source="canary",
            stage="chunking",
            measure=f"corpus/{m}",
            direction="down",
            min_samples=10,
            alpha=0.01,
            min_effect=0.03,
            severity="critical",
        )
        for m in ("KeywordRecall", "ChunkIntegrity", "EntityAnchoring")
    ),
    *(_traffic_rule(s, "ErrorRate", 0.05) for s in ("retrieval", "reranking", "generation")),
    _traffic_rule("all", "ProblemRate", 0.1),
    # re-chunking shows in the length of the chunks traffic retrieves, either way
    _traffic_rule("chunking", "ChunkChars", 0.2, direction="either", relative=True),
    _traffic_rule("retrieval", "EmptyPoolRate", 0.1),
    # a retriever returning fewer chunks (a changed k, a filter) or scoring them differently (a
    # new embedding model, an index rebuilt): a fifth of the baseline, either way
    _traffic_rule("retrieval", "PoolSize", 0.2, direction="either", relative=True),
    _traffic_rule("retrieval", "TopScore", 0.2, direction="either", relative=True),
    _traffic_rule("reranking", "EmptyContextRate", 0.1),
    _traffic_rule("reranking", "Top1Dropped", 0.2),
    _traffic_rule("reranking", "PromotedShare", 0.2),
    _traffic_rule("generation", "EmptyAnswerRate", 0.1),
    _traffic_rule("generation", "RefusalRate", 0.1),
)
"""What ``cofe monitor alerts`` watches without a rules file (``--print-default-rules``)."""


def load_rules(path: str | os.PathLike[str]) -> list[Rule]:
    """Rules from a TOML file of ``[[rule]]`` tables; a bad rule names the file, the rule and
    the field. Durations may be written ``"6h"``, ``"30m"``, ``"90s"``, ``"1d"``."""
    file = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise InputError(InputProblem(file, None, None, f"not valid TOML: {error}")) from None
    except RecursionError:  # thousands of nested arrays or tables
        raise InputError(
            InputProblem(file, None, None, "not valid TOML: nested too deeply")
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(
            InputProblem(file, None, None, f"not UTF-8 text ({error.reason})")
        ) from None
    tables = data.get("rule")
    if not isinstance(tables, list) or not tables:
        raise InputError(InputProblem(file, None, "rule", "no [[rule]] table"))
    rules = []
    for i, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            raise InputError(InputProblem(file, None, f"rule {i}", "a rule is a [[rule]] table"))
        name = table.get("name", "unnamed")
        where = f"rule {i} ({name if isinstance(name, str) else 'unnamed'!r})"
        try:
            rules.append(Rule.model_validate(table))
        except ValidationError as error:
            field, message = _rule_problem(error)
            if message == "unknown field":
                where = f"{where}.{field}"
            raise InputError(InputProblem(file, None, where, message)) from None
        except (ValueError, RecursionError) as error:  # a duration that is not one
            raise InputError(InputProblem(file, None, where, str(error)[:300])) from None
    names = [r.name for r in rules]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(InputProblem(file, None, "name", f"rule names must differ: {twice[0]!r}"))
    return rules


def duration_seconds(text: str) -> int:
    """Seconds of ``90``, ``90s``, ``15m``, ``6h``, ``1d``: finite, at most a century."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    shown = text if len(text) <= 40 else text[:37] + "..."
    try:
        number, unit = (text[:-1], units[text[-1]]) if text and text[-1] in units else (text, 1)
        seconds = float(number) * unit
    except ValueError:
        raise ValueError(f"{shown!r} is not a duration (e.g. 90s, 15m, 6h, 1d)") from None
    if not math.isfinite(seconds) or abs(seconds) > MAX_COOLDOWN:
        raise ValueError(f"{shown!r} is not a duration of at most a century (e.g. 90s, 1d)")
    return int(seconds)


def rules_toml(rules: Sequence[Rule]) -> str:
    """Rules as the TOML ``load_rules`` reads, written by a TOML writer (tomli-w: quoting
    and escapes as TOML has them); fields left at their defaults are omitted."""
    import tomli_w

    required = ("name", "source", "stage", "measure")
    tables = [
        {
            name: value
            for name, value in rule.model_dump(exclude_defaults=True).items()
            if value is not None
        }
        | {name: getattr(rule, name) for name in required}
        for rule in rules
    ]
    ordered = [
        {
            **{name: table[name] for name in required},
            **{k: v for k, v in table.items() if k not in required},
        }
        for table in tables
    ]
    return tomli_w.dumps({"rule": ordered})


def rules_schema() -> str:
    """The JSON Schema of a rules file's ``[[rule]]`` table (``--print-rules-schema``)."""
    return json.dumps(Rule.model_json_schema(), indent=2)
