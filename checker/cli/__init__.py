"""The ``txcheck`` command: ``main(argv) -> int``, one module per subcommand.

Each subcommand lives in ``checker/cli/cmd_<name>.py`` and exposes ``register(subparsers)``, which
adds its parser and sets ``run`` (``args -> int``) as the parser default. User mistakes
(``InputError``) become a one-line message on stderr and exit code 2, never a traceback;
control characters in it (from a file name, a case or a policy's exception) are escaped.
Each ``cmd_<name>`` module keeps its top level light (argparse only) and imports what it
needs inside ``run``, so start-up costs only what the chosen command uses.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import io
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any, NoReturn

from txcheck.cli.safe_text import one_line
from txcheck.models.errors import InputError, Interrupted, UserCodeError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FOUND",
    "EXIT_INCONCLUSIVE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "HYPOTHESIS_HOME",
    "console_main",
    "hypothesis_home",
    "main",
    "version",
]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
"""Nothing was shown either way (e.g. ``score`` of a file in which no case was scored)."""
EXIT_INTERRUPTED = 130
"""Stopped by SIGINT (128 + 2); SIGTERM during a search exits 143."""

COMMANDS: tuple[str, ...] = (
    "validate",
    "score",
    "evaluate",
    "scenarios",
    "explore",
    "replay",
    "report",
    "import",
    "conform",
)


def version() -> str:
    """The installed distribution's version, from its metadata."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("txcheck")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``: reads the package metadata only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(f"txcheck {version()}\n")
        sys.stdout.flush()  # a full disk shows here, as an output error (exit 2)
        parser.exit(EXIT_OK)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage mistakes in one line, exit 2, and lets a failure to
    write ``--help`` to stdout show (argparse drops it and exits 0)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message, None)} (see --help)\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        if not message:
            return
        if file is None or file is sys.stderr:
            super()._print_message(message, file)  # nothing to do if stderr fails too
            return
        file.write(message)
        file.flush()


SUMMARIES: dict[str, str] = {
    "validate": "verdict for one proposal or many: every violation at every level",
    "score": "strict and legacy score per case, and a summary",
    "evaluate": "two stages: strict score, then each valid proposal run under faults",
    "scenarios": "the 14 named scenarios and 5 positive controls, with result files",
    "explore": "search a policy for a counterexample and shrink it",
    "replay": "re-execute a saved trace",
    "report": "write a trace as a self-contained HTML report",
    "import": "turn benchmark data (BFCL, tau2-bench) into txcheck cases",
    "conform": "check a store implementation against the model, with crashes and races",
}
"""Each command's one-line help, for the commands whose module is not loaded
(tests/test_cli.py keeps these equal to what each module registers)."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``txcheck`` parser. With ``only``, just that command's module is imported and
    registered in full; the others get a stub that lists them in ``--help`` (``only=""``
    registers no module at all)."""
    parser = _Parser(
        prog="txcheck",
        description="Validate LLM tool-call plans and model-check orchestration policies.",
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="print txcheck's version and exit"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"txcheck.cli.cmd_{name}").register(subparsers)
        else:
            subparsers.add_parser(name, help=SUMMARIES[name])
    return parser


