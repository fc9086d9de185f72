"""The one rule for identifiers (sample, document, chunk, run ids): not blank.

A whitespace-only id looks empty in every table and report and cannot be told
apart from another; it is refused where records are read. The check is a
regex run by pydantic's core, so it costs nothing noticeable on the hot path.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

BLANK_PATTERN = r"\S"
Identifier = Annotated[str, StringConstraints(min_length=1, pattern=BLANK_PATTERN)]
