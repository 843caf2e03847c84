"""The ``txcheck`` command: ``main(argv) -> int``, one module per subcommand.

Each subcommand lives in ``checker/cmd_<name>.py`` and exposes ``register(subparsers)``, which
adds its parser and sets ``run`` (``args -> int``) as the parser default. User mistakes
(``InputError``) become a one-line message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from txcheck.models.errors import InputError, PolicyError

__all__ = ["EXIT_BAD_INPUT", "EXIT_FOUND", "EXIT_OK", "console_main", "main"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_INPUT = 2

COMMANDS: tuple[str, ...] = ("validate", "score", "evaluate", "scenarios", "explore", "replay")


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage mistakes in one line, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="txcheck",
        description="Validate LLM tool-call plans and model-check orchestration policies.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(f"txcheck.cli.cmd_{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except InputError as error:
        print(f"txcheck {args.command}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except PolicyError as error:
        print(f"txcheck {args.command}: policy error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


def console_main() -> NoReturn:
    sys.exit(main())
