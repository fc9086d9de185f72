import pytest

from cofe.matching import normalize_cofe_rag, normalize_strict, strict_tokens, surface


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The  Cat, sat.", " the cat sat "),
        ("Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", " fullwidth abc "),  # NFKC
        ("STRASSE straße", " strasse strasse "),  # case folding, not just lower()
        ("8,700 and 1,234,567", " 8700 and 1234567 "),  # thousands separators
        ("1, 234 and 3.14", " 1 234 and 3 14 "),  # a list and a decimal are not thousands
        ("北京大学 in Beijing", " 北 京 大 学 in beijing "),  # CJK character-wise
        ("...!!", ""),
    ],
)
def test_strict(text, expected):
    assert normalize_strict(text) == expected


def test_strict_never_glues_words():
    assert normalize_strict("the cat") not in normalize_strict("thecat is here")
    assert normalize_strict("cat") not in normalize_strict("concatenate")
    assert normalize_strict("北京") in normalize_strict("北京大学")


def test_cofe_rag_reference_cleaning():
    assert normalize_cofe_rag("The Cat, sat!") == "thecatsat"
    assert normalize_cofe_rag("8,700") == "8700"
    assert normalize_cofe_rag("北京 大学") == "北京大学"


def test_tokens_and_surface():
    assert strict_tokens("Super Bowl 50", fold=False) == ["Super", "Bowl", "50"]
    assert surface(["北", "京", "is", "big"]) == "北京 is big"
