"""Opening a user's input file: a regular file only, and a whole one only up to a size.

Every command-line argument that names a file to read (a contract, a proposal, a world
fixture, a trace, a cases or JSON Lines file, an importer's source) is opened here:

- anything but a regular file is refused before it is opened, in one line: a named pipe
  would block the command until something writes to it, a device such as ``/dev/zero``
  never ends, a socket cannot be read at all. The open itself does not block either
  (``O_NONBLOCK``, then checked again on the open descriptor), so a regular file swapped
  for a pipe in between is still refused, never waited on;
- a file read whole (``read_regular``) is refused, unread, when it is larger than its
  limit (``MAX_DOCUMENT_BYTES``, ``MAX_TRACE_BYTES``): its size is known before reading,
  and no more than the limit plus one byte is read if it grows meanwhile. A file read as
  a stream is opened with ``open_regular`` and capped per line by its reader.

The file's own failures (not found, a folder, no permission) are the ``OSError`` that
``open()`` raises, so each caller keeps its own wording for them; what this module refuses
is ``error`` (an ``InputError``) naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from txcheck.models.errors import InputError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_TRACE_BYTES",
    "describe_size",
    "open_regular",
    "read_regular",
]

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""The largest JSON document read whole (64 MiB): a contract, a proposal, a world fixture,
an importer's JSON file."""
MAX_TRACE_BYTES = 256 * 1024 * 1024
"""The largest trace read (256 MiB): a long run under a big contract, with room to spare."""

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_size(size: int) -> str:
    """``size`` bytes in the largest unit that keeps it readable: ``64 MiB``, ``1.5 GiB``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def _refuse(mode: int, source: str, error: type[InputError]) -> None:
    """Raise for anything that is not a regular file (a folder: the usual ``OSError``)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), source)
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise error(
        f"is {kind}, not a regular file; txcheck reads only regular files (a pipe or a "
        "device could block or never end)",
        source=source,
    )


def _too_big(size: int, limit: int, source: str, error: type[InputError]) -> InputError:
    return error(
        f"is {describe_size(size)}, larger than the {describe_size(limit)} limit for "
        "this file; not read",
        source=source,
    )


def open_regular(path: str | os.PathLike[str], *, error: type[InputError] = InputError) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file; ``error`` if it is
    a pipe, a device or a socket; the ``OSError`` of ``open()`` otherwise."""
    source = os.fspath(path)
    _refuse(os.stat(source).st_mode, source, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(source, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse(os.fstat(fd).st_mode, source, error)  # swapped since the stat above?
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_DOCUMENT_BYTES,
    error: type[InputError] = InputError,
) -> bytes:
    """The whole content of the regular file ``path``, at most ``limit`` bytes: larger is
    ``error`` (before reading, or once more than ``limit`` bytes came)."""
    source = os.fspath(path)
    with open_regular(source, error=error) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise _too_big(size, limit, source, error)
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew since
        raise _too_big(len(data), limit, source, error)
    return data
