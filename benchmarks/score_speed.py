"""CPU seconds of one ``cofe score --mode cofe-rag`` on 1,000 queries, per input shape.

    python benchmarks/score_speed.py [--reference DIR] [--sets others-en,release-en,squad]
                                     [--repeat 5] [--tree DIR ...] [--workdir DIR] [--digest]

Each run is a fresh process (the ``cofe`` console script next to this interpreter, else
``python -m cofe``) scoring a run-log folder that ``benchmarks/reference_speed.py`` builds:
1,000 queries with a pool of 30 chunks each, top_k 4. The shapes:

* ``squad``, ``cmrc``, ``release-en``, ``release-zh``: BM25 pools over the corpus
  (``reference_speed.py``'s sets: the query's own material is usually in its pool);
* ``others-en``, ``others-zh``: the CoFE-RAG release's queries over a corpus of the
  release's reference answers, each query's pool the 30 best of the *other* queries'
  answers (its own left out) and its context the pool's top 4 -- nearly every point is
  missed, so the scorer explains a loss for almost every keyword at every step;
* ``others-squad``: the same over 1,000 shipped SQuAD questions' answers (no checkout
  needed; SQuAD answers are a few words, so its chunks are short).

The release sets need ``--reference`` (a checkout of Alibaba-NLP/CoFE-RAG, see
``benchmarks/data/reference/README.md``). CPU = user + system of the process and its
children (``resource.getrusage(RUSAGE_CHILDREN)`` around it), ``--repeat`` runs, median
and range, in two settings: "bytecode cached" (``PYTHONPYCACHEPREFIX`` in the work folder,
filled by one untimed run, as an installed package has it) and "no bytecode cache" (the
environment as given; with ``PYTHONDONTWRITEBYTECODE``, as on the project's machines,
every run compiles cofe's own modules from source). The floor, ``python -c pass``, is
timed the same way (on these machines a ``.pth`` file of the sandbox imports certifi at
every start-up).

``--tree DIR`` times another cofe source tree (say ``git archive`` of an older commit)
on the same inputs; given more than once, the trees take turns within each repetition
(each run of one tree next to the same run of the other, so a load that changes during
the session falls on both), one column each. ``--digest`` prints a SHA-256 of each set's
whole results folder, so two trees can be shown to write byte-identical results.

``--phases`` says instead where one run's CPU goes: each set is scored ``--repeat`` times
in a fresh process (bytecode cached) whose scoring functions are wrapped in CPU timers
(``time.process_time``: start-up and imports, reading the corpus, the eval set and the
records, the corpus pass, per-sample scoring, writing the folder), the lowest of each part
shown. The timers wrap the driver's names in ``cofe.stages._stream``; a part a tree does
not have is counted in "the rest".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import reference_speed as rs  # noqa: E402

DEFAULT_SETS = ("others-en", "release-en", "squad", "others-squad")
NEEDS_REFERENCE = ("release-en", "release-zh", "others-en", "others-zh")


def _env(tree: Path, cached: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cached is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cached)
    return env


def _cpu(cmd: list[str], env: dict[str, str]) -> float:
    before = os.times()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = os.times()
    if proc.returncode:
        err = proc.stderr.decode("utf-8", "replace")[-3000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err}")
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def _cofe() -> list[str]:
    script = Path(sys.executable).parent / "cofe"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cofe"]


def score_cmd(built: rs.Built, out: Path) -> list[str]:
    return [
        *_cofe(),
        "score",
        str(built.run_dir),
        "--evalset",
        str(built.evalset),
        "--mode",
        "cofe-rag",
        "--candidates",
        str(rs.CANDIDATES),
        "--out",
        str(out),
    ]


def digest(folder: Path) -> str:
    """One SHA-256 over every file of a results folder (names and bytes, in name order)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# the driver's parts, by the names the phase timers wrap: (label, owner in
