"""What a rule watches: its target, one spelling for the gate and the monitor.

Three forms, told apart by their shape so one parser reads them all:

* a **results column**, ``step/Measure@K`` (``context/KeywordRecall@4``): the step is one of
  the chain's, the measure is parsed by the measure registry (close spellings suggested);
* a **share** of samples, no ``/``: a verdict code (``not_retrieved``) or a stage
  (``retrieval``: every verdict blaming it), or -- where the consumer counts them per stage,
  as the monitor's canaries do -- ``VERDICT@STAGE`` and ``lost@STAGE``;
* a **signal** of live traffic, ``stage/Signal`` (``retrieval/PoolSize``): the left side is a
  stage, never a step (the two sets of names are disjoint), and the consumer that reads
  signals checks the name.

The registries are imported inside the functions: reading a rules file should not pay for
loading the measures or the verdicts until a target is parsed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from cofe._errors import InputError
from cofe.chain import STEP_SPECS

ANSWERED = "answered"  # cofe.compare.ANSWERED, spelled here so that parsing stays light
RULE_STEPS = (*(spec.step.value for spec in STEP_SPECS if spec.passes is not None), ANSWERED)
LOST = "lost"  # VERDICT@STAGE's wildcard: any loss blamed on the stage

Form = Literal["column", "share", "signal"]
SignalCheck = Callable[[str, str], object]
"""Checks ``(stage, name)`` of a traffic signal, raising ``InputError`` naming the known ones."""


@dataclass(frozen=True)
class Target:
    """A parsed target. ``text`` is its canonical spelling (as a results column is spelled);
    ``scope`` the step of a column, the stage of a signal or of a staged share (``""``: a
    share of every stage); ``name`` the measure, signal, verdict or stage."""

    text: str
    form: Form
    scope: str
    name: str

    def __str__(self) -> str:
        return self.text


def close_matches(text: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names nearest ``text`` (case and ``@K`` cutoffs set aside)."""
    known = list(known)
    bare = re.sub(r"@\w*$", "", text.strip()).lower()
    keys = {re.sub(r"@\w*$", "", k).lower(): k for k in reversed(known)}
    found = difflib.get_close_matches(bare, list(keys), n=n, cutoff=0.6)
    return [keys[f] for f in found]


