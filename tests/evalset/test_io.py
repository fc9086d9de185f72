from cofe.evalset import EvalSample, read_evalset, write_evalset


def test_round_trip(tmp_path):
    samples = [EvalSample(id=str(i), query=f"q{i}", fine_keywords=[["k"]]) for i in range(3)]
    path = tmp_path / "e.jsonl"
    assert write_evalset(path, samples) == 3
    loaded = read_evalset(path)
    assert loaded.samples == samples and not loaded.problems
    assert loaded.lines == {"0": 1, "1": 2, "2": 3}


def test_bad_lines_name_file_line_and_field_and_keep_the_rest(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(
        '{"id": "a", "query": "ok"}\n'
        "{not json\n"
        '{"id": "b", "query": "q", "query_type": "opinion"}\n'
        "\n"
        '{"id": "a", "query": "again"}\n'
        '["a list"]\n'
        '{"id": "c", "query": "last"}\n',
        encoding="utf-8",
    )
    loaded = read_evalset(path)
    assert [s.id for s in loaded.samples] == ["a", "c"]
    problems = {p.line: p for p in loaded.problems}
    assert set(problems) == {2, 3, 5, 6}
    assert problems[2].file == str(path) and "invalid JSON" in problems[2].message
    assert problems[3].field == "query_type"
    assert problems[5].field == "id" and "duplicate" in problems[5].message
    assert str(problems[3]).startswith(f"{path}:3: query_type:")


def test_torn_last_line_is_reported_as_interrupted(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text('{"id": "a", "query": "ok"}\n{"id": "b", "que', encoding="utf-8")
    loaded = read_evalset(path)
    assert [s.id for s in loaded.samples] == ["a"]
    assert "interrupted" in loaded.problems[0].message and loaded.problems[0].line == 2
