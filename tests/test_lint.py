"""The code base passes ruff check and ruff format (configured in pyproject.toml; the test
extra pins ruff's minor version, so the format changes only when we move it)."""

import subprocess
import sys

from tests.conftest import REPO

TREES = ("cofe", "annotators", "tests", "benchmarks", "examples", "docs/_hooks")


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    # run as a module of this interpreter: a missing ruff fails here instead of skipping
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *TREES],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_is_clean():
    done = ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean():
    done = ruff("format", "--check")
    assert done.returncode == 0, "run `ruff format`:\n" + done.stdout + done.stderr
