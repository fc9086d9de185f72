"""A point is all its fragments: how the fragments' decisions make the point's."""

from cofe.matching import AnswerMatcher, Decision


def _point(answer: str, fragments: list[str]) -> Decision:
    return AnswerMatcher(answer, "What is it?").point([[f] for f in fragments]).decision


def test_a_fragment_stated_otherwise_settles_the_point_whatever_the_others_leave_open():
    # 1892 is stated as 2000 (another year): the point cannot be conveyed whole
    answer = "2000年四川大学与华西医科大学合并后，医院改称四川大学华西医院。"
    assert _point(answer, ["1892年", "在成都创建"]) is Decision.ABSENT


def test_chinese_with_not_one_character_in_the_answer_settles_its_point():
    answer = "华西医院位于成都，规模很大，病人很多。"
    assert _point(answer, ["1892年", "在成都创建"]) is Decision.ABSENT


def test_english_words_with_no_trace_beside_a_fragment_the_answer_touches_stay_open():
    # "turned it down at once" rewords "immediately rejected": no word of it is there
    answer = (
        "Sydney Newman and Donald Wilson turned it down at once, since the show had a rule "
        "against 'bug-eyed monsters'."
    )
    fragments = ["immediately rejected", 'not permitted to contain any "bug-eyed monsters"']
    assert _point(answer, fragments) is Decision.UNDECIDED


def test_a_point_the_answer_does_not_touch_at_all_is_absent():
    assert _point("The weather was mild.", ["massive exodus", "to the cities"]) is Decision.ABSENT
