"""Third-party noise on cofe's runs (issue 44, friction 10): LangChain's deprecation warning
about the OpenInference instrumentation's own calls, and transformers' weight-loading bar,
are not shown; the application's and cofe's warnings still are."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from tests.conftest import REPO


def test_a_recorded_langchain_run_prints_no_deprecation_warning_of_the_instrumentation(tmp_path):
    pytest.importorskip("langchain_core")
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.adapters._framework_apps import write_samples

    (tmp_path / "my_quiet_rag.py").write_text(
        "from tests.adapters._framework_apps import lcel\n"
        "def build():\n    return lcel(take=2).fn\n",
        encoding="utf-8",
    )
    evalset = write_samples(tmp_path / "evalset.jsonl", 2)
    args = ["--evalset", str(evalset), "--out", str(tmp_path / "run"), "--concurrency", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-m", "cofe", "run", "--pipeline", "my_quiet_rag:build", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "DeprecationWarning" not in done.stderr, done.stderr


def test_only_the_instrumentations_own_deprecations_are_hidden():
    from cofe.adapters._openinference import quiet_instrumentation

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default", DeprecationWarning)  # as LangChain does for its own
        quiet_instrumentation()
        for module in ("openinference.instrumentation._spans", "my_app", "cofe.stages"):
            warnings.warn_explicit(
                f"old API in {module}", DeprecationWarning, "f.py", 1, module=module
            )
        warnings.warn_explicit("a warning", UserWarning, "f.py", 2, module="openinference.x")
    assert sorted(str(w.message) for w in caught) == [
        "a warning",
        "old API in cofe.stages",
        "old API in my_app",
    ]


def test_loading_minilm_draws_no_weight_loading_bar():
    pytest.importorskip("sentence_transformers")
    code = (
        "from cofe.pipeline._embed import Embedder\n"
        "print(Embedder().encode(['a sentence']).shape)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr, done.stderr


def test_the_bar_setting_of_a_program_using_cofe_is_restored():
    hf_logging = pytest.importorskip("transformers.utils.logging")
    from cofe.pipeline._offline import quiet_loading

    hf_logging.enable_progress_bar()
    try:
        with quiet_loading():
            assert not hf_logging.is_progress_bar_enabled()
        assert hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.disable_progress_bar()
