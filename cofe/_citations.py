"""Citation marks an answer puts after a fact: a passage's number in brackets ("[1]",
"[2][3]", "[1, 4]", "[2-3]", "【2】"). They carry no words and no figures: the refusal
reader and the answer matcher both read an answer without them."""

from __future__ import annotations

import re

CITATION = re.compile(r"\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]|【\d{1,3}】")
