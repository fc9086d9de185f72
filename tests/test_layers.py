"""Layers point one way: no package of cofe imports one above it, and none are in a cycle.

The layers are written in docs/DESIGN.md ("## Layers"), lowest first; this test reads them
there, so the document and the code cannot disagree. A package may import only packages
of lower layers (the root's utilities, ``cofe/_*.py``, are the lowest and import no
package). Every import counts: at the top of a module, inside a function (a lazy import
kept for start-up time still points somewhere), under TYPE_CHECKING, and the homes a
``lazy_names`` table loads by name. ``cofe/__init__.py`` and ``cofe/__main__.py`` are the
facade above everything and are not checked.

ALLOWED lists the upward imports kept on purpose, each with its reason; the test fails on
one not listed, and on a listed one that is gone (so the list only shrinks).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = "_root"  # the root's utility modules, one layer

# (importing file, imported package): why it stays
ALLOWED: dict[tuple[str, str], str] = {
    ("cofe/evalset/importers/__init__.py", "importers"): (
        "the importers' old import path, kept for users' code: it re-exports cofe.importers"
    ),
}


def layers(design: str) -> list[list[str]]:
    """The layers of docs/DESIGN.md's "## Layers" section, lowest first."""
    section = design.split("\n## Layers\n", 1)[1]
    block = section.split("```", 2)[1]
    out = []
    for line in block.splitlines():
        names = line.split("#", 1)[0].replace(",", " ").split()
        if names:
            out.append(names)
    return out


def _unit(dotted: str) -> str | None:
    """The package a dotted module name belongs to (``stages``, ``_root``), None outside cofe
    or for the facade."""
    parts = dotted.split(".")
    if parts[0] != "cofe" or len(parts) == 1:
        return None
    return ROOT if parts[1].startswith("_") else parts[1]


@cache  # read once per tree: the tests below share it
def imports(root: Path = REPO) -> dict[tuple[str, str], list[int]]:
    """Every (file, imported package) of cofe's modules, with the lines it is imported on."""
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for path in sorted(root.glob("cofe/**/*.py")):
        relative = path.relative_to(root)
        if relative.parts[1:] in (("__init__.py",), ("__main__.py",)):
            continue  # the facade
        home = _unit(".".join(relative.with_suffix("").parts))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = any(
            isinstance(node, ast.Name) and node.id == "lazy_names" for node in ast.walk(tree)
        )
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                targets = [node.module]
                if node.module == "cofe":  # from cofe import stages
                    targets += [f"cofe.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif (
                lazy
                and isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"cofe(\.\w+)+(:\w+)?", node.value)
            ):
                targets = [node.value.split(":")[0]]  # a home lazy_names loads by name
            for target in targets:
                unit = _unit(target)
                if unit is not None and unit != home:
                    found[(str(relative), unit)].append(
                        node.lineno if hasattr(node, "lineno") else 0
                    )
    return found


def _packages(root: Path) -> set[str]:
    return {p.name for p in (root / "cofe").iterdir() if (p / "__init__.py").exists()} | {ROOT}


def upward(root: Path = REPO, order: list[list[str]] | None = None) -> dict[tuple[str, str], str]:
    """Each import of a package not in a lower layer, with what it breaks."""
    order = order or layers((root / "docs" / "DESIGN.md").read_text(encoding="utf-8"))
    rank = {name: i for i, names in enumerate(order) for name in names}
    bad = {}
    for (file, unit), lines in imports(root).items():
        home = _unit(".".join(Path(file).with_suffix("").parts))
        assert home is not None
        if home not in rank or unit not in rank:
            continue  # test_every_package_has_a_layer names it
        if rank[unit] >= rank[home]:
            where = "the same layer as" if rank[unit] == rank[home] else "a layer above"
            bad[(file, unit)] = f"line {lines[0]}: {unit} is {where} {home}"
    return bad


def cycles(root: Path = REPO) -> list[list[str]]:
    """Groups of packages that import each other, directly or around a loop."""
    graph: dict[str, set[str]] = defaultdict(set)
    for file, unit in imports(root):
        if (file, unit) not in ALLOWED:
            home = _unit(".".join(Path(file).with_suffix("").parts))
            assert home is not None
            graph[home].add(unit)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_cycle_between_packages() -> None:
    found = cycles()
    assert not found, "packages importing each other (move the code to where it belongs):\n" + (
        "\n".join("  " + " <-> ".join(group) for group in found)
    )


def test_no_package_imports_upward() -> None:
    new = {key: why for key, why in upward().items() if key not in ALLOWED}
    assert not new, (
        "an import against the layers of docs/DESIGN.md (move the code down, pass what it "
        "needs in, or -- if the package belongs higher -- move it up in the list):\n"
        + "\n".join(f"  {file}: {why}" for (file, _), why in sorted(new.items()))
    )


def test_the_allowed_list_only_shrinks() -> None:
    gone = sorted(set(ALLOWED) - set(upward()))
    assert not gone, "no longer imported upward -- remove from ALLOWED:\n" + "\n".join(
        f"  {entry}" for entry in gone
    )


def test_every_package_has_a_layer() -> None:
    listed = [name for names in layers((REPO / "docs" / "DESIGN.md").read_text()) for name in names]
    assert len(listed) == len(set(listed)), "a package listed twice in docs/DESIGN.md's layers"
    assert set(listed) == _packages(REPO), (
        f"docs/DESIGN.md's layers: missing {sorted(_packages(REPO) - set(listed))}, "
        f"gone {sorted(set(listed) - _packages(REPO))}"
    )


def test_the_scanner_sees_each_kind_of_import(tmp_path: Path) -> None:
    for package in ("low", "high", "other"):
        (tmp_path / "cofe" / package).mkdir(parents=True)
        (tmp_path / "cofe" / package / "__init__.py").write_text("")
    (tmp_path / "cofe" / "_util.py").write_text("from cofe.high import thing\n")  # root: upward
    (tmp_path / "cofe" / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from cofe.other import T\n"  # a type only: still a dependency
        "def later():\n"
        "    from cofe.high import thing\n"  # inside a function: still upward
    )
    (tmp_path / "cofe" / "low" / "b.py").write_text(
        "from cofe._lazy import lazy_names\n"
        "__getattr__, __dir__ = lazy_names(__name__, {'x': 'cofe.high._x:y'}, ['x'])\n"
    )
    (tmp_path / "cofe" / "high" / "c.py").write_text("import cofe.low.a\nfrom cofe import _util\n")
    (tmp_path / "cofe" / "other" / "d.py").write_text("from cofe.low import a\n")
    order = [[ROOT], ["low"], ["other"], ["high"]]
    found = upward(tmp_path, order)
    assert set(found) == {
        ("cofe/_util.py", "high"),
        ("cofe/low/a.py", "high"),
        ("cofe/low/a.py", "other"),
        ("cofe/low/b.py", "high"),
    }
    assert sorted(map(tuple, cycles(tmp_path))) == [(ROOT, "high", "low", "other")]


def test_layers_are_read_from_the_design_document() -> None:
    text = "x\n## Layers\nwords\n```\n_root   # utilities\nchain, charts\n\nstages\n```\n## Next\n"
    assert layers(text) == [[ROOT], ["chain", "charts"], ["stages"]]
