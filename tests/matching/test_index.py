from cofe.matching import KeywordIndex, UnitIndex, fuzzy_in, normalize_strict


def _index(*keywords):
    index = KeywordIndex()
    ids = [index.add(normalize_strict(k)) for k in keywords]
    return index, ids


def test_scan_finds_overlapping_keywords_once_each():
    index, (cat, the_cat, sat) = _index("cat", "the cat", "sat")
    assert index.add(normalize_strict("CAT")) == cat  # same normalised keyword, same id
    assert index.scan(normalize_strict("The cat sat; the cat sat.")) == {cat, the_cat, sat}
    assert index.scan("") == set()
    assert KeywordIndex().scan(" anything ") == set()


def test_unit_index_postings_and_fuzzy():
    index, (broncos, short) = _index("Denver Broncos", "Denvr")
    texts = ["The Denver Broncos won.", "The Denvr Bronocs lost.", "Nothing here."]
    exact = UnitIndex(texts, index, normalize_strict)
    assert list(exact.units_with(broncos)) == [0] and not exact.has(1, broncos)
    fuzzy = UnitIndex(texts, index, normalize_strict, fuzzy_ratio=0.2)
    assert fuzzy.has(1, broncos) and sorted(fuzzy.units_with(broncos)) == [0, 1]
    assert not fuzzy.has(2, broncos)
    # keywords shorter than fuzzy_min_chars stay exact: fuzzy matching them means nothing
    assert not fuzzy.has(0, short)


def test_fuzzy_in():
    assert fuzzy_in(" denver broncos ", " the denvr broncos won ", 0.15)
    assert not fuzzy_in(" denver broncos ", " the denvr broncos won ", None)
    assert not fuzzy_in(" denver broncos ", " carolina panthers ", 0.15)