def suggest(text: str, known: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` or ``""``; a cutoff the user wrote is kept on ranked steps."""
    near = close_matches(text, known)
    cutoff = re.search(r"@\d+$", text.strip())
    if cutoff:
        near = [
            re.sub(r"@K$", "", n) + cutoff.group()
            if n.endswith("@K") or n.split("/")[0] in ("pool", "context")
            else n
            for n in near
        ]
    return f"; did you mean {', '.join(near)}?" if near else ""


def _measure_spellings() -> dict[str, list[str]]:
    """Per step: the measures that apply there (``Name@K`` for those needing a cutoff)."""
    from cofe.measures import Measure

    out: dict[str, list[str]] = {step: [] for step in RULE_STEPS}
    for name, cls in sorted(Measure.REGISTRY.items()):
        if not name:
            continue
        spelling = f"{name}@K" if cls.NEEDS_CUTOFF else name
        for step in cls.STEPS:
            out[str(step)].append(spelling)
            if str(step) == "answer":
                out[ANSWERED].append(spelling)
    return out


def parse_column(text: str) -> str:
    """``"context/KeywordRecall@4"`` checked against the measures' registry and the steps;
    returns it as the results column is spelled. ``InputError`` names close matches."""
    from cofe.measures import Measure, parse_measure

    spellings = _measure_spellings()
    every = [f"{step}/{m}" for step, names in spellings.items() for m in names]
    text = text.strip()
    step, slash, measure_text = text.partition("/")
    if not slash:
        raise InputError(
            f"{text!r} names no step: write it as a results column, step/Measure "
            f"(e.g. context/KeywordRecall@4){suggest('answer/' + text, every)}"
        )
    if step not in RULE_STEPS:
        raise InputError(
            f"unknown step {step!r} in {text!r} (steps: {', '.join(RULE_STEPS)}){suggest(text, every)}"
        )
    try:
        measure = parse_measure(measure_text)
    except ValueError as error:
        if re.sub(r"@.*$", "", measure_text.strip()) in Measure.REGISTRY:  # a bad cutoff
            raise InputError(f"{text!r}: {error}") from None
        raise InputError(
            f"unknown measure {measure_text!r} in {text!r}{suggest(text, every)}"
        ) from None
    applies = {str(s) for s in measure.STEPS} | ({ANSWERED} if "answer" in measure.STEPS else set())
    if step not in applies:
        raise InputError(
            f"{measure.NAME} is not measured at the {step} step (only at "
            f"{', '.join(s for s in RULE_STEPS if s in applies)})"
            f"{suggest(text, every)}"
        )
    return f"{step}/{measure.name}"


def higher_is_better(column: str) -> bool:
    from cofe.measures import parse_measure

    return parse_measure(column.split("/", 1)[1]).HIGHER_IS_BETTER


def stage_names() -> list[str]:
    from cofe.runlog import Stage

    return [str(s) for s in Stage]


def share_names() -> list[str]:
    """What a share may name: every verdict code and every stage."""
    from cofe.diagnose import Verdict

    return [str(v) for v in Verdict] + stage_names()


def parse_share(text: str, *, staged: bool = False) -> Target:
    """A verdict or a stage (``not_retrieved``, ``retrieval``); with ``staged``, also
    ``VERDICT@STAGE`` and ``lost@STAGE``. ``InputError`` names close matches."""
    text = text.strip()
    names = share_names()
    verdict, at, stage = text.partition("@")
    if at:
        if not staged:
            raise InputError(
                f"{text!r}: a share here is a verdict or a stage alone "
                f"(e.g. {verdict!r} or {stage!r}), not VERDICT@STAGE"
            )
        stages = [*stage_names(), "none"]  # "none": a verdict no stage is blamed for
        verdicts = [*(n for n in names if n not in stages), LOST]
        if verdict not in verdicts:
            raise InputError(
                f"unknown verdict {verdict!r} in {text!r}{suggest(verdict, verdicts)} "
                f"(verdicts: {', '.join(verdicts)})"
            )
        if stage not in stages:
            raise InputError(
                f"unknown stage {stage!r} in {text!r}{suggest(stage, stages)} "
                f"(stages: {', '.join(stages)})"
            )
        return Target(text, "share", stage, verdict)
    if text not in names:
        raise InputError(
            f"unknown verdict or stage {text!r}{suggest(text, names)} "
            f"(verdicts and stages: {', '.join(names)})"
        )
    return Target(text, "share", "", text)


def parse_target(
    text: str, *, signals: SignalCheck | None = None, staged_shares: bool = False
) -> Target:
    """A rule's target in any of its three forms (see the module). ``signals`` checks a
    traffic signal's name (None: this consumer reads no signals, so ``stage/Name`` is an
    unknown step); ``staged_shares`` allows ``VERDICT@STAGE``."""
    if not isinstance(text, str):
        raise InputError(f"a target is a string, not {text!r}")
    text = text.strip()
    left, slash, right = text.partition("/")
    if not slash:
        try:
            return parse_share(text, staged=staged_shares)
        except InputError:
            from cofe.measures import Measure

            if re.sub(r"@.*$", "", text) in Measure.REGISTRY:  # a measure with no step
                parse_column(text)  # says so, with the columns near it
            raise
    if left in RULE_STEPS or signals is None:
        column = parse_column(text)
        step, _, measure = column.partition("/")
        return Target(column, "column", step, measure)
    signals(left, right.strip())  # raises InputError naming the known signals
    return Target(f"{left}/{right.strip()}", "signal", left, right.strip())
