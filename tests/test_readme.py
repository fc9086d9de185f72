"""The README: its two set-up commands are the ones CI and users run, the times it states
are stated with them (and the same in the Quick start page), it stays short, and its links
lead somewhere."""

import re

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
QUICKSTART = (REPO / "docs" / "quickstart.md").read_text(encoding="utf-8")


def _setup(text: str) -> str:
    return text.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]


def _commands(text: str) -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", _setup(text))


def test_the_ci_script_runs_exactly_the_readme_test_command() -> None:
    main_command, test_command = _commands(README)
    ci_lines = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci_lines == [test_command]
    assert "pytest" in test_command and "cofe demo" in main_command


def test_the_quick_start_page_gives_the_same_two_commands() -> None:
    assert _commands(QUICKSTART) == _commands(README)


def test_the_setup_states_how_long_each_command_takes_and_when_the_suite_was_timed() -> None:
    setup = " ".join(_setup(README).split())
    demo, suite = setup.split("```bash", 2)[1:]
    # the demo command: the whole of it, the install and the demo itself
    assert re.search(r"takes about [\d.]+ minutes \(the install about [\d.]+, the demo about", demo)
    # the suite: a measured time, with its date, and the range to expect
    measured = re.search(
        r"([\d.]+) minutes for pytest on 2 cores as measured on (\d{4}-\d\d-\d\d)", suite
    )
    assert measured, "the suite's time, as measured and when"
    low, high = map(int, re.search(r"expect (\d+)-(\d+) minutes", suite).groups())
    assert low <= float(measured.group(1)) <= high
    # the Quick start page says the same times, not other ones
    quick = " ".join(_setup(QUICKSTART).split())
    for stated in re.findall(r"about [\d.]+ (?:minutes|seconds)|[\d.]+ minutes[^;,)]*", setup):
        assert stated in quick, stated


def test_the_readme_stays_a_front_page() -> None:
    assert len(README.splitlines()) <= 250
    # the tour shows the demo's tables and one run's verdicts, as printed
    for heading in ("Loss waterfall", "Verdicts (first stage", "Is the difference real?"):
        assert heading in README


def _slug(heading: str) -> str:
    """The anchor of a heading, as MkDocs (and GitHub, for these) write it."""
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def test_every_link_in_the_readme_leads_to_a_file_and_heading_that_exist() -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(local) > 10
    for link in local:
        path, _, anchor = link.partition("#")
        target = REPO / path
        assert target.exists(), link
        if anchor:
            headings = re.findall(r"(?m)^#+ (.+)$", target.read_text(encoding="utf-8"))
            assert anchor in {_slug(h) for h in headings}, link
