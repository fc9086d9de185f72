"""`cofe compare --shared-samples`: runs of different eval sets, on the samples they share."""

from __future__ import annotations

import dataclasses

import pytest

from cofe import score_run
from cofe._errors import InputError
from cofe.cli import main
from cofe.compare import ALL, compare_results
from tests.conftest import EXAMPLE_RUN


def _keep(result, ids, sha):
    """The scoring as if its eval set had held only ``ids`` (another file: another hash)."""
    tables = {t: getattr(result, t) for t in ("scores", "points", "verdicts", "skipped", "recalls")}
    return dataclasses.replace(
        result,
        evalset_sha256=sha,
        **{t: f[f.sample_id.isin(ids)].reset_index(drop=True) for t, f in tables.items()},
    )


@pytest.fixture(scope="module")
def two_evalsets():
    full = score_run(EXAMPLE_RUN)
    ids = list(full.verdicts.sample_id)
    a = _keep(full, ids[:200], "a" * 64)  # 200 samples
    b = _keep(full, ids[150:], "b" * 64)  # 112 samples, 50 of them in a too
    return a, b


def test_different_eval_sets_are_refused_with_the_way_out(two_evalsets):
    a, b = two_evalsets
    with pytest.raises(InputError, match="with --shared-samples"):
        compare_results({"a": a, "b": b})


def test_only_the_shared_samples_are_compared_and_the_rest_counted(two_evalsets):
    a, b = two_evalsets
    comparison = compare_results({"a": a, "b": b}, shared_samples=True, resamples=99)
    assert comparison.shared == 50
    assert comparison.left_out == {"a": 150, "b": 62}
    d = comparison.differences.set_index(["query_type", "step", "measure"])
    assert d.loc[(ALL, "pool", "KeywordRecall@30")].n == 50
    assert comparison.transitions["count"].sum() == 50
    assert comparison.missing == {}
    assert comparison.to_dict()["left_out"] == {"a": 150, "b": 62}


def test_an_id_that_names_another_question_is_not_shared(two_evalsets):
    a, b = two_evalsets
    changed = b.verdicts.copy()
    first = changed.sample_id.isin(a.verdicts.sample_id).idxmax()
    changed.loc[first, "source"] = "another document.txt"
    b = dataclasses.replace(b, verdicts=changed)
    comparison = compare_results({"a": a, "b": b}, shared_samples=True, resamples=99)
    assert comparison.shared == 49


def test_the_command_line_says_how_many_were_left_out(two_evalsets, tmp_path, capsys):
    a, b = two_evalsets
    a.write(tmp_path / "a")
    b.write(tmp_path / "b")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--resamples", "99"]) == 2
    assert "--shared-samples" in capsys.readouterr().err
    assert (
        main(
            [
                "compare",
                str(tmp_path / "a"),
                str(tmp_path / "b"),
                "--resamples",
                "99",
                "--shared-samples",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "comparing the 50 sample(s) every run has; left out: a 150, b 62" in captured.err
    assert "Compared on the 50 sample(s) every run has" in captured.out
