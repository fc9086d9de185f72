"""The refusal reader: declines counted in English and Chinese; hedges that answer are not."""

import pytest

from cofe.refusal import Extent, is_refusal, read_decline, refusal_reason, undeclined

DECLINES = [
    ("I am unable to answer this question based on the provided context.", "i am unable to answer"),
    ("I don't know.", "i don't know"),
    ("I’m sorry, but I don’t know.", "i don't know"),  # curly apostrophes
    (
        "The context does not provide information about his birth year.",
        "the context does not provide",
    ),
    ("Based on the provided context, I cannot determine when the war ended.", "i cannot determine"),
    ("Unknown.", "unknown"),
    ("N/A", "n/a"),
    ("I don't know. The context only covers his early life.", "i don't know"),
    (
        "There is no information about this in the context. Please provide more details.",
        "there is no information",
    ),
    ("The answer is not in the context.", "the answer is not in the context"),
    (
        "It is not possible to determine the winner from the context.",
        "it is not possible to determine",
    ),
    ("No information is provided about the author.", "no information is provided"),
    ("无法回答。", "无法回答"),
    ("根据提供的资料，无法确定他的出生年份。", "无法确定"),
    ("上下文中没有提供相关信息。", "上下文中没有提供"),
    ("抱歉，我不知道。", "不知道"),
    ("没有提供相关信息", "没有提供相关信息"),
    ("文中未提及该信息，只提到了他的早年经历。", "文中未提及"),
    ("对不起，根据上下文，我无法回答这个问题。请提供更多信息。", "无法回答"),
    ("未知", "未知"),
]

ANSWERS = [
    "The Broncos won Super Bowl 50.",
    "他出生于1990年。",
    "",
    "   ",
    # a hedge on the way to an answer
    "I don't know the exact year, but it was probably 1990.",
    "I don't know the exact year. The company was founded in the 1990s.",
    "The context does not give the date; however, it says the treaty was signed in spring.",
    "不知道，但可能是1990年。",
    "无法确定具体日期，但文中提到是在春天。",
    "不确定具体年份，大概是1990年。",
    # a decline that is not the gist: it follows the answer
    "Paris. I don't know the population.",
    "北京。不知道人口数量。",
    "The war ended in 1945; I don't know who signed first.",
    # phrases that look like a decline but state a fact
    "There is no evidence that he failed mathematics.",
    "Nobody knows who built it, according to the passage; it is older than the town.",
    "他说：“我不知道这件事。”后来他承认了。",
]


@pytest.mark.parametrize(("answer", "phrase"), DECLINES)
def test_declines_are_refusals_naming_the_phrase(answer, phrase):
    reason = refusal_reason(answer)
    assert reason is not None and f'"{phrase}"' in reason
    assert is_refusal(answer)


@pytest.mark.parametrize("answer", ANSWERS)
def test_answers_and_hedges_are_not_refusals(answer):
    assert refusal_reason(answer) is None
    assert not is_refusal(answer)


# Real models' declines (the forms production answers take), read whole
REAL_DECLINES = [
    ("I'm sorry, but the information provided does not include the 2019 revenue.", "source-lacks"),
    (
        "The provided text does not contain specific information on the merger's terms.",
        "source-lacks",
    ),
    (
        "As an AI, I don't have access to real-time financial data. You may want to check "
        "the company's investor relations page.",
        "no-information-held",
    ),
    (
        "To calculate the operating margin, you would need the operating income and the "
        "revenue for 2019. Please provide those figures.",
        "explains-how",
    ),
    ("根据提供的信息，无法确定公司的净利润。", "zh-cannot"),
    ("文中没有提到他的出生日期。", "zh-source-lacks"),
    ("**Answer:** The context does not specify the plant's capacity.", "source-lacks"),
]


@pytest.mark.parametrize(("answer", "rule"), REAL_DECLINES)
def test_real_model_declines_are_whole_refusals(answer, rule):
    found = read_decline(answer)
    assert found is not None and found.rule == rule and found.extent is Extent.WHOLE


