"""The HTML report in a real headless Chromium (Debian's, driven by Playwright).

Chromium is part of the test set-up (`.ci/run` installs it): a missing browser fails
these tests instead of skipping them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cofe import Chunk, EvalSample, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord
from cofe.charts import histogram
from cofe.cli import main
from cofe.evalset import write_evalset

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'


def _run(folder: Path, top: str) -> Path:
    """A small run whose documents, query, keyword and answer carry markup."""
    texts = {
        "a": f"The Denver Broncos won Super Bowl 50. {SCRIPT}",
        "b": f"Coldplay played the halftime show {IMG} of Super Bowl 50.",
        "c": "Levi's Stadium hosted Super Bowl 50 in Santa Clara.",
    }
    samples = [
        EvalSample(
            id="q1",
            query=f"Who won Super Bowl 50? {SCRIPT}",
            coarse_keywords=["Super Bowl 50"],
            fine_keywords=[["Denver Broncos"]],
            reference_answer="Denver Broncos",
            source={"doc": "sb.txt"},
        ),
        EvalSample(
            id="q2",
            query=f"Who played at halftime? {IMG}",
            coarse_keywords=["Super Bowl 50"],
            fine_keywords=[["Coldplay"], [IMG]],
            reference_answer="Coldplay",
            source={"doc": "sb.txt"},
        ),
        EvalSample(
            id="q3",
            query="Where was it played?",
            coarse_keywords=["Super Bowl 50"],
            fine_keywords=[["Levi's Stadium"]],
            reference_answer="Levi's Stadium",
            source={"doc": "sb.txt"},
        ),
    ]
    write_evalset(folder.parent / f"{folder.name}.evalset.jsonl", samples)
    writer = RunWriter(folder)
    writer.start(
        Manifest(
            run_id=folder.name, top_k=1, stages=["parse", "chunking", "retrieval", "generation"]
        ),
        folder.parent / f"{folder.name}.evalset.jsonl",
    )
    writer.add_documents(
        [ParsedDocument(doc_id="sb", source="sb.txt", text=" ".join(texts.values()))]
    )
    writer.add_chunks([Chunk(chunk_id=c, doc_id="sb", text=t) for c, t in texts.items()])
    order = [top, *(c for c in texts if c != top)]
    writer.add_samples(
        SampleRecord(
            sample_id=s.id,
            pool=[RankedChunk(chunk_id=c, score=3.0 - i) for i, c in enumerate(order)],
            answer=f"I think {SCRIPT} {IMG} Denver Broncos",
        )
        for s in samples
    )
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("report")
    one, two = _run(base / "one", "a"), _run(base / "two", "c")
    out = base / "report.html"
    assert main(["report", str(one), str(two), "-o", str(out)]) == 0
    return out


def _open(browser, report: Path):
    page = browser.new_page()
    events = {"errors": [], "dialogs": [], "requests": []}
    page.on("console", lambda m: events["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: events["errors"].append(str(e)))
    page.on("dialog", lambda d: (events["dialogs"].append(d.message), d.dismiss()))
    page.on("request", lambda r: events["requests"].append(r.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return page, events


def test_the_page_loads_with_no_console_error_and_fetches_nothing(browser, report):
    page, events = _open(browser, report)
    assert events["errors"] == []
    assert events["requests"] == [report.as_uri()]  # self-contained: no CDN, no font, no image
    page.close()


def test_charts_render(browser, report):
    page, _ = _open(browser, report)
    charts = page.locator("svg.chart")
    assert charts.count() >= 4
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0
    assert page.locator("#waterfall svg rect.bar").count() >= 4  # bars drawn, per run and step
    assert page.locator("#comparison svg line.ci").count() > 0  # intervals drawn
    page.close()


def test_a_filter_changes_the_visible_cases(browser, report):
    page, _ = _open(browser, report)
    visible = page.locator(".case:not([hidden])")
    before = visible.count()
    page.select_option("select[name=run]", "two")
    after = visible.count()
    assert 0 < after < before
    assert page.locator("#shown").inner_text() == str(after)
    assert all(c == "two" for c in visible.evaluate_all("cs => cs.map(c => c.dataset.run)"))
    page.close()


def test_markup_in_documents_queries_and_answers_runs_nothing(browser, report):
    page, events = _open(browser, report)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_timeout(200)
    assert events["dialogs"] == []
    assert page.locator("img").count() == 0  # the payload's <img> was never created
    assert page.locator("main script").count() == 0  # no script element from the data
    text = page.locator("#cases").inner_text()
    assert SCRIPT in text and "<img src=x onerror=alert(1)>" in text  # shown as text
    page.close()


def test_refusals_and_the_answered_only_means_are_in_the_report(tmp_path):
    run = _run(tmp_path / "refusing", "c")
    RunWriter(run).add_samples(
        [
            SampleRecord(  # the newest record of q3 counts: it declines
                sample_id="q3",
                pool=[RankedChunk(chunk_id="c", score=1.0)],
                answer="I am unable to answer this question based on the context.",
            )
        ]
    )
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    page = out.read_text()
    section = page[page.index("<section id='refusals'>") :]
    section = section[: section.index("</section>")]
    assert "<td>all</td><td>3</td><td>1</td><td>0.333</td>" in section
    assert "mean (answered)" in section and "KeywordRecall" in section


def test_a_case_shows_how_the_answer_step_decided_each_point(tmp_path):
    from tests.stages.test_answer_step import ANSWERS, make_run

    run = make_run(tmp_path / "run", {"lacks": ANSWERS["lacks"]})
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    cases = out.read_text(encoding="utf-8").split("<section id='cases'>", 1)[1]
    assert "conveyed (by)" in cases
    assert "present (verbatim)" in cases and "absent (paraphrase)" in cases


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def test_passes_are_drawn_green_and_losses_warm(report):
    section = report.read_text()
    section = section[section.index("<section id='verdicts'>") :]
    section = section[: section.index("</section>")]
    fills = re.findall(r'fill="(#[0-9a-f]{6})"><title>([a-z_]+) · ', section)
    passes = {c for c, v in fills if v.startswith("pass")}
    losses = {c for c, v in fills if v in ("not_retrieved", "not_in_answer", "cut_by_rerank")}
    assert passes and losses
    for r, g, b in map(_rgb, passes):
        assert g > r and g > b  # green
    for r, g, b in map(_rgb, losses):
        assert r > b and r >= g  # red, orange, amber


def test_a_histogram_has_a_y_axis_of_counts():
    svg = histogram([0.1, 0.2, 0.2, 0.2, 0.9, 0.95], title="answer/RougeL", bins=4)
    ticks = re.findall(r'class="count">(\d+)</text>', svg)
    assert ticks == ["0", "2", "4"]  # zero, half the tallest bar (four values), the tallest
    assert 'class="axis"' in svg


def test_the_page_names_a_cjk_font_after_the_system_one(report):
    style = report.read_text().split("<style>", 1)[1].split("</style>", 1)[0]
    body = style[style.index("body{") :]
    assert "Noto Sans CJK SC" in body[: body.index("}")]  # Chinese is not drawn as boxes