def _chosen(argv: Sequence[str]) -> str:
    """The command named in ``argv`` (its first word that is one), or ``""``."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            break
    return ""


SEARCHING: frozenset[str] = frozenset(
    {"explore", "evaluate", "scenarios", "replay", "report", "conform"}
)
"""Commands that may run Hypothesis: its files go under ``HYPOTHESIS_HOME``."""
HYPOTHESIS_HOME = ".txcheck/hypothesis"
"""Where Hypothesis keeps its own files (its Unicode and constants caches), relative to
the current directory: every file txcheck writes unasked lives under ``.txcheck/``. When a
symbolic link is planted in that path, a temporary folder (removed afterwards) is used
instead: nothing is written through the link."""


@contextlib.contextmanager
def _hypothesis_under_txcheck(command: str) -> Iterator[None]:
    """For a command in ``SEARCHING``, Hypothesis' home is ``HYPOTHESIS_HOME`` while it
    runs (set before anything imports Hypothesis' strategies, which write a Unicode cache
    when imported), and what it was afterwards (``main`` may be called in-process).

    Hypothesis is not imported here (about 0.2 s of CPU with its strategies): a
    command that runs no Hypothesis engine never loads it. Until it is loaded, the home is
    given as ``HYPOTHESIS_STORAGE_DIRECTORY``, which Hypothesis reads the first time it
    needs a folder; once it is loaded, ``set_hypothesis_home_dir`` sets it."""
    if command not in SEARCHING:
        yield
        return
    from txcheck.traces.destination import planted_link

    with contextlib.ExitStack() as stack:
        home = HYPOTHESIS_HOME
        if planted_link(home) is not None:  # only caches live there: a fresh one will do
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="txcheck-hypothesis-"))
        previous = None
        if "hypothesis" in sys.modules:
            from hypothesis import configuration

            previous = getattr(configuration, "__hypothesis_home_directory", None)
            configuration.set_hypothesis_home_dir(home)
        variable = os.environ.get(_STORAGE_VARIABLE)
        os.environ[_STORAGE_VARIABLE] = home
        _HOME[0] = home
        try:
            yield
        finally:
            if variable is None:
                os.environ.pop(_STORAGE_VARIABLE, None)
            else:
                os.environ[_STORAGE_VARIABLE] = variable
            if "hypothesis" in sys.modules:  # loaded before, or by the command
                from hypothesis import configuration

                configuration.set_hypothesis_home_dir(previous)
            _HOME[0] = HYPOTHESIS_HOME


_STORAGE_VARIABLE = "HYPOTHESIS_STORAGE_DIRECTORY"
"""Where Hypothesis looks for its home when none was set in the process."""
_HOME = [HYPOTHESIS_HOME]


def hypothesis_home() -> str:
    """Where the running command keeps Hypothesis' files (for the workers it starts)."""
    return _HOME[0]


class _ClosedStdout(io.TextIOBase):
    """What ``sys.stdout`` is when the process was started with it closed (``>&-``):
    writing to it is an output error (``EBADF``), reported like any other."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


def _standard_streams() -> None:
    """A closed stdout or stderr (Python sets them to None) would end in an AttributeError
    traceback, or send the errors meant for stderr to stdout. The null device takes their
    file descriptor (so no file opened later lands on it); a closed stdout fails on the
    first write, a closed stderr is silent."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, _ClosedStdout() if fd == 1 else open(os.devnull, "w"))  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams()
    words = sys.argv[1:] if argv is None else list(argv)
    command = _chosen(words)
    with _hypothesis_under_txcheck(command), _real_interrupts():
        return _main(command, words)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    raise Interrupted


@contextlib.contextmanager
def _real_interrupts() -> Iterator[None]:
    """While a command runs, a real SIGINT raises ``Interrupted`` (a ``KeyboardInterrupt``
    that is ``ControlFlow``): containment of user code lets it through, and reports a
    ``KeyboardInterrupt`` a service or an invariant raises itself as its error. Only when
    SIGINT has Python's default handler (a command's own handling, ``Stopping``, is kept)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _main(command: str, words: list[str]) -> int:
    parser = build_parser(only=command)
    try:
        args = parser.parse_args(words)  # --help and --version write to stdout
    except OSError as error:
        if error.errno not in _OUTPUT_ERRNOS:
            raise
        return _output_failed(command or "", error)
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
    except InputError as error:
        print(f"txcheck {args.command}: error: {one_line(str(error), None)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UserCodeError as error:
        problem = one_line(str(error), None)
        print(f"txcheck {args.command}: {error.kind} error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        if error.errno not in _OUTPUT_ERRNOS:
            raise
        return _output_failed(args.command, error)
    except KeyboardInterrupt:  # before or after a command's own handling of SIGINT
        print(f"txcheck {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EBADF})
"""Errors that writing raises: stdout (or a file) could not take the output (a reader
that left, a full disk, a closed descriptor)."""


def _output_failed(command: str, error: OSError) -> int:
    """One line on stderr (none for a pipe whose reader left, as ``| head`` does on
    purpose), exit 2; stdout is pointed at the null device so the flush at exit stays
    quiet (the Python documentation's recipe for ``BrokenPipeError``)."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if error.errno != errno.EPIPE:
        where = one_line(str(error.filename or "stdout"), None)
        problem = error.strerror or str(error)
        name = f"txcheck {command}" if command else "txcheck"
        print(f"{name}: error: {where}: cannot write ({problem})", file=sys.stderr)
    return EXIT_BAD_INPUT


def console_main() -> NoReturn:
    sys.exit(main())
