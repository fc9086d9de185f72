from cofe.matching import KeywordIndex, UnitIndex, fuzzy_in, normalize_strict
from cofe.matching._index import scan


def _index(*keywords):
    index = KeywordIndex()
    ids = [index.add(normalize_strict(k)) for k in keywords]
    return index, ids


def test_automaton_finds_overlapping_keywords_once_each():
    index, (cat, the_cat, sat) = _index("cat", "the cat", "sat")
    assert index.add(normalize_strict("CAT")) == cat  # same normalised keyword, same id
    automaton = index.automaton([cat, the_cat, sat])
    assert scan(automaton, normalize_strict("The cat sat; the cat sat.")) == {cat, the_cat, sat}
    assert scan(automaton, "") == set()
    assert index.automaton([]) is None and scan(None, " anything ") == set()


def test_indexed_and_searched_keywords_agree():
    index, (broncos, panthers) = _index("Denver Broncos", "Carolina Panthers")
    texts = [
        "The Denver Broncos won.",
        "The Carolina Panthers lost to the Denver Broncos.",
        "Nothing here.",
    ]
    with_postings = UnitIndex(texts, index, normalize_strict, indexed=[broncos])
    lazy = UnitIndex(texts, index, normalize_strict, lazy=True)
    for units in (with_postings, lazy):
        assert list(units.units_with(broncos)) == [0, 1]
        assert list(units.units_with(panthers)) == [1]
        assert units.has(1, panthers) and not units.has(2, broncos)
    assert lazy.text(2) == " nothing here "


def test_fuzzy_matching_only_for_long_keywords():
    index, (broncos, short) = _index("Denver Broncos", "Denvr")
    texts = ["The Denver Broncos won.", "The Denvr Bronocs lost.", "Nothing here."]
    exact = UnitIndex(texts, index, normalize_strict, indexed=[broncos])
    assert list(exact.units_with(broncos)) == [0] and not exact.has(1, broncos)
    fuzzy = UnitIndex(texts, index, normalize_strict, fuzzy_ratio=0.2)
    assert fuzzy.has(1, broncos) and sorted(fuzzy.units_with(broncos)) == [0, 1]
    assert not fuzzy.has(2, broncos)
    # keywords shorter than fuzzy_min_chars stay exact: fuzzy matching them means nothing
    assert not fuzzy.has(0, short)


def test_parallel_scan_gives_the_same_index():
    index, ids = _index(*(f"word{i}" for i in range(50)))
    texts = [" ".join(f"word{(i * 7 + j) % 60}" for j in range(5)) for i in range(12_000)]
    one = UnitIndex(texts, index, normalize_strict, indexed=ids, workers=1)
    two = UnitIndex(texts, index, normalize_strict, indexed=ids, workers=2)
    assert one.all_texts() == two.all_texts()
    assert all(list(one.units_with(i)) == list(two.units_with(i)) for i in ids)


def test_fuzzy_in():
    assert fuzzy_in(" denver broncos ", " the denvr broncos won ", 0.15)
    assert not fuzzy_in(" denver broncos ", " the denvr broncos won ", None)
    assert not fuzzy_in(" denver broncos ", " carolina panthers ", 0.15)


def test_work_meanwhile_is_done_once_whatever_there_is_to_scan():
    index = KeywordIndex()
    ids = [index.add(normalize_strict(k)) for k in ("cat", "dog")]
    for texts, workers in (([], 1), (["a cat"], 1), ([f"dog {i}" for i in range(12_000)], 2)):
        calls = []
        built = UnitIndex(
            texts,
            index,
            normalize_strict,
            indexed=ids,
            workers=workers,
            meanwhile=lambda calls=calls: calls.append(1),
        )
        assert calls == [1]
        built.rebind(index, ids, workers=workers, meanwhile=lambda calls=calls: calls.append(2))
        assert calls == [1, 2]
    lazy = []
    UnitIndex(["a cat"], index, normalize_strict, lazy=True, meanwhile=lambda: lazy.append(1))
    assert lazy == [1]
