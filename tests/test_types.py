"""The packages listed here pass ``mypy --strict`` (configured in pyproject.toml).

mypy follows imports into packages not yet listed and type-checks them as well, so the
types these packages see are the real ones; ``--follow-imports=silent`` only keeps that
other code's errors out of the verdict. The run has a cache of its own (under
``.mypy_cache``): switching ``--follow-imports`` would otherwise invalidate the cache of a
plain ``mypy`` run by hand, and the other way round.
"""

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import REPO

# Paths (relative to the repository) that are clean under ``mypy --strict``:
# add a package here once it is clean.
CLEAN = ("cofe", "annotators")  # every package: mypy --strict finds nothing

CACHE = REPO / ".mypy_cache" / "test_types"


@pytest.mark.slow  # ~5 s with a warm cache; over a minute from a cold one
def test_clean_packages_pass_mypy_strict():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install mypy pandas-stubs types-tqdm)")
    missing = [path for path in CLEAN if not (REPO / path).exists()]
    assert not missing, f"listed in CLEAN but not in the repository: {missing}"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", f"--cache-dir={CACHE}", *CLEAN],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
