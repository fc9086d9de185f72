"""docs/DESIGN.md's module map names every module and package under cofe/.

The map is the newcomer's way in; a module it does not name is one nobody can find without
reading the tree. A module counts as named when its package's entry in the "Modules" block
(or a section of DESIGN.md that names the module's folder, as "The answer matcher" names
``cofe/matching/answer/``) writes its file name as a word: ``_normalize``, ``parse.py``,
``score`` for ``cli/_score.py``, ``percent-ratio`` for ``rules/common/percent_ratio.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

# folders of one file per item, where a list of the files would only repeat the tree; what
# keeps each item findable is said beside it
ONE_FILE_PER_ITEM = {
    "cofe/measures": "one file per measure: the measure's NAME, tested by the registry",
}


def module_map(design: str) -> tuple[dict[str, str], list[str]]:
    """The Modules block's entries (``_errors.py``, ``stages/`` ...) with their text, and
    the document's sections, each as one string."""
    block = design.split("## Modules", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current: str | None = None
    for line in block.splitlines():
        if entry := re.match(r"^  (\S+)", line):
            current = entry.group(1)
            entries[current] = line
        elif re.match(r"^\S", line):  # ``cofe/`` itself, or a tree beside it (annotators/)
            current = None
        elif current:
            entries[current] += "\n" + line
    return entries, re.split(r"\n## ", design)


def _named(stem: str, text: str) -> bool:
    for spelling in {stem, stem.lstrip("_"), stem.lstrip("_").replace("_", "-")}:
        if re.search(rf"(?<!\w){re.escape(spelling)}(?![\w])", text):
            return True
    return False


def unlisted(root: Path, design: str) -> list[str]:
    entries, sections = module_map(design)
    missing = []
    cofe = root / "cofe"
    for path in sorted(cofe.rglob("*.py")):
        relative = path.relative_to(cofe)
        if relative.parts[0] == "_data" or "templates" in relative.parts:
            continue
        if len(relative.parts) == 1:  # a utility at the top of cofe/
            if path.name not in entries and path.name not in ("__init__.py", "__main__.py"):
                missing.append(f"cofe/{relative}")
            continue
        package = relative.parts[0] + "/"
        if package not in entries:
            missing.append(f"cofe/{relative.parent}/ (its package has no entry)")
            continue
        folder = "cofe/" + "/".join(relative.parts[:-1])
        ancestors = [
            "cofe/" + "/".join(relative.parts[:n]) + "/" for n in range(2, len(relative.parts))
        ]
        region = "\n".join(
            [entries[package], *(s for s in sections if any(a in s for a in ancestors))]
        )
        if path.name == "__init__.py":
            # a subpackage is named by its folder (``importers/``, ``store/``)
            if len(relative.parts) > 2 and not re.search(
                rf"(?<!\w){re.escape(relative.parts[-2])}/", region
            ):
                missing.append(f"{folder}/")
            continue
        if folder in ONE_FILE_PER_ITEM and not path.stem.startswith("_"):
            continue
        if not _named(path.stem, region):
            missing.append(f"cofe/{relative}")
    return missing


def test_the_module_map_names_every_module() -> None:
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    missing = unlisted(REPO, design)
    assert not missing, "add these to docs/DESIGN.md's module map:\n  " + "\n  ".join(missing)


def test_a_module_missing_from_the_map_is_found(tmp_path: Path) -> None:
    (tmp_path / "cofe" / "stages").mkdir(parents=True)
    for name in ("__init__.py", "_config.py", "parse.py", "_new.py"):
        (tmp_path / "cofe" / "stages" / name).write_text("")
    (tmp_path / "cofe" / "_errors.py").write_text("")
    (tmp_path / "cofe" / "_stray.py").write_text("")
    (tmp_path / "cofe" / "orphan").mkdir()
    (tmp_path / "cofe" / "orphan" / "_x.py").write_text("")
    design = (
        "# map\n\n## Modules\n```\ncofe/\n  _errors.py   errors\n"
        "  stages/      _config (ScoreConfig); parse.py (the parse judge)\n"
        "               _newer and stages_new are other names\n```\n"
    )
    assert unlisted(tmp_path, design) == [
        "cofe/_stray.py",
        "cofe/orphan/ (its package has no entry)",
        "cofe/stages/_new.py",
    ]
