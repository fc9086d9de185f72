"""Chinese read in one script: text in traditional script as simplified script.

The refusal rules and the information points of Chinese sets are written in simplified
script, while answers from models tuned for Taiwan or Hong Kong (or translated) come in
traditional script: "沒有提到" is "没有提到", "葉盛茂" is "叶盛茂". OpenCC's t2s conversion is
phrase-aware (it keeps 乾隆 and 著名, which a character table would break) and leaves
simplified text as it is, so both sides of a comparison can go through it. It is loaded
on first need: a run with no Chinese text never imports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import cast

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def _t2s() -> Callable[[str], str]:
    import opencc  # its phrase tables load here, once

    return cast(Callable[[str], str], opencc.OpenCC("t2s").convert)


def simplified(text: str) -> str:
    """The text with its Chinese in simplified script (unchanged when it holds none)."""
    if text.isascii() or _CJK.search(text) is None:
        return text
    return _converted(text)


# the refusal reader folds an answer more than once (its quick test, its sentences) and the
# matcher reads it again: one conversion each
@lru_cache(maxsize=4096)
def _converted(text: str) -> str:
    return _t2s()(text)
