"""cofe replay on a tiny scripted run: one sample per verdict class, cofe's extractive generator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe import InputError
from cofe._cache import Cache
from cofe._errors import ConfigurationError
from cofe.replay import (
    REPLAY_FILE,
    Oracle,
    ReplayStopped,
    find_oracles,
    plan_replay,
    rebuild,
    replay_run,
    stage_fixes,
    to_dict,
    verdict_checks,
)
from cofe.runlog import read_run
from cofe.runner import run_pipeline
from cofe.stages import ScoreConfig, score_to_folder
from tests.replay import _tiny

SPEC = "tests.replay._tiny:build"


def _verdicts(run: Path) -> dict[str, str]:
    lines = (run / "scores" / "verdicts.jsonl").read_text().splitlines()
    return {row["sample_id"]: row["verdict"] for row in map(json.loads, lines)}


def test_the_fixture_has_one_sample_per_verdict_class(scored: Path) -> None:
    assert _verdicts(scored) == {
        "pass": "pass",
        "retrieval": "not_retrieved",
        "reranking": "cut_by_rerank",
        "generation": "not_in_answer",
        "chunking": "chunk_split",
    }


def test_oracle_chunks_hold_the_lost_point_and_a_cut_point_gets_its_source_span(
    scored: Path,
) -> None:
    log = read_run(scored)
    samples = {s.id: s for s in _tiny.samples()}
    ids = ["retrieval", "reranking", "generation", "chunking"]
    found = find_oracles(log, [samples[i] for i in ids], {i: [0] for i in ids}, ScoreConfig(), 1)
    assert [c.chunk_id for c in found["retrieval"].chunks] == ["australia#1"]
    assert not found["retrieval"].in_pool  # the retriever never returned it
    assert [c.chunk_id for c in found["reranking"].chunks] == ["japan#1"]
    assert found["reranking"].in_pool and not found["reranking"].in_context
    # the holder the run already gave the generator is chosen, not another one
    assert found["generation"].in_context
    span = found["chunking"].chunks[0]
    assert found["chunking"].spans == (0,) and span.is_derived
    assert "Madrid" in span.text  # no chunk holds it; the source span does, whole


def test_each_verdict_is_checked_by_its_own_oracle(scored: Path, tmp_path: Path) -> None:
    replayed = replay_run(scored, pipeline=SPEC, out=tmp_path / "replay")
    ok = replayed.answer_ok
    # retrieval lost it: the pool oracle, the run's own reranker after it, brings it back
    assert ok[("retrieval", Oracle.POOL)]
    # reranking lost it: the same chunk first in the pool is cut again by the reranker ...
    assert not ok[("reranking", Oracle.POOL)]
    # ... and first in the context it is answered
    assert ok[("reranking", Oracle.CONTEXT)]
    # the generator had the point and missed it: the oracle context changes nothing
    assert not ok[("generation", Oracle.CONTEXT)]
    assert not ok[("generation", Oracle.NO_NOISE)]
    # chunking cut it: the source span, whole, reaches the answer
    assert ok[("chunking", Oracle.CONTEXT)]
    # the built-in pipeline alone can be re-chunked: one line says so, the others ran
    assert "built-in pipeline" in replayed.plan.why_not[Oracle.CHUNKING]
    assert not any(o is Oracle.CHUNKING for _, o in replayed.records)
    checks = {c.verdict: c for c in verdict_checks(replayed)}
    assert {v: (c.oracle, c.replayed, c.confirmed) for v, c in checks.items()} == {
        "not_retrieved": (Oracle.POOL, 1, 1),
        "cut_by_rerank": (Oracle.CONTEXT, 1, 1),
        "not_in_answer": (Oracle.CONTEXT, 1, 1),  # confirmed: not recovered
        "chunk_split": (Oracle.CONTEXT, 1, 1),  # the span stands in for re-chunking
    }
    assert checks["not_in_answer"].unrecovered[0]["answer_after"] == "Italy has many cities."
    # fixed at its stage, the loss moved on (here to a pass); a generation verdict has no "on"
    assert checks["not_retrieved"].moved_rate == 1.0
    assert checks["not_in_answer"].moved_rate is None
    # "where answerable": the context oracle's replay (the gold context as the run assembles
    # it) is the control of the pool oracle's check; the context oracle's own checks have none
    retrieval, reranking = checks["not_retrieved"], checks["cut_by_rerank"]
    assert (retrieval.answerable, retrieval.confirmed_answerable) == (1, 1)
    assert reranking.answerable == 0 and reranking.rate_answerable is None
    # the oracle chunks alone: the wider control, kept apart
    assert (reranking.answerable_alone, reranking.confirmed_alone) == (1, 1)


def test_fix_value_is_a_share_of_all_samples_with_compares_interval(
    scored: Path, tmp_path: Path
) -> None:
    replayed = replay_run(scored, pipeline=SPEC, out=tmp_path / "replay")
    fixes = {f.stage: f for f in stage_fixes(replayed)}
    # retrieval: only the sample retrieval lost (the span sample needs chunking first)
    assert (fixes["retrieval"].recovered, fixes["retrieval"].replayed) == (1, 3)
    # reranking: the context oracle where the pool already held the chunk
    assert (fixes["reranking"].recovered, fixes["reranking"].replayed) == (1, 2)
    assert fixes["(ceiling)"].recovered == 3
    interval = fixes["(ceiling)"].interval
    assert interval.n == 5 and interval.estimate == pytest.approx(3 / 5)
    assert interval.low <= interval.estimate <= interval.high
    data = to_dict(replayed)
    assert data["headline"].startswith("fix the retrieval first: +1 answer ")
    json.dumps(data)  # every value is JSON


def test_a_second_pass_calls_nothing_and_a_torn_line_is_redone(
    scored: Path, tmp_path: Path
) -> None:
    out = tmp_path / "replay"
    cache = Cache(tmp_path / "cache")
    _tiny.CALLS.clear()
    first = replay_run(scored, pipeline=SPEC, out=out, cache=cache)
    made = _tiny.CALLS["generate"]
    assert made == len(first.records) == 12
    # a pass killed mid-line: the torn line is cut, its replay comes from the cache
    path = out / REPLAY_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5]) + lines[5][:20])
    _tiny.CALLS.clear()
    second = replay_run(scored, pipeline=SPEC, out=out, cache=cache)
    assert _tiny.CALLS["generate"] == 0
    assert second.answer_ok == first.answer_ok
    assert all(r.cached for r in second.records.values())  # a previous pass's, or the cache's
    # without the cache, what replay.jsonl holds is still not asked again
    _tiny.CALLS.clear()
    replay_run(scored, pipeline=SPEC, out=out)
    assert _tiny.CALLS["generate"] == 0


def test_selection_by_verdict_sample_and_limit(scored: Path, tmp_path: Path) -> None:
    replayable = rebuild(read_run(scored), SPEC, None)
    plan, *_ = plan_replay(scored, verdicts=["cut_by_rerank"], replayable=replayable)
    assert [t.sample.id for t in plan.targets] == ["reranking"]
    plan, *_ = plan_replay(scored, samples=["pass"], replayable=replayable)
    assert [t.verdict for t in plan.targets] == ["pass"]  # asked for by name: replayed
    plan, *_ = plan_replay(scored, limit=2, replayable=replayable)
    assert len(plan.targets) == 2
    assert plan.calls == {"generation": 6, "reranking": 2}
    with pytest.raises(InputError, match="no scored sample 'nope'"):
        plan_replay(scored, samples=["nope"], replayable=replayable)


def test_a_generator_failing_sample_after_sample_stops_the_pass(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COFE_TEST_GENERATOR_DOWN", "1")
    with pytest.raises(ReplayStopped, match=r"failed 5 samples in a row .*ConnectionError"):
        replay_run(scored, pipeline=SPEC, out=tmp_path / "replay")
    kept = (tmp_path / "replay" / REPLAY_FILE).read_text().splitlines()
    assert len(kept) == 5 and all(json.loads(line)["error"] for line in kept)


def test_a_pipeline_of_one_call_is_refused_in_one_line(scored: Path) -> None:
    with pytest.raises(ConfigurationError, match="exposes no stage cofe can replace"):
        rebuild(read_run(scored), "tests.replay._tiny:one_call", None)


def test_the_built_in_pipeline_needs_no_spec_but_another_does(scored: Path) -> None:
    with pytest.raises(InputError, match="give --pipeline"):
        rebuild(read_run(scored), None, None)


def _cofe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from cofe.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_dry_run_text_json_and_errors(scored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ("replay", str(scored), "--pipeline", SPEC, "--cache", "none")
    code, out, err = _cofe(capsys, *base, "--dry-run")
    assert code == 0, err
    assert "4 sample(s) selected" in out and "generation 12, reranking 4" in out
    assert "oracle chunking: not replayed" in out
    assert not (scored / "replay").exists()  # a dry run writes nothing
    code, out, err = _cofe(capsys, *base)
    assert code == 0, err
    assert "fix the retrieval first: +1 answer" in out
    assert "Verdicts checked by intervention" in out
    code, out, _ = _cofe(capsys, *base, "--json")
    assert json.loads(out)["cost"]["from_cache"] == 12  # all from replay.jsonl
    code, out, err = _cofe(capsys, *base, "--oracle", "ceiling")
    assert code == 2 and err.count("\n") == 1
    assert "unknown oracle 'ceiling'" in err


TOWN = (
    "The river Zorn flows through the old town of Kelmar. Fishermen on the Zorn catch trout in "
    "spring. The bridge over the Zorn at Kelmar was built in 1742 by the mason Ulrich Brandt. "
    "Kelmar is known for its cheese market, held every Thursday since the middle ages."
)


@pytest.mark.slow  # the token splitter and BM25 load in seconds
def test_the_built_in_pipeline_is_rebuilt_from_its_manifest_and_re_chunked(
    tmp_path: Path,
) -> None:
    from cofe import EvalSample, ParsedDocument, write_evalset
    from cofe.evalset import SourceRef
    from cofe.pipeline import DefaultPipeline, PipelineConfig

    docs = [ParsedDocument(doc_id="kelmar", source="kelmar.txt", text=TOWN)]
    sample = EvalSample(
        id="bridge",
        query="Who built the bridge over the Zorn at Kelmar?",
        coarse_keywords=["Kelmar"],
        fine_keywords=[["Ulrich Brandt"]],
        source=SourceRef(doc="kelmar", start=0, end=len(TOWN)),
    )
    write_evalset(tmp_path / "e.jsonl", [sample])
    # 17 tokens a chunk: a boundary falls between "Ulrich" and "Brandt"
    config = PipelineConfig(splitter="token", chunk_size=17, chunk_overlap=0, candidates=3, top_k=1)
    run = tmp_path / "run"
    run_pipeline(DefaultPipeline(config), tmp_path / "e.jsonl", run, documents=docs, progress=False)
    score_to_folder(run)
    assert _verdicts(run) == {"bridge": "chunk_split"}
    replayed = replay_run(run, out=tmp_path / "replay")  # no spec: rebuilt from the manifest
    assert replayed.plan.why_not == {}
    record = replayed.records[("bridge", Oracle.CHUNKING)]
    merged = [c for c in record.pool or [] if "#oracle-" in c]
    assert len(merged) == 1  # the two chunks around the cut, one chunk now, retrieved again
    assert record.calls == {"retrieval": 1, "generation": 1}
    # scored over the re-chunked corpus, the point is whole there: chunking is no longer blamed
    assert replayed.new_verdicts[("bridge", Oracle.CHUNKING)] != "chunk_split"
    # the span placed in the context reaches the answer (the verdict still names the cut corpus)
    assert replayed.answer_ok[("bridge", Oracle.CONTEXT)]
    assert "Ulrich Brandt" in (replayed.records[("bridge", Oracle.CONTEXT)].answer or "")


def test_html_page_escapes_what_a_generator_wrote(scored: Path, tmp_path: Path) -> None:
    from cofe.replay import render_html

    replayed = replay_run(scored, pipeline=SPEC, out=tmp_path / "replay")
    key = ("generation", Oracle.CONTEXT)
    replayed.records[key] = replayed.records[key].model_copy(update={"answer": "<b>Rome?</b>"})
    page = render_html(replayed)
    assert "&lt;b&gt;Rome?&lt;/b&gt;" in page and "<b>Rome?</b>" not in page
    assert "fix the retrieval first" in page and "<svg" in page


def test_a_dead_endpoint_stops_the_pass_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cofe.testing import ScriptedOpenAI

    evalset = _tiny.write(tmp_path)
    run = tmp_path / "run"
    with ScriptedOpenAI(lambda messages, request: "I do not know.") as server:
        monkeypatch.setenv("COFE_TEST_BASE_URL", server.base_url)
        run_pipeline(_tiny.build_llm(), evalset, run, documents=_tiny.documents(), progress=False)
        score_to_folder(run)
        server.kill()  # the endpoint dies before the replay
        code, _, err = _cofe(
            capsys,
            "replay",
            str(run),
            "--pipeline",
            "tests.replay._tiny:build_llm",
            "--cache",
            "none",
        )
    assert code == 1
    assert err.count("\n") == 1 and "is not answering" in err and "run again to resume" in err


def test_a_generator_alone_replays_the_context_oracles(scored: Path, tmp_path: Path) -> None:
    """A run cofe cannot take apart: the app's generator stands in, context oracles only."""
    replayed = replay_run(scored, generator="tests.replay._tiny:generate", out=tmp_path / "r")
    assert set(replayed.plan.why_not) == {Oracle.POOL, Oracle.CHUNKING}
    assert "--pipeline" in replayed.plan.why_not[Oracle.POOL]
    assert {o for _, o in replayed.records} == {Oracle.CONTEXT, Oracle.NO_NOISE}
    # the same generator over the same contexts: the same answers as the whole pipeline's
    whole = replay_run(scored, pipeline=SPEC, out=tmp_path / "w", oracles=[Oracle.CONTEXT])
    assert {k: r.answer for k, r in replayed.records.items() if k[1] is Oracle.CONTEXT} == {
        k: r.answer for k, r in whole.records.items()
    }
