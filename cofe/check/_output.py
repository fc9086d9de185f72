"""What a check shows: a table for people, JUnit XML for CI test reports, GitHub annotations."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from cofe.chain import STAGE_SPECS
from cofe.check._gate import CheckReport, Outcome, Status
from cofe.check._rules import Kind

_PIPELINE = [spec.stage.value for spec in STAGE_SPECS]
_HEADER = (
    "verdict",
    "stage",
    "rule",
    "value",
    "baseline",
    "delta",
    "95% CI",
    "p_holm",
    "n",
    "detectable",
)


def _number(value: float | None, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _cells(o: Outcome) -> tuple[str, ...]:
    ci = (
        "-"
        if o.low is None or o.high is None
        else f"[{_number(o.low, o.delta is not None)}, {_number(o.high, o.delta is not None)}]"
    )
    return (
        o.status.upper(),
        o.stage or "-",
        str(o.rule),
        _number(o.value),
        _number(o.baseline),
        _number(o.delta, signed=True),
        ci,
        _p(o.p_holm),
        str(o.n) if o.n else "-",
        _detectable(o.detectable),
    )


def _detectable(value: float | None) -> str:
    if value is None:
        return "-"
    return "none" if math.isinf(value) else f"{value:.3f}"


def describe(o: Outcome) -> str:
    """One line naming the stage, the measure and why the rule passed or failed."""
    where = f"{o.stage}: " if o.stage else ""
    if o.rule.kind == Kind.MAX_DROP and o.delta is not None:
        moved = (
            f" ({_number(o.baseline)} -> {_number(o.value)}, paired delta "
            f"{_number(o.delta, signed=True)}, 95% CI [{_number(o.low, True)}, "
            f"{_number(o.high, True)}], {o.test} test, n={o.n})"
        )
        at = f" [{o.compared_at}]" if o.compared_at else ""
        return f"{where}{o.rule.target}{at} {o.reason}{moved}"
    if o.rule.kind == Kind.MAX_DROP:  # a stage the runs could not be compared on
        return f"{where}{o.rule.target}: {o.reason}"
    if o.rule.kind == Kind.MAX_SHARE:
        return f"{where}share of {o.rule.target} verdicts must be <= {o.rule.limit:g}: {o.reason}"
    return f"{where}{o.rule}: {o.reason}"


def render_text(report: CheckReport) -> str:
    """The table a person reads, the rules' statistics said above it."""
    lines = [
        f"cofe check {report.run}"
        + (f" against baseline {report.baseline}" if report.baseline else "")
    ]
    drops = [o for o in report.outcomes if o.rule.kind == Kind.MAX_DROP and o.status != Status.SKIP]
    if report.baseline is not None:
        lines.append(
            f"  a drop fails only when it is larger than its rule allows AND significant "
            f"under cofe compare's paired test (exact McNemar for 0/1 values, else "
            f"sign-flip permutation; {report.clustering}), Holm-adjusted over the "
            f"{report.drop_tests} distinct test(s) of the {len(drops)} drop rule(s), "
            f"alpha {report.alpha:g}"
        )
        lines.append(
            f"  detectable: the smallest drop the test finds with {report.power:.0%} power "
            f"here, at alpha {report.alpha:g} / {max(report.drop_tests, 1)} (a drop alone "
            "among the tests); a rule allowing less cannot fail on a drop that small"
            + (" (--require-power: such a rule fails)" if report.require_power else "")
        )
    if report.caveat:
        lines.append(f"  caveat: {report.caveat}")
    if report.defaults_used:
        lines.append(
            f"  no drop rule given: keyword recall at each step and answer/PointRecall "
            f"may not drop by more than {report.default_max_drop:g} (the default)"
        )
    if any(o.rule.kind != Kind.MAX_DROP for o in report.outcomes):
        lines.append(
            "  thresholds (min, max, max_share) are checked on the run alone; "
            "their CI is shown, not tested"
        )
    lines.extend(f"  note: {note}" for note in report.notes)
    rows = [_HEADER, *(_cells(o) for o in report.outcomes)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    right = {3, 4, 5, 7, 8, 9}
    lines.append("")
    for row in rows:
        lines.append(
            "  ".join(
                cell.rjust(w) if i in right else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    lines.append("")
    failures = report.failures
    for o in failures:
        lines.append(f"FAIL {describe(o)}")
    for o in report.warnings:
        lines.append(f"WARN {describe(o)} (severity warning: the gate passes)")
    for o in report.outcomes:
        if o.status == Status.SKIP:
            lines.append(f"skip {describe(o)}")
    for o in report.outcomes:
        if o.compared_at and not o.failed:
            lines.append(f"compared {o.rule.target} {o.compared_at}")
    for o in report.outcomes:
        if o.power_note and not (report.require_power and o.failed):
            lines.append(f"power {o.stage or 'run'}: {o.rule.target}: {o.power_note}")
    total = len([o for o in report.outcomes if o.status != Status.SKIP])
    if failures:
        stages = ", ".join(dict.fromkeys(f"{o.stage or 'run'} ({o.rule.target})" for o in failures))
        lines.append(f"cofe check: FAILED: {len(failures)} of {total} rule(s): {stages}")
        staged = [o.stage for o in failures if o.stage in _PIPELINE]
        if staged:
            first = min(staged, key=_PIPELINE.index)
            lines.append(
                f"the earliest failing stage is {first}"
                + (
                    " (the stages after it read its output: look there first)"
                    if len(set(staged)) > 1
                    else ""
                )
            )
    else:
        warned = f" ({len(report.warnings)} warning(s))" if report.warnings else ""
        lines.append(f"cofe check: passed: {total} rule(s){warned}")
    return "\n".join(lines)


# --- JUnit XML ---------------------------------------------------------------------------------


def junit_xml(report: CheckReport) -> str:
    """One ``<testcase>`` per rule (classname ``cofe.check.<stage>``), a ``<failure>`` per
    failed rule, ``<skipped>`` for a rule the runs could not be compared on."""
    failures = len(report.failures)
    skipped = sum(o.status == Status.SKIP for o in report.outcomes)
    counts = {
        "tests": str(len(report.outcomes)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": "0",
    }
    suites = ET.Element("testsuites", {"name": "cofe check", **counts})
    name = f"cofe check {report.run}" + (f" vs {report.baseline}" if report.baseline else "")
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": name,
            **counts,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        },
    )
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("run", report.run),
        ("baseline", report.baseline or ""),
        ("alpha", f"{report.alpha:g}"),
        ("clustering", report.clustering),
        ("default_max_drop", f"{report.default_max_drop:g}"),
    ):
        ET.SubElement(properties, "property", {"name": key, "value": value})
    for o in report.outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": f"cofe.check.{o.stage or 'run'}",
                "name": str(o.rule),
                "time": "0",
            },
        )
        if o.failed and o.rule.severity != "warning":
            failure = ET.SubElement(
                case, "failure", {"message": describe(o), "type": str(o.rule.kind)}
            )
            failure.text = describe(o)
        elif o.status == Status.SKIP:
            ET.SubElement(case, "skipped", {"message": describe(o)})
        else:  # passed, or a warning's failure: said, not failing the suite
            said = f"warning (the gate passes): {describe(o)}" if o.failed else describe(o)
            ET.SubElement(case, "system-out").text = said
    ET.SubElement(suite, "system-out").text = render_text(report)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def write_junit(report: CheckReport, path: str | Path) -> Path:
    from cofe._atomic import write_text_atomically

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out, junit_xml(report))
    return out


