"""zh-bound-after-figure: "以上" / "以下" bound a figure only right after it ("3分以下")."""

from cofe.matching.answer._rules import ContextRule, register

# elsewhere they are "the above" / "the following" ("以上措施"), words like any other
BOUND_AFTER_FIGURE = register(
    ContextRule(
        "zh-bound-after-figure",
        "以上 / 以下 are a bound (> / <) only within three tokens after a figure.",
        "zh",
        reaches=(("3分以下", "<"), ("100人以上", ">")),
        misses=(("以上措施很好", ">"),),
    )
)
