"""`cofe --help` and `import cofe` load no heavy library (pandas, numpy, the matcher's C
extensions, the LLM client, the charts' jinja2): what a command needs loads when it
runs. Measured in benchmarks/startup.py; here only what is imported, which cannot flake."""

import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLE_RUN, REPO

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "rapidfuzz",
    "ahocorasick",
    "openai",
    "httpx",
    "jieba",
    "jinja2",
)

PROBE = """
import sys
{code}
heavy = [m for m in {heavy!r} if m in sys.modules]
print(",".join(heavy) or "none")
"""


@pytest.mark.parametrize(
    "code",
    [
        "import cofe",
        "from cofe.cli import build_parser; build_parser()",
        "from cofe.cli import main\ntry:\n    main(['score', '--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_start_up_loads_no_heavy_library(code):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "none", done.stdout


def test_choices_spelt_in_the_cli_agree_with_their_homes():
    from cofe.cli import _import, _report, _score, build_parser
    from cofe.compare import ALL
    from cofe.importers import IMPORTERS
    from cofe.matching import MatchMode
    from cofe.report import MAX_CASES
    from cofe.stages import CoarseScope

    assert tuple(m.value for m in MatchMode) == _score.MODES
    assert tuple(s.value for s in CoarseScope) == _score.COARSE_SCOPES
    assert tuple(sorted(IMPORTERS)) == _import.FORMATS
    assert MAX_CASES == _report.MAX_CASES
    assert build_parser().parse_args(["compare", "a", "b"]).query_type == ALL


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_scoring_a_run_never_loads_pandas(tmp_path, output):
    """`cofe score` writes its tables and prints its report from plain columns: pandas costs
    a quarter of a small run's time (its DataFrames stay for ScoreResult, loaded there)."""
    code = (
        "from cofe.cli import main\n"
        f"assert main(['score', {str(EXAMPLE_RUN)!r}, '--out', {str(tmp_path / 'scores')!r}, "
        f"*{output!r}]) == 0"
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, heavy=("pandas",))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "none", done.stdout[-500:]
    assert (tmp_path / "scores" / "summary.json").exists()


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_scoring_does_not_start_blas_threads_unless_told(tmp_path, given, expected):
    """Scoring calls no BLAS routine: OpenBLAS's pool of a thread per core, started when
    numpy loads, is a twentieth of a small run's CPU for nothing. A user's setting stays."""
    code = (
        "import os\n"
        "from cofe.cli import main\n"
        f"assert main(['score', {str(EXAMPLE_RUN)!r}, '--out', {str(tmp_path / 'scores')!r}]) == 0\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == expected
