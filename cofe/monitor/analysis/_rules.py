"""Alert rules: a rules file's ``[[rule]]`` tables, read in cofe's one rule language.

The file is the language ``cofe check`` reads too (``cofe.rules``, docs/rules.md): a
``target`` -- a traffic signal ``stage/Signal``, a canary verdict share ``VERDICT@STAGE`` /
``lost@STAGE``, or a canary results column ``step/Measure`` -- and a comparison: ``min`` /
``max`` (a threshold) or ``max_rise`` / ``max_drop`` / ``max_change`` (a significant change
from the baseline, at least that large), with the monitor's own keys (``source``,
``baseline``, ``min_samples``, ``alpha``, ``relative``, ``cooldown``). What the alert loop
runs is an ``AlertRule`` (see ``cofe.monitor.analysis._alerts``): every value is checked when one is
made or loaded -- types strictly, numbers finite and bounded, durations finite -- and a bad
one is one line naming the file, the line and the field (:func:`load_rules`). The spelling
before the one language (``stage``, ``measure``, ``kind``, ``direction``, ``above``,
``below``, ``min_effect``) still reads, with a ``RuleSpellingWarning`` naming the new one.
:func:`rules_toml` writes rules back in the new spelling; :func:`rules_schema` is its JSON
Schema.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cofe.chain import STEP_STAGE, Step
from cofe.monitor.analysis._signals import find_signal
from cofe.monitor.store import CANARY, TRAFFIC
from cofe.rules import (
    ANSWERED,
    Bound,
    Dialect,
    Rule,
    RuleFile,
    parse_rule,
    read_rule_file,
    rule_schema,
    spell,
)

MAX_BASELINE = 10_000  # windows or rounds a baseline may span
MAX_SAMPLES = 10**9
MAX_COOLDOWN = 100 * 366 * 86400  # a century of seconds: past it, a time overflows 64 bits
MAX_LIMIT = 1e15  # thresholds and effects: any real measure is far below


class AlertRule(BaseModel):
    """One alert rule as the alert loop runs it (a rules file's rule, translated; see the
    module).
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
    def _consistent(self) -> AlertRule:
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


