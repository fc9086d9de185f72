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


def _run(folder: Path, top: str, pipeline: dict | None = None) -> Path:
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
            run_id=folder.name,
            top_k=1,
            stages=["parse", "chunking", "retrieval", "generation"],
            pipeline=pipeline or {},
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


def _pipeline(chunk_size: int) -> dict:
    """What a pipeline's describe() gives, as the manifest records it (nested: an adapter's)."""
    return {
        "name": "default",
        "chunk_size": chunk_size,
        "retriever": "bm25",
        "reranker": "none",
        "generate": {"model": f"gpt-4o-mini {SCRIPT}", "max_tokens": 512},
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("report")
    one = _run(base / "one", "a", _pipeline(256))
    two = _run(base / "two", "c", _pipeline(1024))
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


def _section(page: str, name: str) -> str:
    section = page[page.index(f"<section id='{name}'>") :]
    return section[: section.index("</section>")]


def test_each_runs_pipeline_configuration_is_shown_beside_the_scoring_settings(report):
    page = report.read_text(encoding="utf-8")
    pipelines = _section(page, "pipelines")
    # one row per setting, one column per run; a setting that differs is highlighted
    assert "<tr class='hl'><td>chunk_size</td><td>256</td><td>1024</td></tr>" in pipelines
    assert "<tr><td>retriever</td><td>bm25</td><td>bm25</td></tr>" in pipelines
    assert "<td>generate.model</td>" in pipelines and "<td>generate.max_tokens</td>" in pipelines
    assert SCRIPT not in pipelines and "&lt;script&gt;" in pipelines  # the manifest is escaped
    # "settings: defaults" was the scoring's: now labelled as such
    assert "<th>scoring settings</th>" in page and "<th>settings</th>" not in page
    assert "cofe&#x27;s defaults" in page


def test_the_page_opens_with_a_headline_where_each_run_loses_most_and_what_changed(report):
    page = report.read_text(encoding="utf-8")
    main_at = page.index("<main>")
    assert page.index("<section id='headline'>") == main_at + len("<main>")  # the first thing
    top = _section(page, "headline")
    # each run: the stage its verdicts blame most, and the waterfall's largest fall
    assert "one: retrieval loses most — 2 of 3 scored samples (not_retrieved 2)" in top
    assert "falls most from pool to context (1.00 → 0.33)" in top
    # the pair: what changed in results (nothing significant, and why) and in the pipeline
    assert "one vs two: no significant difference at any stage" in top
    assert "too few source documents" in top
    assert "pipeline one → two: chunk_size 256 → 1024" in top
    assert "<a href='#cases'>the bad cases (5 shown)</a>" in top  # linked from the top


def test_the_headline_names_the_significant_change(tmp_path):
    from dataclasses import replace

    from cofe.compare import compare_results
    from cofe.report import RunForReport, render_report
    from cofe.stages import score_run

    dirs = {name: _run(tmp_path / name, top) for name, top in (("one", "a"), ("two", "c"))}
    results = {name: score_run(d) for name, d in dirs.items()}
    comparison = compare_results(results)
    d = comparison.differences.copy()
    # as if the eval set had been large enough: the context's recall differs significantly
    hit = (d.step == "context") & (d.measure == "KeywordAccuracy@1") & (d.query_type == "all")
    assert hit.sum() == 1
    d["significant"] = hit
    d.loc[hit, ["difference", "low", "high"]] = [0.5, 0.2, 0.8]
    runs = [RunForReport.load(n, dirs[n], r) for n, r in results.items()]
    page = render_report(runs, replace(comparison, differences=d, small_sample=""))
    top = _section(page, "headline")
    assert (
        "one is better at the context (retrieval and reranking): context/KeywordAccuracy@1 "
        "+0.500 over two [95 % CI +0.200, +0.800]; nothing else changed significantly." in top
    )


def test_the_forest_plot_is_in_pipeline_order_whoever_ordered_the_comparison(tmp_path):
    from dataclasses import replace

    from cofe.compare import compare_results, measure_rank
    from cofe.report import RunForReport, render_report
    from cofe.stages import score_run

    dirs = {name: _run(tmp_path / name, top) for name, top in (("one", "a"), ("two", "c"))}
    results = {name: score_run(d) for name, d in dirs.items()}
    comparison = compare_results(results)
    backwards = comparison.differences.sort_values(["step", "measure"], ascending=False)
    runs = [RunForReport.load(n, dirs[n], r) for n, r in results.items()]
    page = render_report(runs, replace(comparison, differences=backwards))
    forest = _section(page, "comparison")
    forest = forest[: forest.index("</svg>")]
    labels = re.findall(r'text-anchor="end">([a-z-]+/[^<]+)</text>', forest)
    assert len(labels) > 10 and labels[0] == "parse/KeywordRecall"
    ranks = [measure_rank(*label.split("/", 1)) for label in labels]
    assert ranks == sorted(ranks)  # the chain's steps in order, not the alphabet


def test_waterfall_bars_carry_their_values(report):
    waterfall = _section(report.read_text(encoding="utf-8"), "waterfall")
    values = re.findall(r'class="value">([0-9.]+)</text>', waterfall)
    # two runs x six steps; the context keeps a third of the points in both runs
    assert len(values) == 12 and values.count("0.33") == 2


def test_a_constant_measure_is_said_in_words_not_drawn_on_an_axis(report):
    svg = histogram([1.0, 1.0, 1.0], title="parse/KeywordRecall")
    assert 'class="constant">all 1.00</text>' in svg and "n=3" in svg
    assert 'class="axis"' not in svg and 'class="bar"' not in svg
    distributions = _section(report.read_text(encoding="utf-8"), "distributions")
    assert 'class="constant">all 1.00</text>' in distributions
    same_ends = r'anchor="start">([-0-9.]+)</text>\n<text[^>]*anchor="end">\1</text>'
    assert not re.search(same_ends, distributions)  # no axis running "1.00 … 1.00"


def test_the_headline_is_on_screen_and_links_to_the_bad_cases(browser, report):
    page, _ = _open(browser, report)
    headline = page.locator("#headline")
    assert headline.is_visible() and headline.bounding_box()["y"] < 200
    assert "retrieval loses most" in headline.inner_text()
    assert page.locator("#waterfall svg text.value").count() == 12  # drawn, with the bars
    page.click("#headline a[href='#cases']")
    page.wait_for_timeout(200)
    top = page.evaluate("document.getElementById('cases').getBoundingClientRect().top")
    assert abs(top) < 5  # the bad cases scrolled to the top of the window
    page.close()
