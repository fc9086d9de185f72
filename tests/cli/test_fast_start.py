"""`cofe --help` and `import cofe` load no heavy library (pandas, numpy, the matcher's C
extensions, the LLM client, the charts' jinja2): what a command needs loads when it
runs. Measured in benchmarks/startup.py; here only what is imported, which cannot flake."""

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
    from cofe.evalset.importers import IMPORTERS
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
