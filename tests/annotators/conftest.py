from __future__ import annotations

from pathlib import Path

import pytest

PARIS = (
    "Paris is the capital of France and its largest city. Paris hosts the Louvre, the most "
    "visited art museum in the world. The Eiffel Tower in Paris was finished in 1889 for the "
    "World's Fair. Paris is divided into twenty arrondissements arranged in a spiral. "
)
BERLIN = (
    "Berlin is the capital of Germany and its most populous city. Berlin was divided by a wall "
    "from 1961 to 1989. The Brandenburg Gate in Berlin was built in the eighteenth century. "
    "Berlin has more bridges than Venice according to the city tourism office. "
)
CHANGJIANG = "长江是亚洲第一长河，全长6397公里。长江流经青海、西藏、四川等11个省级行政区。长江最终在上海注入东海。长江流域面积约180万平方公里。"


@pytest.fixture
def en_docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "Paris.txt").write_text(PARIS, encoding="utf-8")
    (folder / "Berlin.md").write_text(BERLIN, encoding="utf-8")
    return folder


@pytest.fixture
def zh_docs(tmp_path: Path) -> Path:
    folder = tmp_path / "zh"
    folder.mkdir()
    (folder / "长江.txt").write_text(CHANGJIANG, encoding="utf-8")
    return folder
