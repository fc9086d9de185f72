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
    done = subprocess.run([sys.executable, "-c", BLOCK], cwd=REPO, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
