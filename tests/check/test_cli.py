"""`cofe check` end to end on real pipeline runs over the shipped corpus."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cofe.cli import main
from tests.conftest import EXAMPLE_RUN

SCHEMA = Path(__file__).with_name("junit.xsd")


def check(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["check", *(str(a) for a in args), "--resamples", "999"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def table(out: str) -> dict[str, list[str]]:
    """The table's rows by their measure (or share) name."""
    rows = [line.split() for line in out.splitlines()]
    return {
        r[2] if r[2] != "share" else r[3]: r
        for r in rows
        if len(r) >= 9 and r[0] in ("PASS", "FAIL", "SKIP") and not r[1].endswith(":")
    }


def test_a_broken_retriever_fails_the_gate_naming_the_stage_and_the_measure(pipeline_runs, capsys):
    code, out, _ = check(capsys, pipeline_runs["broken"], "--baseline", pipeline_runs["base"])
    assert code == 1
    rows = table(out)
    assert rows["pool/KeywordRecall@30"][:2] == ["FAIL", "retrieval"]
    assert rows["parse/KeywordRecall"][:2] == ["PASS", "parse"]  # the stages before it held
    assert rows["corpus/KeywordRecall"][:2] == ["PASS", "chunking"]
    assert "FAIL retrieval: pool/KeywordRecall@30 dropped" in out
    assert "the earliest failing stage is retrieval" in out
    assert "AND significant under cofe compare's paired test" in out  # the rule is said


def test_a_noise_only_change_passes(pipeline_runs, capsys):
    code, out, _ = check(capsys, pipeline_runs["noisy"], "--baseline", pipeline_runs["base"])
    assert code == 0, out
    answer = table(out)["answer/PointRecall"]
    assert answer[0] == "PASS" and answer[5] != "+0.000"  # the answers did change
    assert out.rstrip().endswith("cofe check: passed: 5 rule(s)")


def test_the_same_change_fails_when_the_answer_must_not_move_at_all(pipeline_runs, capsys):
    # what a threshold-only gate without a test would do on noise: a min on the answer
    # measure just above the noisy run's value fails, with or without a baseline
    code, out, _ = check(capsys, pipeline_runs["noisy"], "--min", "answer/PointRecall=0.99")
    assert code == 1 and "FAIL generation: answer/PointRecall >= 0.99" in out


def test_thresholds_are_checked_on_the_run_alone(pipeline_runs, capsys):
    base = pipeline_runs["base"]
    code, out, _ = check(
        capsys, base, "--min", "context/KeywordRecall@4=0.7", "--max-share", "not_retrieved=0.15"
    )
    assert code == 0 and "thresholds (min, max, max_share) are checked on the run alone" in out
    code, out, _ = check(
        capsys,
        base,
        "--min",
        "context/KeywordRecall@4=0.9",
        "--max-share",
        "not_retrieved=0.01",
        "--max-share",
        "retrieval=0.5",
    )
    assert code == 1
    assert "FAIL reranking: context/KeywordRecall@4 >= 0.9" in out
    assert "FAIL retrieval: share of not_retrieved verdicts must be <= 0.01" in out
    assert "FAIL retrieval: share of retrieval" not in out


def test_explicit_drop_rules_replace_the_defaults(pipeline_runs, capsys):
    code, out, _ = check(
        capsys,
        pipeline_runs["broken"],
        "--baseline",
        pipeline_runs["base"],
        "--max-drop",
        "corpus/KeywordRecall=0.0",
    )
    assert code == 0 and "pool/KeywordRecall" not in out and "no drop rule given" not in out
    code, out, _ = check(
        capsys,
        pipeline_runs["broken"],
        "--baseline",
        pipeline_runs["base"],
        "--max-drop",
        "answer/PointRecall=0.9",
    )
    assert code == 0  # a drop within what the rule allows passes, however significant


def test_junit_xml_validates_and_names_each_failure(pipeline_runs, capsys, tmp_path):
    report = tmp_path / "reports" / "cofe.xml"
    code, _, _ = check(
        capsys,
        pipeline_runs["broken"],
        "--baseline",
        pipeline_runs["base"],
        "--min",
        "context/KeywordRecall@4=0.1",
        "--junit",
        report,
    )
    assert code == 1
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("tests", -1)) == len(cases) == 6
    assert int(suite.get("failures", -1)) == len(failed) == 3
    assert int(root.get("failures", -1)) == 3
    by_name = {c.get("name"): c for c in cases}
    pool = by_name["pool/KeywordRecall@30 drop <= 0.02"]
    assert pool.get("classname") == "cofe.check.retrieval"
    message = pool.find("failure").get("message")  # type: ignore[union-attr]
    assert message.startswith("retrieval: pool/KeywordRecall@30 dropped")
    assert by_name["context/KeywordRecall@4 >= 0.1"].find("failure") is None
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    assert schema.validate(etree.parse(str(report))), schema.error_log


def test_github_annotations(pipeline_runs, capsys):
    code, out, _ = check(
        capsys, pipeline_runs["broken"], "--baseline", pipeline_runs["base"], "--github"
    )
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(errors) == 3
    assert errors[0].startswith(
        "::error title=cofe check%3A retrieval (pool/KeywordRecall@30)::"
        "retrieval: pool/KeywordRecall@30 dropped"
    )
    assert all("\n" not in e and "::" in e[2:] for e in errors)
    code, out, _ = check(
        capsys, pipeline_runs["noisy"], "--baseline", pipeline_runs["base"], "--github"
    )
    assert code == 0 and "::notice title=cofe check passed::5 rule(s) passed" in out


