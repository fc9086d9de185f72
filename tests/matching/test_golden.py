"""The answer matcher decides as it did on every labelled answer (tests/matching/golden/).

A deliberate change of a decision rewrites the golden file with make_golden.py, in the
commit that makes it, so the diff shows every decision it changed."""

import json

from tests.matching.golden.make_golden import GOLDEN, decisions


def test_every_labelled_point_is_decided_as_the_golden_file_says():
    golden = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    now = list(decisions())
    assert [r["key"] for r in now] == [r["key"] for r in golden]
    changed = [(old, new) for old, new in zip(golden, now, strict=True) if old != new]
    assert not changed, f"{len(changed)} of {len(golden)} points changed, first: {changed[:3]}"