# cofe.stages._stream, attribute, a generator?)
PHASES = (
    ("reading the corpus (chunks, documents)", None, "read_corpus", False),
    ("reading samples.jsonl (validated)", "RecordIndex", "build", False),
    ("corpus pass (keywords compiled, corpus normalised and scanned)", None, "RunContext", False),
    ("per-sample scoring", None, "score_samples", True),
    ("writing the results folder", "FolderSink", "add_rows", False),
    ("writing the summary", "FolderSink", "finish", False),
)


def _timed(acc: dict[str, float], label: str, function: Any, generator: bool) -> Any:
    """``function`` with its CPU time added to ``acc[label]`` (a generator: each step's)."""
    if generator:

        def steps(*args: Any, **kwargs: Any) -> Iterator[Any]:
            items = function(*args, **kwargs)
            while True:
                start = time.process_time()
                try:
                    item = next(items)
                except StopIteration:
                    acc[label] += time.process_time() - start
                    return
                acc[label] += time.process_time() - start
                yield item

        return steps

    def call(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            acc[label] += time.process_time() - start

    return call


def phase_run(cmd: list[str]) -> dict[str, float]:
    """In this process: ``cofe`` with ``cmd``'s arguments, its CPU per part (``PHASES``)."""
    import contextlib

    import cofe.cli  # the CPU clock started with the interpreter: its start-up counts

    # the timers import the driver before main() runs: a tree whose main() switches
    # pydantic's plugin scan off for `cofe score` gets the switch first, as its command does
    switch = getattr(cofe.cli, "_plugins_off", None)
    with switch(True) if switch else contextlib.nullcontext():
        return _phase_run(cofe.cli.main, cmd)


def _phase_run(main: Callable[[list[str]], int], cmd: list[str]) -> dict[str, float]:
    from cofe.stages import _stream

    imported = time.process_time()
    acc = {label: 0.0 for label, *_ in PHASES}
    for label, owner, name, generator in PHASES:
        holder: Any = getattr(_stream, owner, None) if owner else _stream
        if holder is not None and hasattr(holder, name):
            setattr(holder, name, _timed(acc, label, getattr(holder, name), generator))
    with open(os.devnull, "w") as quiet:
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = quiet
        try:
            main(cmd)
        finally:
            sys.stdout, sys.stderr = stdout, stderr
    total = time.process_time()
    parts = {"start-up and imports": imported, **acc}
    parts["the rest (eval set, shape, report)"] = total - imported - sum(acc.values())
    parts["total"] = total
    return parts


def phases(
    built: rs.Built, out: Path, env: dict[str, str], repeat: int, tree: Path
) -> dict[str, float]:
    """The lowest CPU of each part over ``repeat`` fresh processes scoring with ``tree``'s cofe
    (this script's timers, imported before any cofe module, the tree first on the path)."""
    cmd = score_cmd(built, out)[len(_cofe()) :]
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "from benchmarks.score_speed import phase_run; sys.path.insert(0, sys.argv[2]); "
        "print(json.dumps(phase_run(sys.argv[3:])))"
    )
    runs = []
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", code, str(ROOT), str(tree), *cmd],
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            raise RuntimeError(f"phase run exited {proc.returncode}:\n{proc.stderr[-3000:]}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {part: min(run[part] for run in runs) for part in runs[0]}


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, help="checkout of Alibaba-NLP/CoFE-RAG@7c5ad86")
    ap.add_argument(
        "--sets",
        default=None,
        help=f"default: {','.join(DEFAULT_SETS)} (without --reference: those it does not need)",
    )
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="the cofe source tree to time (default: this one); given twice or more, the "
        "trees are timed in turn within each repetition, so a changing load falls on each",
    )
    ap.add_argument(
        "--workdir", type=Path, default=ROOT / "benchmarks" / "_work" / "reference_speed"
    )
    ap.add_argument("--digest", action="store_true", help="print each results folder's hash")
    ap.add_argument(
        "--phases", action="store_true", help="where one run's CPU goes, part by part (cached)"
    )
    args = ap.parse_args(argv)
    default = [s for s in DEFAULT_SETS if args.reference or s not in NEEDS_REFERENCE]
    sets = [s for s in args.sets.split(",") if s] if args.sets else default
    for s in sets:
        if s not in rs.SETS:
            ap.error(f"unknown set {s!r} (choose from {', '.join(rs.SETS)})")
        if s in NEEDS_REFERENCE and args.reference is None:
            ap.error(f"{s} needs --reference (the release is in the reference checkout)")
    ref = args.reference.resolve() if args.reference else None
    if ref is not None:
        rs.check_reference(ref)
    trees = [tree.resolve() for tree in args.tree or [ROOT]]
    envs = {}  # each tree's (bytecode cached, no bytecode cache)
    for tree in trees:
        cache = args.workdir / f"pycache-{hashlib.sha1(str(tree).encode()).hexdigest()[:8]}"
        envs[tree] = (_env(tree, cache), _env(tree, None))
    label = {tree: tree.name or str(tree) for tree in trees}

    built = {s: rs.build(s, args.queries, args.workdir, ref) for s in sets}
    out = args.workdir / "score-speed-out"
    for tree in trees:
        for b in built.values():  # untimed: fills the bytecode cache
            _cpu(score_cmd(b, out), envs[tree][0])
    if args.phases:
        runs: dict[tuple[str, Path], list[dict[str, float]]] = {}
        for _ in range(args.repeat):  # tree after tree within each repetition
            for name, b in built.items():
                for tree in trees:
                    found = phases(b, out, envs[tree][0], 1, tree)
                    runs.setdefault((name, tree), []).append(found)
        lowest = {
            key: {part: min(r[part] for r in rs_) for part in rs_[0]} for key, rs_ in runs.items()
        }
        print(
            f"\nCPU s per part of `cofe score --mode cofe-rag`, lowest of {args.repeat} "
            f"({', '.join(f'{label[t]} = {t}' for t in trees)})\n"
        )
        columns = list(lowest)
        print("| part | " + " | ".join(f"{n} {label[t]}" for n, t in columns) + " |")
        print("| --- |" + " --- |" * len(columns))
        for part in next(iter(lowest.values())):
            print(f"| {part} | " + " | ".join(f"{lowest[c][part]:.2f}" for c in columns) + " |")
        return 0
    settings = ("cached", "plain")
    floor: dict[tuple[str, Path], list[float]] = {}
    cpu: dict[tuple[str, str, Path], list[float]] = {}
    digests: dict[tuple[str, Path], str] = {}
    for rep in range(args.repeat):  # sets, settings and trees alternate within a repetition
        for setting in settings:
            for tree in trees:
                env = envs[tree][settings.index(setting)]
                floor.setdefault((setting, tree), []).append(
                    _cpu([sys.executable, "-c", "pass"], env)
                )
                for name, b in built.items():
                    cpu.setdefault((name, setting, tree), []).append(_cpu(score_cmd(b, out), env))
                    if rep == 0 and setting == "cached" and args.digest:
                        digests[(name, tree)] = digest(out)
        print(
            f"repetition {rep + 1}: "
            + ", ".join(f"{n}/{s}/{label[t]} {v[-1]:.2f}" for (n, s, t), v in cpu.items()),
            file=sys.stderr,
            flush=True,
        )
    print(
        "\n`cofe score --mode cofe-rag`, CPU s (user + system, with children), "
        f"median (min–max) of {args.repeat} ({', '.join(f'{label[t]} = {t}' for t in trees)})\n"
    )
    heads = [
        f"{label[t]}, {'bytecode cached' if s == 'cached' else 'no bytecode cache'}"
        for s in settings
        for t in trees
    ]
    print("| set | queries × pool | " + " | ".join(heads) + " |")
    print("| --- | --- |" + " --- |" * len(heads))
    cells = [_fmt(floor[(s, t)]) for s in settings for t in trees]
    print("| `python -c pass` (the floor) | – | " + " | ".join(cells) + " |")
    for name, b in built.items():
        cells = [_fmt(cpu[(name, s, t)]) for s in settings for t in trees]
        print(f"| {name} | {len(b.examples):,} × {rs.CANDIDATES} | " + " | ".join(cells) + " |")
    if digests:
        print()
        for (name, tree), d in digests.items():
            print(f"{name} ({label[tree]}): results folder sha256 {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
