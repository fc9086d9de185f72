"""The code base passes ruff (configured in pyproject.toml)."""

import shutil
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by the test extra")
def test_ruff_is_clean():
    done = subprocess.run(
        ["ruff", "check", "cofe", "annotators", "tests", "benchmarks", "examples"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
