"""zh-simplified: Chinese in traditional script read in simplified script ("葉盛茂" is
"叶盛茂", "資料中沒有" is "资料中没有"), as the points of Chinese sets are written.

Both sides go through it -- the fragment and the answer -- and simplified text comes out
as it went in, so a point meets an answer in either script (``cofe._script``, OpenCC)."""

from cofe._script import simplified
from cofe.matching.answer._rules import TextRule, register

SIMPLIFIED = register(
    TextRule(
        "zh-simplified",
        "Traditional-script Chinese as simplified script (OpenCC t2s, phrase-aware).",
        "zh",
        simplified,
        lambda text: not text.isascii(),
        reaches=(("泰王國國徽由拉瑪六世啟用", "泰王国国徽由拉玛六世启用"), ("葉盛茂", "叶盛茂")),
        misses=("著名的乾隆皇帝", "plain ASCII text"),
    )
)
