"""The monitor's subpackages point one way: store < analysis < web < ingest, as the block
in docs/DESIGN.md's "## Layers" section lists them. Every import counts -- at the top of
a module, inside a function, under TYPE_CHECKING -- and a subpackage importing the
``cofe.monitor`` facade counts as importing all of them (the facade imports every one)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

MONITOR = REPO / "cofe" / "monitor"


def monitor_layers(design: str) -> list[str]:
    """The monitor's subpackages as DESIGN.md's "## Layers" section lists them, lowest
    first (its second code block, after the packages')."""
    section = design.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```")[3]
    return [
        line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#")[0].strip()
    ]


def _targets(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "cofe.monitor":  # from cofe.monitor import store (or watch)
                out += [(f"cofe.monitor.{a.name}", node.lineno) for a in node.names]
            else:
                out.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
    return out


def against_the_layers(root: Path, order: list[str]) -> list[str]:
    """Each import of a subpackage that is not below (or the same as) the importer's."""
    rank = {name: i for i, name in enumerate(order)}
    bad = []
    for path in sorted((root / "cofe" / "monitor").glob("*/*.py")):
        home = path.parent.name
        if home not in rank:
            bad.append(f"{path.relative_to(root)}: its subpackage {home} has no layer")
            continue
        for target, line in _targets(ast.parse(path.read_text(encoding="utf-8"))):
            parts = target.split(".")
            if parts[:2] != ["cofe", "monitor"]:
                continue
            where = f"{path.relative_to(root)}:{line}"
            if len(parts) == 2 or parts[2] not in rank:
                if len(parts) == 2 or not parts[2].startswith("_"):
                    bad.append(f"{where}: imports the cofe.monitor facade ({target})")
                continue
            if rank[parts[2]] > rank[home]:
                bad.append(f"{where}: {home} imports {parts[2]}, a layer above it")
    return bad


def test_the_monitor_s_subpackages_point_one_way() -> None:
    order = monitor_layers((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8"))
    assert order == ["store", "analysis", "web", "ingest"]
    folders = sorted(p.name for p in MONITOR.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(order), "a monitor subpackage missing from DESIGN.md's layers"
    bad = against_the_layers(REPO, order)
    assert not bad, "\n".join(bad)


def test_an_upward_import_is_found(tmp_path: Path) -> None:
    for sub in ("store", "web"):
        (tmp_path / "cofe" / "monitor" / sub).mkdir(parents=True)
    (tmp_path / "cofe" / "monitor" / "web" / "_page.py").write_text(
        "from cofe.monitor.store import MonitorStore\n"
    )
    (tmp_path / "cofe" / "monitor" / "store" / "_codec.py").write_text(
        "def f():\n    from cofe.monitor.web._page import x\n    from cofe.monitor import watch\n"
    )
    assert against_the_layers(tmp_path, ["store", "web"]) == [
        "cofe/monitor/store/_codec.py:2: store imports web, a layer above it",
        "cofe/monitor/store/_codec.py:3: imports the cofe.monitor facade (cofe.monitor.watch)",
    ]
