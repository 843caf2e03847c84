"""Where a command may write a file it was asked for: checked before any work is done.

A path a command writes to (``explore --trace-out``, ``import --out``, ``scenarios --out``'s
``raw_results.jsonl`` and ``summary.json``) is replaced whole (``txcheck.traces.atomic``),
so what was there is gone. ``check_destination`` therefore refuses, in one line naming the
path:

- anything but a regular file: a folder, a named pipe, a device (as root, ``/dev/null``
  would otherwise be replaced by a regular file), a socket, and a symbolic link (the
  rename would replace the link, never write through it, but the user may have meant the
  file it points to) unless ``force``;
- an existing regular file that is not a previous output of the same kind (``Output.ours``
  reads a bounded start of it) unless ``force``: an unrelated file is never lost to a
  typo in a path;
- a folder that does not exist or does not accept new files (a probe file is created and
  removed: the one test of writability that also holds for root).

What txcheck writes unasked (under ``.txcheck/``) must not follow a symbolic link planted
in its path either (a checkout whose ``.txcheck`` points elsewhere): ``planted_link`` finds
one, and its callers write elsewhere or not at all.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs

from txcheck.models.errors import InputError

__all__ = ["Output", "OutputPathError", "check_destination", "planted_link"]


class OutputPathError(InputError):
    """A path a command cannot or must not write its output to."""


@attrs.frozen(kw_only=True)
class Output:
    """What a command writes, for the messages and for telling a previous output apart:
    ``what`` (``"the trace"``), ``kind`` (``"txcheck-trace/1 file"``), the option that
    names the path (``"--trace-out"``) and ``ours(path)``, True for a previous output."""

    what: str
    kind: str
    option: str
    ours: Callable[[str], bool] = attrs.field(eq=False)


_KINDS = (
    (stat.S_ISDIR, "is a folder"),
    (stat.S_ISLNK, "is a symbolic link (it would be replaced, not written through)"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
    (stat.S_ISFIFO, "is a named pipe, not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
)


def _existing(path: str, output: Output, force: bool, error: type[InputError]) -> None:
    """Refuse to replace what is not a previous output (anything but a regular file or,
    with ``force``, a link, never)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as failure:
        raise error(f"cannot use this path: {failure.strerror}", source=path) from None
    for kind, problem in _KINDS:
        if kind(mode) and not (force and stat.S_ISLNK(mode)):
            raise error(
                problem + ("; use --force to replace the link" if stat.S_ISLNK(mode) else ""),
                source=path,
            )
    if stat.S_ISREG(mode) and not force and not output.ours(path):
        raise error(
            f"exists and is not a {output.kind}; not overwritten (use --force to replace "
            f"it, or another {output.option})",
            source=path,
        )


def check_destination(
    path: str | Path,
    output: Output,
    *,
    force: bool = False,
    error: type[InputError] = OutputPathError,
) -> None:
    """Raise ``error`` (one line naming ``path``) unless ``output`` can be written at
    ``path``: a non-empty file path in an existing folder that accepts new files, and no
    existing file there but a previous output (any regular file, or a link, with
    ``force``)."""
    text = str(path)
    if not text:
        raise error(f"{output.what} path is empty; expected a file name", source="''")
    if text.endswith(("/", os.sep)):
        raise error("names a folder; expected a file name", source=text)
    folder = os.path.dirname(text) or "."
    if not os.path.isdir(folder):
        problem = "does not exist" if not os.path.lexists(folder) else "is not a folder"
        raise error(f"the folder {folder} {problem}", source=text)
    _existing(text, output, force, error)
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".txcheck-probe-", suffix=".tmp")
    except OSError as failure:
        raise error(
            f"cannot create a file in the folder {folder} ({failure.strerror or failure})",
            source=text,
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def planted_link(path: str | Path) -> str | None:
    """The first part of ``path`` (``.txcheck``, then ``.txcheck/examples``, ...) that is a
    symbolic link, or None. Parts that do not exist yet end the search: they will be made
    as folders."""
    parts = Path(path).parts
    for end in range(1, len(parts) + 1):
        part = Path(*parts[:end])
        if part.is_symlink():
            return str(part)
        if not part.exists():
            return None
    return None
