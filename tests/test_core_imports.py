"""cofe's core installs without the pipeline extra: importing it (and its command line) needs
none of openai, httpx or httpcore, which come with that extra."""

import importlib
import os
import subprocess
import sys

import pytest

from cofe.cli import main
from tests.conftest import EXAMPLE_RUN, REPO

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("openai", "httpx", "httpcore"):
            raise ModuleNotFoundError(f"blocked: {name}")
sys.meta_path.insert(0, Block())
import cofe, cofe.cli, cofe.llm, cofe.judges
from cofe.cli import build_parser
build_parser()
print("ok")
"""


def test_cofe_imports_without_the_pipeline_extra():
    done = subprocess.run(
        [sys.executable, "-c", BLOCK], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


MISSING = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "openai":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from cofe.cli import main
sys.exit(main(["judge", sys.argv[1], "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]))
"""


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", MISSING, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip() == 'cofe: error: openai is not installed: pip install -e ".[pipeline]"'
    )


# What `cofe score` leaves unloaded on a run small enough for one process (tests/cli/
# test_fast_start.py covers --help): each was loaded at every start before, and each
# costs 0.01-0.03 s that a 1,000-query scoring would pay for nothing.
NOT_FOR_A_SMALL_SCORING = (
    "tqdm",  # its version lookup; a bar loads it once someone can see it (cofe._progress)
    "multiprocessing",  # a fork pool, only for runs large enough to spread (cofe._parallel)
    "concurrent.futures",  # a thread pool, only for a pipeline or an endpoint
    "subprocess",  # cofe llm serve, by way of its module
    "cofe.cli._judge",  # every other command's module: only the one run is imported
    "cofe.cli._run",
    "cofe.cli._monitor",
    "cofe.cli._llm",
)

SCORE = """
import contextlib, io, os, sys
from cofe.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["score", sys.argv[1], "--out", sys.argv[2]]) == 0
from pydantic.plugin import _loader
print(",".join(m for m in {names!r} if m in sys.modules) or "none")
print(_loader._plugins is None, repr(os.environ.get("PYDANTIC_DISABLE_PLUGINS")))
"""


def test_a_small_scoring_loads_only_what_it_uses(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    code = SCORE.format(names=NOT_FOR_A_SMALL_SCORING)
    done = subprocess.run(
        [sys.executable, "-c", code, str(EXAMPLE_RUN), str(tmp_path / "scores")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, plugins = done.stdout.strip().splitlines()[-2:]
    assert loaded == "none"
    # pydantic never scanned the installed distributions for plugins, and the switch that
    # skipped it is gone again once the command returned (a caller of main keeps its own)
    assert plugins == "True None"


def test_a_plugin_switch_the_user_set_is_kept(tmp_path):
    # an empty value keeps every plugin on: pydantic then scans, as it would without cofe
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": ""}
    done = subprocess.run(
        [sys.executable, "-c", SCORE.format(names=()), str(EXAMPLE_RUN), str(tmp_path / "s")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False ''"


@pytest.mark.parametrize(
    ("argv", "off"),
    [
        (["check", "RUN"], "__all__"),
        (["run", "--evalset", str(EXAMPLE_RUN / "evalset.jsonl"), "--out", "OUT"], None),
    ],
)
def test_plugins_are_off_only_for_commands_that_read_cofe_s_own_files(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], off: str | None
) -> None:
    """`cofe check` validates only cofe's files; `cofe run` calls the user's pipeline, whose
    own pydantic models a plugin may be installed to watch."""
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    module = importlib.import_module(f"cofe.cli._{argv[0]}")
    seen: list[str | None] = []

    def run(args: object) -> int:
        seen.append(os.environ.get("PYDANTIC_DISABLE_PLUGINS"))
        return 0

    monkeypatch.setattr(module, "run", run)
    assert main(argv) == 0
    assert seen == [off] and "PYDANTIC_DISABLE_PLUGINS" not in os.environ
