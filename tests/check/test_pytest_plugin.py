"""The pytest plugin, run as a user's test suite would run it (a pytest in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # each case starts a pytest


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the plugin named explicitly, and nothing loaded from entry points: the same whether or
    # not this checkout's entry point is installed
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "cofe.check.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            *args,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_fixture_fails_a_test_naming_the_stage_and_the_measure(pipeline_runs, tmp_path):
    runs = {name: str(path) for name, path in pipeline_runs.items()}
    (tmp_path / "test_rag.py").write_text(f"""
RUNS = {runs!r}

def test_the_retriever_change(cofe_check):
    cofe_check(RUNS["broken"], baseline=RUNS["base"])

def test_the_generator_seed(cofe_check):
    report = cofe_check(RUNS["noisy"], baseline=RUNS["base"])
    assert report.passed and len(report.outcomes) == 5

def test_a_threshold_from_a_mapping(cofe_check):
    cofe_check(RUNS["base"], rules={{"rule": [{{"target": "context/KeywordRecall@4", "min": 0.95}}]}})

def test_the_options_give_the_defaults(cofe_check):
    cofe_check()
""")
    done = pytest_run(
        tmp_path,
        "--cofe-baseline",
        runs["base"],
        "--cofe-run",
        runs["noisy"],
        "--junitxml",
        "report.xml",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "2 failed, 3 passed" in out  # the four tests and the session's own cofe-check
    assert "FAILED test_rag.py::test_the_retriever_change - cofe.check.CheckFailed" in out
    assert "CheckFailed: cofe check failed: 3 rule(s)" in out
    assert "retrieval: pool/KeywordRecall@30 dropped 0.576" in out
    assert "FAILED test_rag.py::test_a_threshold_from_a_mapping" in out
    assert "reranking: context/KeywordRecall@4 >= 0.95: mean 0.802 < 0.95" in out
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "report.xml").iter("testcase")}
    failure = cases["test_the_retriever_change"].find("failure")
    assert failure is not None and "retrieval: pool/KeywordRecall@30" in failure.get("message", "")
    assert cases["cofe-check"].find("failure") is None  # noisy against base: passes


def test_pytest_cofe_run_adds_the_gate_as_a_test(pipeline_runs, tmp_path):
    rules = tmp_path / "gate.toml"
    rules.write_text('[[rule]]\ntarget = "not_retrieved"\nmax = 0.15\n')
    done = pytest_run(
        tmp_path,
        f"--cofe-run={pipeline_runs['broken']}",
        f"--cofe-baseline={pipeline_runs['base']}",
        f"--cofe-rules={rules}",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED ::cofe-check - cofe check failed: 4 rule(s)" in done.stdout
    assert "retrieval: share of not_retrieved verdicts must be <= 0.15: share 0.630" in done.stdout
    # the table, in the failure: the file's share rule and, with a baseline and no drop
    # rule, the headline measures
    assert "cofe check: FAILED: 4 of 6 rule(s)" in done.stdout
    done = pytest_run(
        tmp_path, f"--cofe-run={pipeline_runs['noisy']}", f"--cofe-baseline={pipeline_runs['base']}"
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_plugin_is_registered_as_a_pytest11_entry_point(pipeline_runs, tmp_path):
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"]["pytest11"]
    assert declared == {"cofe": "cofe.check.pytest_plugin"}
    # pytest finds it through the entry point alone (as after pip install): a distribution
    # declaring just that entry point, on the path of a pytest given no -p
    info = tmp_path / "site" / "cofe_entry_point_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: cofe-entry-point-probe\nVersion: 0\n"
    )
    (info / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{k} = {v}\n" for k, v in declared.items())
    )
    (tmp_path / "test_rag.py").write_text(
        "def test_gate(cofe_check):\n    assert cofe_check().passed\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(tmp_path / "site"), str(REPO), os.environ.get("PYTHONPATH", "")]
        ),
    }
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--cofe-run={pipeline_runs['noisy']}",
            f"--cofe-baseline={pipeline_runs['base']}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr
