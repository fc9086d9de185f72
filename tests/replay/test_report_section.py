"""The "what a fix is worth" section of cofe report's page, for a run that was replayed,
looked at in a real headless Chromium (the report tests' fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.replay import SUMMARY_FILE
from cofe.runner import run_pipeline
from cofe.stages import score_to_folder
from tests.replay import _tiny

SPEC = "tests.replay._tiny:build"
MARKUP = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("replay-report")
    evalset = _tiny.write(base)
    runs = {}
    for name in ("replayed", "plain"):
        run = base / name
        run_pipeline(_tiny.build(), evalset, run, documents=_tiny.documents(), progress=False)
        score_to_folder(run)
        runs[name] = run
    assert main(["replay", str(runs["replayed"]), "--pipeline", SPEC, "--cache", "none"]) == 0
    # a generator's answer carrying markup: the section shows it as text
    summary = runs["replayed"] / "replay" / SUMMARY_FILE
    data = json.loads(summary.read_text())
    for check in data["verdicts"]:
        for example in check["unrecovered"]:
            example["answer_after"] = f"{example['answer_after']} {MARKUP}"
    summary.write_text(json.dumps(data))
    out = {"one": base / "one.html", "both": base / "both.html", "none": base / "none.html"}
    assert main(["report", str(runs["replayed"]), "-o", str(out["one"])]) == 0
    assert main(["report", str(runs["replayed"]), str(runs["plain"]), "-o", str(out["both"])]) == 0
    assert main(["report", str(runs["plain"]), "-o", str(out["none"])]) == 0
    return out


def _open(browser, page_file: Path):  # type: ignore[no-untyped-def]
    page = browser.new_page()
    events: dict[str, list[str]] = {"errors": [], "dialogs": [], "requests": []}
    page.on("console", lambda m: events["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: events["errors"].append(str(e)))
    page.on("dialog", lambda d: (events["dialogs"].append(d.message), d.dismiss()))
    page.on("request", lambda r: events["requests"].append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    return page, events


def test_a_replayed_run_shows_what_a_fix_is_worth_inside_the_report(browser, pages) -> None:  # type: ignore[no-untyped-def]
    page, events = _open(browser, pages["one"])
    section = page.locator("section.fix-value-section")
    assert section.count() == 1 and section.is_visible()
    assert "What a fix is worth: replayed" in section.locator("h2").inner_text()
    # the headline a team acts on, and the fix table with one row per fix replayed
    assert "fix the retrieval first: +1 answer" in section.inner_text()
    rows = section.locator("table.fix-value tbody tr")
    stages = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert stages[0] == "retrieval" and "(ceiling)" in stages
    # its intervals drawn (a chart with whiskers, on screen)
    chart = section.locator("svg.chart")
    box = chart.first.bounding_box()
    assert chart.count() == 1 and box and box["width"] > 0 and box["height"] > 0
    assert section.locator("svg line").count() > 0
    # the verdict checks, and the unrecovered answers side by side, shown as text
    assert section.locator("table.verdict-checks tbody tr").count() == 4
    assert MARKUP in section.locator("table.unrecovered").first.inner_text()
    assert events["errors"] == [] and events["dialogs"] == []
    assert events["requests"] == [pages["one"].as_uri()]  # still self-contained
    # after the verdicts it checks, before the bad cases
    order = page.evaluate(
        "[...document.querySelectorAll('main > section')].map(s => s.id || s.className)"
    )
    assert order.index("verdicts") < order.index("fix-value-0") < order.index("cases")
    page.close()


def test_only_the_replayed_run_gets_the_section(browser, pages) -> None:  # type: ignore[no-untyped-def]
    page, _ = _open(browser, pages["both"])
    sections = page.locator("section.fix-value-section")
    assert sections.count() == 1
    assert "replayed" in sections.first.locator("h2").inner_text()
    page.close()
    page, _ = _open(browser, pages["none"])
    assert page.locator("section.fix-value-section").count() == 0
    page.close()


def test_an_unreadable_replay_summary_is_one_line(
    tmp_path: Path,
    pages,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    run = pages["one"].parent / "replayed"
    summary = run / "replay" / SUMMARY_FILE
    kept = summary.read_text()
    try:
        summary.write_text("{not json")
        code = main(["report", str(run), "-o", str(tmp_path / "page.html")])
        err = capsys.readouterr().err
        assert code == 2 and str(summary) in err and err.count("\n") == 1
    finally:
        summary.write_text(kept)