def _canary_rule(stage: str, measure: str, severity: str = "critical") -> AlertRule:
    return AlertRule(
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
) -> AlertRule:
    return AlertRule(
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


DEFAULT_RULES: tuple[AlertRule, ...] = (
    *(
        _canary_rule(s, f"lost@{s}")
        for s in ("parse", "chunking", "retrieval", "reranking", "generation")
    ),
    _canary_rule("generation", "refused@generation"),
    # the chunker's own measures: a chunking change shows here even when a later stage
    # already loses the same facts (verdicts name only the first loss)
    *(
        AlertRule(
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


def _signal(stage: str, name: str) -> object:
    return find_signal(stage, name)


OPTIONS = ("source", "stage", "baseline", "min_samples", "alpha", "relative", "cooldown")
DIALECT = Dialect(
    reader="cofe monitor alerts",
    bounds=tuple(Bound),
    severities=None,  # a word the sinks pass on (warning, critical, page...)
    default_severity="warning",
    options=OPTIONS,
    signals=_signal,
    staged_shares=True,
)
"""What the monitor reads of the rule language."""

_OLD = ("measure", "kind", "direction", "above", "below", "min_effect", "step")
_DIRECTION = {Bound.MAX_RISE: "up", Bound.MAX_DROP: "down", Bound.MAX_CHANGE: "either"}
_FIELD = {  # an AlertRule field -> the key of the new spelling a problem with it is in
    "above": "max",
    "below": "min",
    "measure": "target",
    "kind": "target",
}


def load_rules(path: str | os.PathLike[str]) -> list[AlertRule]:
    """Rules from a TOML file of ``[[rule]]`` tables; a bad rule is one line naming the file,
    the line, the rule and the field. Durations may be written ``"6h"``, ``"30m"``, ``"90s"``,
    ``"1d"``. Rules in the old spelling read as before, with one ``RuleSpellingWarning``."""
    source = read_rule_file(path)
    tables = source.data.get("rule")
    if not isinstance(tables, list) or not tables:
        raise source.problem("no [[rule]] table", "rule")
    rules: list[AlertRule] = []
    old: list[int] = []
    for index, table in enumerate(tables, start=1):
        if isinstance(table, dict) and "target" not in table and "measure" in table:
            old.append(index)
            rules.append(_old_rule(source, index, table))
        else:
            rules.append(alert_rule(source, index, parse_rule(source, index, table, DIALECT)))
    if old:
        first = rules[old[0] - 1]
        source.warn(
            f"stage, measure, kind, direction, above, below and min_effect are the old "
            f"spelling of alert rules ({len(old)} rule(s) here); write, e.g., "
            f"{spell(list(new_spelling(first).items()))}",
            "measure",
            old[0],
        )
    names = [r.name for r in rules]
    for index, name in enumerate(names, start=1):
        if names.count(name) > 1 and names.index(name) < index - 1:
            raise source.problem(f"rule names must differ: {name!r}", "name", index)
    return rules


def alert_rule(source: RuleFile, index: int, rule: Rule) -> AlertRule:
    """The alert loop's rule for a rule of the language (the ``index``-th table)."""
    target = rule.target
    origin = rule.option("source") or (TRAFFIC if target.form == "signal" else CANARY)
    if origin == TRAFFIC and target.form != "signal":
        raise source.problem(
            f"a traffic rule watches a signal, stage/Signal (e.g. retrieval/PoolSize), "
            f"not {target}",
            "target",
            index,
        )
    if origin == CANARY and target.form == "signal":
        raise source.problem(
            f"a canary rule watches a verdict share (VERDICT@STAGE, lost@STAGE) or a results "
            f"column (step/Measure), not the traffic signal {target}",
            "target",
            index,
        )
    if target.form == "share" and not target.scope:
        raise source.problem(
            f"a canary share names its stage: {target}@STAGE (or lost@STAGE)", "target", index
        )
    stage = rule.option("stage")
    if stage is not None and target.form != "column":
        raise source.problem(f"the target {target} names its stage already", "stage", index)
    if target.form == "column" and stage is None:
        stage = _step_stage(target.scope)
        if stage is None:
            raise source.problem(
                f"the {target.scope} step's stage depends on the run: say which, e.g. "
                'stage = "reranking"',
                "stage",
                index,
            )
    fields: dict[str, Any] = {
        "name": rule.name or f"{origin} {target}",
        "source": origin,
        "stage": stage if target.form == "column" else target.scope,
        "measure": target.name if target.form == "signal" else target.text,
        "severity": rule.severity,
        **{k: v for k, v in rule.options if k not in ("source", "stage")},
    }
    bound, limit = rule.limits[0]
    if bound.is_change:
        fields |= {"kind": "change", "direction": _DIRECTION[bound], "min_effect": limit}
    else:
        fields |= {"kind": "threshold"}
        fields |= {"below" if b == Bound.MIN else "above": v for b, v in rule.limits}
    try:
        return AlertRule.model_validate(fields)
    except ValidationError as error:
        field, message = _rule_problem(error)
        key = _FIELD.get(field or "", field)
        if field == "min_effect":
            key = str(bound)
        raise source.problem(message, key, index) from None
    except (ValueError, RecursionError) as error:  # a duration that is not one
        raise source.problem(str(error)[:300], "cooldown", index) from None


def _step_stage(step: str) -> str | None:
    if step == ANSWERED:
        step = Step.ANSWER.value
    stage = STEP_STAGE.get(Step(step))
    return stage.value if stage is not None else None


def _old_rule(source: RuleFile, index: int, table: dict[str, Any]) -> AlertRule:
    """A table of the spelling before the one language, read as it always was."""
    try:
        return AlertRule.model_validate(table)
    except ValidationError as error:
        field, message = _rule_problem(error)
        raise source.problem(message, field, index) from None
    except (ValueError, RecursionError) as error:  # a duration that is not one
        raise source.problem(str(error)[:300], "cooldown", index) from None


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


def new_spelling(rule: AlertRule) -> dict[str, Any]:
    """The ``[[rule]]`` table of the one language for an alert rule (fields left at their
    defaults omitted). A canary threshold on a measure the round's summary lists by bare
    name (``measure = "KeywordRecall"``) has no new spelling: it is written as before."""
    written = rule.model_dump(exclude_defaults=True)
    if rule.source == TRAFFIC:
        target = f"{rule.stage}/{rule.measure}"
    elif "@" in rule.measure or "/" in rule.measure:
        target = rule.measure
    else:
        old = {k: v for k, v in written.items() if v is not None}
        return {k: getattr(rule, k) for k in ("name", "source", "stage", "measure")} | old
    table: dict[str, Any] = {"name": rule.name, "source": rule.source, "target": target}
    if "/" in target and rule.source == CANARY and _step_stage(target.split("/")[0]) != rule.stage:
        table["stage"] = rule.stage
    if rule.kind == "change":
        bound = {v: k for k, v in _DIRECTION.items()}[rule.direction]
        table[str(bound)] = rule.min_effect
    else:
        table |= {"min": rule.below} if rule.below is not None else {}
        table |= {"max": rule.above} if rule.above is not None else {}
    kept = ("baseline", "min_samples", "alpha", "relative", "cooldown", "severity")
    return table | {k: written[k] for k in kept if k in written}


def rules_toml(rules: Sequence[AlertRule]) -> str:
    """Rules as the TOML ``load_rules`` reads, in the one rule language, written by a TOML
    writer (tomli-w: quoting and escapes as TOML has them)."""
    import tomli_w

    return tomli_w.dumps({"rule": [new_spelling(rule) for rule in rules]})


def rules_schema() -> str:
    """The JSON Schema of a rules file's ``[[rule]]`` table (``--print-rules-schema``)."""
    fields = AlertRule.model_json_schema()["properties"]
    options = {key: fields[key] for key in OPTIONS}
    options["stage"] = {
        "type": "string",
        "description": "a results column's stage, when its step's stage depends on the run",
    }
    options["source"] = {**fields["source"], "description": "default: traffic for a signal"}
    options["cooldown"] = {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}],
        "description": "seconds of quiet after an alert, or 90s, 15m, 6h, 1d",
    }
    return json.dumps(rule_schema(DIALECT, options), indent=2)