PARTIAL = [
    # a preamble before the decline: the points decide whether anything was answered
    "The question asks about Apple's 2019 revenue. The provided context does not include it.",
    "Paris. I don't know the population.",
    "Revenue was $5.2 billion in 2020. The context does not give the 2019 figure.",
    "不知道具体年份。公司成立于上世纪90年代。",
]


@pytest.mark.parametrize("answer", PARTIAL)
def test_a_decline_among_other_sentences_is_partial(answer):
    found = read_decline(answer)
    assert found is not None and found.extent is Extent.PARTIAL
    assert refusal_reason(answer) is None


ANSWERED = [
    ("I cannot find the exact figure; however, revenue grew about 10%.", "contrast"),
    ("The context does not say. Based on general knowledge, Everest is 8,848 m tall.", "guess"),
    ("The context does not state the margin. Margin = 5 / 20 = 25%.", "computes"),
]


@pytest.mark.parametrize(("answer", "turn"), ANSWERED)
def test_says_it_cannot_then_answers_anyway_is_an_answer(answer, turn):
    found = read_decline(answer)
    assert found is not None and found.extent is Extent.ANSWERED and found.turn == turn
    assert not is_refusal(answer)


def test_quoted_speech_reports_a_decline_it_does_not_make():
    assert read_decline('He wrote: "The data does not include 2019." He was fired in 2020.') is None


def test_headings_before_a_decline_carry_no_content():
    # a model's layout ("## Conclusion") is not a preamble: the decline is the whole answer
    answer = "## Conclusion\n\nThe provided context does not include the 2019 revenue."
    found = read_decline(answer)
    assert found is not None and found.extent is Extent.WHOLE
    # a real preamble still leaves it to the points
    found = read_decline("Paris is large. The provided context does not include its population.")
    assert found is not None and found.extent is Extent.PARTIAL


def test_a_decline_after_only_explanations_still_opens_the_answer():
    # what the source covers, then the decline: read against the points as a decline that
    # opens the answer (a figure of another item does not make it an answer)
    answer = "The context only covers 2020, when the ratio was 1.52%. So I cannot give the change."
    found = read_decline(answer)
    assert found is not None and found.opens and found.extent is Extent.PARTIAL
    found = read_decline("Revenue was $5.2 billion in 2020. The context does not give 2019.")
    assert found is not None and not found.opens


def test_a_list_the_explanation_introduces_is_what_the_context_holds_instead():
    answer = (
        "The passages do not contain the 2019 write-down [2].\n\n"
        "What the passages do contain:\n"
        "- Revenue of $39,383 million in fiscal 2018 vs. $37,728 million in 2017 [1]\n"
        "- Operating income of $13,264 million, yet to be restated [1]\n"
    )
    found = read_decline(answer)
    # no turn ("vs.", "yet" inside the list), the answer concludes by declining, and the
    # items stay for the points to read
    assert found is not None and found.extent is Extent.PARTIAL and found.opens
    assert found.concludes and found.turn == ""
    assert undeclined(answer) == ""  # nothing said besides declining and what it holds instead
    # a list no explanation introduces is said: kept for the points
    said = "The passages do not give 2019.\n- Revenue was $5 million in 2018\n"
    assert "Revenue was $5 million" in undeclined(said)


def test_citation_marks_are_no_words():
    assert (
        read_decline("The provided context does not include the 2019 revenue [1][3].") is not None
    )
    found = read_decline("Revenue was $5 million [1]. The context does not give 2019 [2].")
    assert found is not None and found.extent is Extent.PARTIAL


def test_declining_more_after_an_explanation_only_is_no_answer_standing():
    # "further" keeps an answer given before the decline standing; an explanation of what
    # the passages hold is no such answer
    found = read_decline("提供的资料中只提到它是菊科植物。至于外观特征，资料中并没有进一步说明。")
    assert found is not None and found.extent is not Extent.ANSWERED
    found = read_decline("他出生于1990年。文中没有提供其他信息。")
    assert found is not None and found.extent is Extent.ANSWERED


def test_traditional_script_reads_as_simplified():
    found = read_decline("很抱歉，提供的資料中沒有提及葉盛茂的出生年份。")
    assert found is not None and found.extent is Extent.WHOLE
