import pytest

from cofe._errors import InputError
from cofe.evalset import QueryType
from cofe.importers import import_cofe_rag
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"


def test_english_release_format():
    result = import_cofe_rag(FIXTURES / "cofe_rag_en.json")
    assert len(result.samples) == 3
    first, second, third = result.samples
    assert first.query_type is QueryType.FACTUAL and first.fine_keywords == [["65 W"]]
    assert first.source.doc == "x200_manual.pdf" and first.id == "cofe_rag_en-0"
    assert second.query_type is QueryType.COMPARATIVE and second.meta == {"meta_info": {"page": 3}}
    # a flat keyword list is one point needing all of them; a single coarse string becomes a list
    assert third.fine_keywords == [["power button", "10 seconds"]] and third.coarse_keywords == [
        "X200"
    ]
    # the empty query is reported with its record and field, the others survive
    assert [p.field for p in result.problems] == ["examples[3].query"]


def test_chinese_query_types_are_mapped():
    result = import_cofe_rag(FIXTURES / "cofe_rag_zh.json")
    types = [s.query_type for s in result.samples]
    assert types == [
        QueryType.FACTUAL,
        QueryType.ANALYTICAL,
        QueryType.COMPARATIVE,
        QueryType.TUTORIAL,
        QueryType.OTHER,
    ]
    assert result.samples[-1].meta["original_query_type"] == "观点类"
    assert result.stats["query_types"] == {
        "factual": 1,
        "analytical": 1,
        "comparative": 1,
        "tutorial": 1,
        "other": 1,
    }


def test_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"examples": [\n  {"query": "x",\n  oops}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_cofe_rag(path)
    assert info.value.problem.line == 3 and str(path) in str(info.value)