# --- GitHub Actions ------------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(report: CheckReport) -> list[str]:
    """Workflow commands: ``::error`` per failed rule, ``::warning`` per rule not compared
    and per rule that cannot detect its limit, a ``::notice`` for the caveat of a test over
    questions, and one when the gate passed."""
    lines = []
    for o in report.outcomes:
        title = f"cofe check: {o.stage or 'run'} ({o.rule.target})"
        if o.status == Status.FAIL:
            level = "warning" if o.rule.severity == "warning" else "error"
            lines.append(f"::{level} title={_escape_property(title)}::{_escape_data(describe(o))}")
        elif o.status == Status.SKIP:
            lines.append(f"::warning title={_escape_property(title)}::{_escape_data(describe(o))}")
        if o.power_note and o.status != Status.FAIL:  # a rule that could not have failed
            text = f"{o.rule.target}: {o.power_note}"
            lines.append(f"::warning title={_escape_property(title)}::{_escape_data(text)}")
    if report.caveat:
        lines.append(f"::notice title=cofe check::{_escape_data(report.caveat)}")
    for note in report.notes:
        lines.append(f"::warning title=cofe check::{_escape_data(note)}")
    if report.passed:
        total = sum(o.status != Status.SKIP for o in report.outcomes)
        lines.append(f"::notice title=cofe check passed::{total} rule(s) passed")
    return lines
