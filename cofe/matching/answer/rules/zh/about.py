"""zh-about: "more than" before a counting word or unit says nothing the figure does not."""

from cofe.matching.answer._rules import ContextRule, register

ABOUT = register(
    ContextRule(
        "zh-about",
        "After a figure, 多 / 余 before a counting word or unit is dropped: 70多种 = 70种.",
        "zh",
        reaches=(("有70多种", "种"), ("6万多吨", "ton")),
        misses=(("多种语言", "种"),),
    )
)
