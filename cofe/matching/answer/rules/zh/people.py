"""zh-people: after a figure the counting words for people are one ("836名" = "836人")."""

from cofe.matching.answer._rules import ContextRule, register

PEOPLE = register(
    ContextRule(
        "zh-people",
        "After a figure, 名 / 位 / 员 count people as 人 does (not after 第: a rank).",
        "zh",
        reaches=(("共836名学生", "人"), ("3位专家", "人")),
        misses=(("获得第3名", "人"),),
    )
)
