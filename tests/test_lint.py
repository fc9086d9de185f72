"""The code base passes ruff (configured in pyproject.toml), which the test extra installs."""

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_is_clean():
    # run as a module of this interpreter: a missing ruff fails here instead of skipping
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "cofe",
            "annotators",
            "tests",
            "benchmarks",
            "examples",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
