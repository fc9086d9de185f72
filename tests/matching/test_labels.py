import pytest

from cofe.matching import MatchMode, label_problem, normalize_cofe_rag, normalize_strict


@pytest.mark.parametrize(
    "keyword, bad",
    [
        ("Denver Broncos", False),
        ("5", False),  # numbers are meaningful however short
        ("1898年", False),
        ("北京", False),
        ("!!!", True),
        ("", True),
        ("a", True),
        ("the", True),
        ("of the", True),
        ("的", True),
        ("男", True),  # one CJK character matches nearly everywhere
    ],
)
def test_strict_labels(keyword, bad):
    assert (label_problem(normalize_strict(keyword), MatchMode.STRICT) is not None) is bad


@pytest.mark.parametrize(
    "keyword, bad", [("Denver", False), ("--", True), ("x", True), ("the", True), ("7", False)]
)
def test_cofe_rag_labels(keyword, bad):
    assert (label_problem(normalize_cofe_rag(keyword), MatchMode.COFE_RAG) is not None) is bad
