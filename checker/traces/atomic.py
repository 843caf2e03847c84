"""Writing a file whole or not at all.

The data goes to a temporary file in the destination's folder, is flushed to disk
(``fsync``), then renamed over the destination (``os.replace``). A reader therefore sees
the old file or the new one, never half of one; a failure (a full disk) leaves the old
file as it was and no temporary file behind. The rename replaces a symbolic link itself,
never the file it points to, so a link planted at the destination cannot redirect the
write. The new file gets the usual permissions (0666 less the umask), not the 0600 of a
temporary file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["replacing", "write_atomically"]


def _mode() -> int:
    """0666 less the process umask (read without changing it for good)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable, where the platform allows it (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def replacing(path: str | Path, *, encoding: str | None = None) -> Iterator[IO[Any]]:
    """``with replacing(path) as handle:`` write to ``handle``; ``path`` is replaced when
    the block ends without an error, and left untouched otherwise. Binary unless
    ``encoding`` is given. Raises ``OSError`` when the file cannot be written."""
    destination = Path(path)
    folder = destination.parent
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{destination.name}.", suffix=".tmp")
    try:
        with open(fd, "w" if encoding else "wb", encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode())
        os.replace(temporary, destination)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)


def write_atomically(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data``, whole or not at all (see the module docstring)."""
    with replacing(path) as handle:
        handle.write(data)
