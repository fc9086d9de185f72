"""cofe's core installs without the pipeline extra: importing it (and its command line) needs
none of openai, httpx or httpcore, which come with that extra."""

import subprocess
import sys

from tests.conftest import REPO

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