def test_json_output(pipeline_runs, capsys):
    code, out, _ = check(
        capsys, pipeline_runs["broken"], "--baseline", pipeline_runs["base"], "--json"
    )
    saved = json.loads(out)
    assert code == 1 and saved["passed"] is False and saved["defaults_used"] is True
    failing = {
        (o["stage"], o["step"], o["measure"]) for o in saved["outcomes"] if o["status"] == "fail"
    }
    assert ("retrieval", "pool", "KeywordRecall@30") in failing


def test_a_run_directory_is_scored_as_cofe_compare_does(tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores*"))
    code, out, _ = check(capsys, run, "--baseline", run)
    assert code == 0 and "cofe check: passed: 5 rule(s)" in out


def test_differing_cutoffs_are_compared_where_both_runs_can_be(pipeline_runs, capsys, tmp_path):
    k2 = tmp_path / "k2"
    assert main(["score", str(pipeline_runs["base"].parent), "--top-k", "2", "--out", str(k2)]) == 0
    capsys.readouterr()
    code, out, _ = check(capsys, k2, "--baseline", pipeline_runs["base"], "--json")
    saved = json.loads(out)
    context = next(o for o in saved["outcomes"] if o["step"] == "context")
    assert context["target"] == "context/KeywordRecall"  # the context the generator received
    assert context["compared_at"] == (
        "each run's whole context as the generator received it (top-K: run @2, baseline @4)"
    )
    assert context["value"] < context["baseline"]  # two chunks hold less than four
    assert "not compared" not in out
    assert code in (0, 1)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--min", "context/KeywordRecal@4=0.8"], "did you mean context/KeywordRecall@4"),
        (["--min", "KeywordRecall@4=0.8"], "names no step"),
        (["--min", "pool/PointRecall=0.8"], "PointRecall is not measured at the pool step"),
        (["--min", "contxt/KeywordRecall@4=0.8"], "unknown step 'contxt'"),
        (["--min", "context/KeywordRecall@4"], "write NAME=VALUE"),
        (["--min", "context/KeywordRecall@4=high"], "'high' is not a number"),
        (["--max-share", "not_retreived=0.15"], "did you mean not_retrieved"),
        (["--max-share", "not_retrieved=1.5"], "a share is between 0 and 1"),
        (["--max-drop", "answer/PointRecall=0.02"], "--baseline: a drop rule"),
        (["--min", "context/KeywordRecall@5=0.8"], "not scored in the run"),
        ([], "nothing to check"),
        (["--alpha", "2", "--min", "context/KeywordRecall@4=0.8"], "--alpha must be between"),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(pipeline_runs, capsys, args, expected):
    code, out, err = check(capsys, pipeline_runs["base"], *args)
    assert code == 2 and out == ""
    assert err.startswith("cofe: error: ") and err.count("\n") == 1 and expected in err, err


def test_no_run_is_a_usage_error(capsys):
    assert main(["check", "--min", "answer/PointRecall=0.5"]) == 2
    assert "give the run to check" in capsys.readouterr().err


def test_a_missing_column_names_the_close_ones(pipeline_runs, capsys):
    _, _, err = check(capsys, pipeline_runs["base"], "--min", "context/KeywordRecall@5=0.8")
    assert "scored there: context/KeywordRecall@4" in err


def test_a_rules_file_and_flags_together(pipeline_runs, capsys, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        'alpha = 0.01\n[[rule]]\ntarget = "context/KeywordRecall@4"\nmin = 0.95\n'
        '[[rule]]\ntarget = "pool/KeywordRecall@30"\nmax_drop = 0.05\n'
    )
    code, out, _ = check(
        capsys,
        pipeline_runs["base"],
        "--baseline",
        pipeline_runs["base"],
        "--rules",
        rules,
        "--min",
        "context/KeywordRecall@4=0.5",
    )
    assert code == 0, out  # the flag replaced the file's stricter minimum
    assert "context/KeywordRecall@4 >= 0.5" in out and "0.95" not in out
    assert "alpha 0.01" in out and "pool/KeywordRecall@30 drop <= 0.05" in out
    code, out, _ = check(
        capsys, pipeline_runs["broken"], "--baseline", pipeline_runs["base"], "--rules", rules
    )
    assert code == 1 and "FAIL retrieval: pool/KeywordRecall@30 dropped" in out


def test_runs_of_different_eval_sets_are_refused(pipeline_runs, capsys, fresh):
    other = fresh(pipeline_runs["base"], "other")
    summary = json.loads((other / "summary.json").read_text())
    summary["evalset_sha256"] = "f" * 64
    (other / "summary.json").write_text(json.dumps(summary))
    code, _, err = check(capsys, pipeline_runs["base"], "--baseline", other)
    assert code == 2 and "different eval sets" in err


def test_print_example_rules_is_a_valid_rules_file(capsys, tmp_path):
    assert main(["check", "--print-example-rules"]) == 0
    example = tmp_path / "rules.toml"
    example.write_text(capsys.readouterr().out)
    from cofe.check import Kind, read_rules

    rules = read_rules(example)
    assert {r.kind for r in rules.rules} == set(Kind) - {Kind.MAX}
    assert rules.alpha == 0.05 and rules.default_max_drop == 0.02
