"""The README's two set-up commands are the ones CI and users run."""

import re

from tests.conftest import REPO


def _commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", setup)


def test_the_ci_script_runs_exactly_the_readme_test_command() -> None:
    main_command, test_command = _commands()
    ci_lines = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci_lines == [test_command]
    assert "pytest" in test_command and "cofe demo" in main_command
