"""Issue 45, item 18: a JSONL file saved with a UTF-8 BOM (as some editors do) reads its
first line like any other, instead of rejecting it."""

from cofe.evalset import read_evalset


def test_a_utf8_bom_does_not_reject_the_first_record(tmp_path):
    record = '{"id": "q1", "query": "Who?", "fine_keywords": [["Nation"]]}\n'
    path = tmp_path / "evalset.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (record + record.replace("q1", "q2")).encode("utf-8"))
    evalset = read_evalset(path)
    assert [s.id for s in evalset.samples] == ["q1", "q2"]
    assert not evalset.problems
