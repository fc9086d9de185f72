from cofe.report import format_table


def test_format_table_aligns_text_left_and_numbers_right():
    table = format_table(
        ["stage", "mean", "n"], [["parse", 1.0, 3], ["generation", 0.12345, 10], ["none", None, 0]]
    )
    lines = table.splitlines()
    assert lines[0] == "stage        mean   n"
    assert lines[2] == "parse       1.000   3"
    assert lines[3] == "generation  0.123  10"
    assert lines[4].split() == ["none", "-", "0"]
