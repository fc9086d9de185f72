"""HTML nested deeper than lxml reads: how deep, and its text read by cofe.

unstructured reads HTML with lxml, whose parser (libxml2) stops at 256 levels of nesting
without a word: everything from the first element that deep to the end of the page is
dropped -- a page of 300 nested ``<div>`` came back as "no text found", one with a deep
part in the middle lost that part and all after it. ``read_html`` measures a page's depth
and reads its text with the standard library's parser, which has no depth limit and is
linear in the page's size; the parser uses it in place of lxml's reading when that lost
text (``cofe.pipeline._parse``).
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from typing import Any

LXML_DEPTH = 255  # the deepest element libxml2's HTML parser keeps (it stops at 256)
# elements that hold no others (no end tag), and those whose text is not the page's
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
HIDDEN = frozenset({"script", "style", "template", "noscript", "head"})
# an element of these starts a new paragraph (and ends the one before)
BLOCK = frozenset(
    (
        "address article aside blockquote body caption dd details dialog div dl dt "
        "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html li main "
        "nav ol p pre section summary table tbody td tfoot th thead tr ul br"
    ).split()
)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.counts: Counter[str] = Counter()  # open elements by tag: a linear membership test
        self.depth = 0
        self.hidden = 0
        self.paragraphs: list[str] = []
        self._words: list[str] = []

    def _break(self) -> None:
        text = " ".join(" ".join(self._words).split())
        if text:
            self.paragraphs.append(text)
        self._words = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in BLOCK:
            self._break()
        if tag in VOID:
            return
        self.open.append(tag)
        self.counts[tag] += 1
        self.depth = max(self.depth, len(self.open))
        if tag in HIDDEN:
            self.hidden += 1

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        if tag in BLOCK:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCK:
            self._break()
        if not self.counts[tag]:
            return  # a stray end tag closes nothing
        while self.open:  # an end tag closes what was left open inside it too
            closed = self.open.pop()
            self.counts[closed] -= 1
            if closed in HIDDEN:
                self.hidden -= 1
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self._words.append(data)


def read_html(text: str) -> tuple[int, list[str]]:
    """A page's deepest nesting (elements open at once) and its text as paragraphs: block
    elements (``p``, ``div``, ``li``, ``td``, headings, ...) break paragraphs, scripts and
    styles are left out, whitespace is collapsed."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    reader._break()
    return reader.depth, reader.paragraphs
