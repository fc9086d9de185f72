import math

import pytest

from cofe.measures import (
    BLEU,
    NDCG,
    ChunkIntegrity,
    CoarsePrecision,
    DocPrecision,
    DocRecall,
    KeywordAccuracy,
    KeywordRecall,
    RerankGain,
    RerankLoss,
    RougeL,
    RougeLRecall,
    Unscored,
    parse_measure,
)


def test_names_are_the_cli_spelling():
    assert KeywordRecall(4).name == "KeywordRecall@4" == str(parse_measure("KeywordRecall@4"))
    assert parse_measure("ChunkIntegrity") == ChunkIntegrity()
    assert parse_measure("nDCG@10") == NDCG(10)
    assert hash(KeywordRecall(4)) == hash(parse_measure("KeywordRecall@4"))
    with pytest.raises(ValueError, match="unknown measure"):
        parse_measure("Recall@4")
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_measure("CoarsePrecision")
    with pytest.raises(ValueError, match="at least 1"):
        KeywordRecall(0)


def test_keyword_recall_and_accuracy():
    ranks = [1, 3, None, 5]
    assert KeywordRecall(3).compute(ranks) == 0.5
    assert KeywordRecall().compute(ranks) == 0.75
    assert KeywordAccuracy(5).compute(ranks) == 0.0
    assert KeywordAccuracy(5).compute([1, 5]) == 1.0


def test_coarse_precision():
    assert CoarsePrecision(4).compute([True, False, True, True, False]) == 0.75
    assert CoarsePrecision(4).compute([True]) == 1.0  # fewer than K returned
    assert isinstance(CoarsePrecision(4).compute([]), Unscored)


def test_document_measures():
    docs = ["a", "b", "a", None]
    assert DocRecall(2).compute(docs, {"a", "c"}) == 0.5
    assert DocPrecision(4).compute(docs, {"a"}) == 0.5
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert NDCG(3).compute(docs, {"a"}, relevant_in_corpus=2) == pytest.approx(expected)
    assert NDCG(3).compute(["a", "a"], {"a"}, relevant_in_corpus=2) == pytest.approx(1.0)
    assert isinstance(NDCG(3).compute(docs, {"a"}, relevant_in_corpus=0), Unscored)


def test_rerank_loss_and_gain():
    pool = [2, 7, None]
    context = [1, None, None]
    assert RerankLoss(4).compute(pool, context) == pytest.approx(1 / 3)
    assert RerankGain(4).compute(pool, context) == pytest.approx(0.0)
    assert RerankGain(4).compute([9, 2], [1, 2]) == pytest.approx(0.5)


def test_text_measures():
    reference = "the denver broncos won".split()
    assert RougeL().compute(reference, reference) == pytest.approx(1.0)
    assert RougeL().compute("broncos won".split(), reference) == pytest.approx(2 * (1 * 0.5) / 1.5)
    assert RougeLRecall(4).compute("x the y broncos z won".split(), reference) == pytest.approx(
        0.75
    )
    assert BLEU().compute(reference, reference) == pytest.approx(1.0)
    assert BLEU().compute([], reference) == 0.0
    assert 0 < BLEU().compute("the denver broncos lost".split(), reference) < 1
    assert isinstance(RougeL().compute(["a"], []), Unscored)
    # character-level for Chinese: strict tokens split CJK characters
    assert RougeL().compute(list("北京大学"), list("北京")) == pytest.approx(2 / 3)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

tokens = st.lists(st.sampled_from([*"abcdefg", "北", "京"]), min_size=1, max_size=14)


@settings(max_examples=300, deadline=None)
@given(answer=tokens, reference=tokens)
def test_bleu_equals_nltk_sentence_bleu_with_method1(answer, reference):
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    expected = sentence_bleu([reference], answer, smoothing_function=SmoothingFunction().method1)
    assert BLEU().compute(answer, reference) == pytest.approx(expected, abs=1e-12)
