"""The pytest plugin (entry point ``pytest11``: ``cofe``): cofe checks inside a test suite.

* The ``cofe_check`` fixture: ``cofe_check("runs/new", baseline="runs/main",
  rules={"min": {"context/KeywordRecall@4": 0.8}})`` returns the ``CheckReport`` and fails
  the test (``CheckFailed``, an ``AssertionError``) naming each failing stage and measure.
  Arguments left out come from the options below.
* Options (or ini keys ``cofe_run``, ``cofe_baseline``, ``cofe_rules``): ``--cofe-run DIR``,
  ``--cofe-baseline DIR``, ``--cofe-rules FILE``. Given ``--cofe-run``, the session also holds
  one test of its own, ``cofe-check``, that runs the gate: ``pytest --cofe-run=runs/new
  --cofe-baseline=runs/main`` is ``cofe check`` inside pytest (and in its ``--junitxml``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from cofe.check import CheckReport, GateRule, RuleSet
    from cofe.results import ScoreResult

_OPTIONS = ("cofe_run", "cofe_baseline", "cofe_rules")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cofe", "cofe check: fail on stage regressions")
    group.addoption(
        "--cofe-run",
        metavar="DIR",
        default=None,
        help="the scoring to check (results folder or run directory); adds the test cofe-check",
    )
    group.addoption(
        "--cofe-baseline", metavar="DIR", default=None, help="the scoring to compare with"
    )
    group.addoption("--cofe-rules", metavar="FILE", default=None, help="a cofe check rules file")
    for name in _OPTIONS:
        parser.addini(name, f"default of --{name.replace('_', '-')}", default=None)


def _option(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(name)
    if value is None:
        value = config.getini(name) or None
    return None if value is None else str(value)


class CofeCheck:
    """The ``cofe_check`` fixture's value: call it to run a check inside a test."""

    def __init__(self, run: str | None, baseline: str | None, rules: str | None) -> None:
        self.run, self.baseline, self.rules = run, baseline, rules

    def __call__(
        self,
        run: ScoreResult | str | Path | None = None,
        baseline: ScoreResult | str | Path | None = None,
        rules: RuleSet | Sequence[GateRule] | Mapping[str, Any] | str | Path | None = None,
        **options: Any,
    ) -> CheckReport:
        from cofe.check import assert_check

        __tracebackhide__ = True  # the failure is the test's, not cofe's
        run = run if run is not None else self.run
        if run is None:
            pytest.fail("cofe_check: give the run to check (or --cofe-run)", pytrace=False)
        return assert_check(
            run,
            baseline if baseline is not None else self.baseline,
            rules if rules is not None else self.rules,
            **options,
        )


@pytest.fixture
def cofe_check(request: pytest.FixtureRequest) -> CofeCheck:
    """Run ``cofe check`` in a test; a failed rule fails the test, naming stage and measure."""
    config = request.config
    return CofeCheck(*(_option(config, name) for name in _OPTIONS))


class CofeCheckItem(pytest.Item):
    """The gate as one test of the session (``--cofe-run``)."""

    def __init__(self, *, check: CofeCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        self.check()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from cofe.check import CheckFailed, render_text

        if isinstance(excinfo.value, CheckFailed):
            return f"{excinfo.value}\n\n{render_text(excinfo.value.report)}"
        return str(excinfo.getrepr(style="short"))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.check.run or "", None, f"cofe check {self.check.run}"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    run = _option(config, "cofe_run")
    if run is None:
        return
    check = CofeCheck(run, _option(config, "cofe_baseline"), _option(config, "cofe_rules"))
    items.append(CofeCheckItem.from_parent(session, name="cofe-check", check=check))
