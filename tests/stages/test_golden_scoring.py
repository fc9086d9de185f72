"""The scorer writes, byte for byte, what the golden file says (tests/stages/golden_scoring/).

Speed work on the per-sample path must not change a result: both pool shapes (the
question's own material in its pool, and pools of other questions' answers), in both
matching modes, every file of the results folder. A deliberate change of what the scorer
writes rewrites the golden file with make_golden.py, in the commit that makes it."""

import json

from tests.stages.golden_scoring.make_golden import GOLDEN, outputs


def test_the_scorer_writes_the_golden_results_on_both_pool_shapes(tmp_path):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = outputs(tmp_path)
    assert sorted(now) == sorted(golden)
    changed = [
        f"{case}: {name}"
        for case in golden
        for name in sorted(set(golden[case]) | set(now[case]))
        if golden[case].get(name) != now[case].get(name)
    ]
    assert not changed, f"results changed: {changed}"
