"""measure-after-number: "5 m", "2 in", "46 c": a symbol that is also a word, after a figure."""

from cofe.matching.answer._rules import ContextRule, register

MEASURE_AFTER_NUMBER = register(
    ContextRule(
        "measure-after-number",
        "A unit symbol that is also a word (m, in, c, t, h, min) is a unit right after a figure.",
        "en",
        reaches=(("a wall 5 m high", "metre"), ("it weighs 5 t", "ton")),
        misses=(("m is a letter", "metre"), ("a t-shirt", "ton")),
    )
)
