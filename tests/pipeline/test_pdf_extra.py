"""The ``[pdf]`` extra installs what reading a PDF's text layer really imports.

unstructured-inference is installed without its dependencies (they would pull a CUDA torch),
so the extra must name every package its modules import on the "fast" path. The modules
are the ones a real parse loads; their module-level imports are read from their source.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from cofe.pipeline._parse import pdf_hint
from tests.conftest import REPO
from tests.pipeline.test_parse import _write_pdf

pytest.importorskip("unstructured_inference", reason="installed by the README's test command")

_LOADED = """
import json, sys
from pathlib import Path
from cofe.pipeline._parse import parse_file
doc = parse_file(Path(sys.argv[1]), "x.pdf")
assert "Madrid" in doc.text, doc.text
print(json.dumps([m.__file__ for name, m in list(sys.modules.items())
                  if name.split(".")[0] == "unstructured_inference" and getattr(m, "__file__", None)]))
"""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(extra: str) -> set[str]:
    """Every distribution ``pip install "cofe[extra]"`` brings: cofe's requirements, then
    theirs (as installed here), extras included."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [Requirement(r) for r in project["dependencies"]]
    extras, seen_extras = [extra], set()
    while extras:
        name = extras.pop()
        if name in seen_extras:
            continue
        seen_extras.add(name)
        for text in project["optional-dependencies"][name]:
            req = Requirement(text)
            if req.name == "cofe":
                extras.extend(req.extras)
            else:
                todo.append(req)
    found: set[str] = set()
    while todo:
        req = todo.pop()
        key = (_canonical(req.name), tuple(sorted(req.extras)))
        if key in found:
            continue
        found.add(key)
        try:
            requires = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            envs = [{"extra": e} for e in req.extras] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(env) for env in envs):
                todo.append(sub)
    return {name for name, _ in found}


def _module_level_imports(path: str) -> set[str]:
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:  # what importing the module imports (not inside functions)
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.slow
def test_the_pdf_extra_names_every_package_the_fast_pdf_path_imports(tmp_path):
    pdf = tmp_path / "x.pdf"
    _write_pdf(pdf, "Madrid is the capital of Spain.")
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, str(pdf)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout.strip().splitlines()[-1])
    assert files, "no module of unstructured-inference was loaded"
    modules = set().union(*map(_module_level_imports, files))
    modules -= set(sys.stdlib_module_names) | {"unstructured_inference", "__future__"}
    providers = md.packages_distributions()
    needed = {_canonical(d) for m in modules for d in providers.get(m, [m])}
    missing = needed - _declared("pdf")
    assert not missing, f"unstructured-inference imports {sorted(missing)}: add them to [pdf]"


def test_a_missing_pdf_dependency_is_named() -> None:
    message = pdf_hint(ModuleNotFoundError("No module named 'scipy'", name="scipy"))
    assert "needs scipy" in message and "pip install scipy" in message
    assert "unstructured-inference" not in message
    message = pdf_hint(ModuleNotFoundError("No module named 'cv2'", name="cv2"))
    assert "pip install opencv-python-headless" in message
    inference = ModuleNotFoundError(
        "No module named 'unstructured_inference'", name="unstructured_inference"
    )
    assert "pip install --no-deps unstructured-inference==1.6.14" in pdf_hint(inference)


_WITHOUT_SCIPY = """
import sys
from pathlib import Path
sys.modules["scipy"] = None  # as if scipy were not installed
from cofe.pipeline._parse import parse_documents
parsed = parse_documents(Path(sys.argv[1]))
assert not parsed.documents
print(parsed.problems[0].message)
"""


@pytest.mark.slow
def test_parsing_a_pdf_names_the_module_that_is_missing(tmp_path) -> None:
    pdf = tmp_path / "docs" / "x.pdf"
    pdf.parent.mkdir()
    _write_pdf(pdf, "Madrid is the capital of Spain.")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SCIPY, str(pdf.parent)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    message = done.stdout.strip().splitlines()[-1]
    assert "needs scipy" in message and "pip install scipy" in message, message
    assert "unstructured-inference" not in message, message
