"""Start-up cost: CPU seconds of a fresh process that imports cofe or asks a command for help.

    python benchmarks/startup.py [--repeats 5]

Each case runs in a new interpreter (``sys.executable``); the figure is the child's user +
system CPU time (``RUSAGE_CHILDREN``), best of ``--repeats`` -- CPU, not wall time, so other
jobs on the machine barely move it. A bare ``python -c pass`` is printed as the floor.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys

CASES = {
    "python -c pass (the floor)": "pass",
    "import cofe": "import cofe",
    "import cofe.check.pytest_plugin (every pytest session)": "import cofe.check.pytest_plugin",
    "cofe --help": "from cofe.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "cofe score --help": (
        "from cofe.cli import main\ntry:\n    main(['score', '--help'])\nexcept SystemExit:\n    pass"
    ),
    "import cofe; from cofe import score_run (the scorer)": "from cofe import score_run",
}


def cpu_seconds(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"| case | CPU s (best of {args.repeats}) |")
    print("|---|---|")
    for name, code in CASES.items():
        best = min(cpu_seconds(code) for _ in range(args.repeats))
        print(f"| {name} | {best:.3f} |", flush=True)


if __name__ == "__main__":
    main()
