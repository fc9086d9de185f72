"""zh-numerals: Chinese numerals, dates and percentages as digits (cn2an)."""

import contextlib
import re
import warnings
from typing import Any

from cofe.matching.answer._rules import TextRule, register

_CJK_NUMERAL = re.compile(r"[零〇一二三四五六七八九十百千万亿两]")
_CJK_DECIMAL = re.compile(r"[零〇一二三四五六七八九十百千两]+点[零〇一二三四五六七八九]+")
# a numeral that starts with a digit or ten and holds a place (十 百 千): "一百一十", not "万一"
_CJK_NUMERAL_RUN = re.compile(
    r"[一二三四五六七八九十两][零〇一二三四五六七八九]*[十百千]"
    r"[零〇一二三四五六七八九十百千万亿两]*"
)


def _cn2an(text: str) -> str:
    import cn2an  # deferred: loads its tables on first use

    text = text.replace("两", "二")  # cn2an reads 两 only inside a larger numeral
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns about every numeral-like word it leaves
        if "点" in text:  # "十九点五亿": transform leaves a decimal before a scale as words
            text = _CJK_DECIMAL.sub(lambda m: _numeral(m[0], cn2an) or m[0], text)
        with contextlib.suppress(ValueError, KeyError, IndexError):  # unreadable: keep it
            text = str(cn2an.transform(text, "cn2an"))
        if _CJK_NUMERAL_RUN.search(text):  # what transform left: "一百一十千米" (110 km)
            text = _CJK_NUMERAL_RUN.sub(lambda m: _leftover(m[0], cn2an), text)
    return text


def _numeral(run: str, cn2an: Any) -> str | None:
    try:
        value = cn2an.cn2an(run, "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return str(int(value)) if float(value).is_integer() else str(value)


def _leftover(run: str, cn2an: Any) -> str:
    """A numeral run transform did not read: whole, or without a last 千 that begins the
    next word ("一百一十千米": 110, then 千米; 千克 and 千瓦 alike)."""
    whole = _numeral(run, cn2an)
    if whole is not None:
        return whole
    head = _numeral(run[:-1], cn2an) if len(run) > 2 and run[-1] == "千" else None
    return run if head is None else head + run[-1]


NUMERALS = register(
    TextRule(
        "zh-numerals",
        "Chinese numerals, dates, percentages and decimals as digits (cn2an; 两 as 二).",
        "zh",
        _cn2an,
        lambda text: not text.isascii() and _CJK_NUMERAL.search(text) is not None,
        reaches=(
            ("该大学成立于一九九八年。", "该大学成立于1998年。"),
            ("百分之五十的人", "50%的人"),
            ("十九点五亿美元", "19.5亿美元"),
            ("约一百一十千米", "约110千米"),
        ),
        misses=("北京大学", "1998年"),
    )
)
