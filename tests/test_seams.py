"""Public seams only: no package reaches into another package's private modules or names.

A package is a folder of ``cofe/`` (``cofe/stages``, ``cofe/results`` ...) or ``annotators``;
what another package may import is what its ``__init__`` exports. The modules at the top
of ``cofe/`` (``cofe._errors``, ``cofe._jsonl`` ...) are the root's shared utilities: any
package may import them, but not their private names. Every import counts, at the top of
a module, inside a function or under TYPE_CHECKING.

KNOWN lists crossings still to be removed (none today): the test fails on a new one, and on
a listed one that is gone (so the list only shrinks).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

KNOWN: set[tuple[str, str, str]] = set()  # (importing file, module, private name or "")


def _package(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The package a module (or a dotted import) belongs to."""
    if parts[0] == "cofe" and len(parts) > 2:
        return parts[:2]
    if parts[0] == "cofe" and len(parts) == 2 and not parts[1].startswith("_"):
        return parts[:2]  # a public subpackage named whole: from cofe.stages import ...
    return parts[:1]


def crossings(root: Path = REPO) -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for path in sorted([*root.glob("cofe/**/*.py"), *root.glob("annotators/**/*.py")]):
        relative = path.relative_to(root)
        parts = relative.with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        home = _package(parts if len(parts) > 1 else (*parts, "__init__"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            module = tuple(node.module.split("."))
            if module[0] not in ("cofe", "annotators") or _package(module) == home:
                continue
            root_utility = module[0] == "cofe" and len(module) == 2
            if not root_utility and any(m.startswith("_") for m in module[1:]):
                found.add((str(relative), node.module, ""))
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.add((str(relative), node.module, alias.name))
    return found


def test_no_new_private_import_across_packages() -> None:
    new = sorted(crossings() - KNOWN)
    assert not new, (
        "import what the other package exports from its __init__ instead:\n"
        + "\n".join(f"  {file}: from {module} import {name or '...'}" for file, module, name in new)
    )


def test_the_known_list_only_shrinks() -> None:
    gone = sorted(KNOWN - crossings())
    assert not gone, "fixed -- remove from KNOWN in tests/test_seams.py:\n" + "\n".join(
        f"  {entry}" for entry in gone
    )


def test_the_scanner_sees_each_kind_of_crossing(tmp_path: Path) -> None:
    (tmp_path / "cofe" / "a").mkdir(parents=True)
    (tmp_path / "cofe" / "b").mkdir()
    (tmp_path / "cofe" / "a" / "_inner.py").write_text("from cofe.a import public\n")
    (tmp_path / "cofe" / "b" / "user.py").write_text(
        "from cofe._errors import InputError\n"  # the root's utility: allowed
        "from cofe.a import public\n"  # what a exports: allowed
        "from cofe.a._inner import thing\n"  # a's private module: a crossing
        "def later():\n"
        "    from cofe.a import _hidden\n"  # a private name, inside a function: a crossing
        "    from cofe._jsonl import _slow\n"  # a utility's private name: a crossing
    )
    assert crossings(tmp_path) == {
        ("cofe/b/user.py", "cofe.a._inner", ""),
        ("cofe/b/user.py", "cofe.a", "_hidden"),
        ("cofe/b/user.py", "cofe._jsonl", "_slow"),
    }
