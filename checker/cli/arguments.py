"""Argparse types for the numbers every command takes on its command line.

``int()`` and ``float()`` accept more than a user means: ``float("nan")``, ``"inf"``,
``"1e400"`` (infinity) and, for ``int()``, ``"1_000"`` or non-ASCII digits. A NaN time
budget compares false with everything, so it would silently mean "no limit"; an infinite
policy timeout makes the watchdog's timer overflow. These types accept plain decimal
numbers only and reject the rest with a one-line usage error (argparse exits 2).
"""

from __future__ import annotations

import argparse
import math
import re

__all__ = ["MAX_SECONDS", "natural", "positive_int", "positive_seconds"]

MAX_SECONDS = 1_000_000_000.0
"""The longest duration accepted (about 31 years): longer ones overflow the OS timers."""

_INTEGER = re.compile(r"\+?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"\+?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_SHOWN = 40


def _got(text: str) -> str:
    """The user's word as a short, printable literal for the message."""
    shown = text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
    return ascii(shown)


def _integer(text: str, expected: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected {expected} (got {_got(text)})")
    try:
        return int(text)
    except ValueError:  # more digits than Python converts
        raise argparse.ArgumentTypeError(f"expected {expected} (got {_got(text)})") from None


def positive_int(text: str) -> int:
    """An integer of 1 or more."""
    value = _integer(text, "an integer of 1 or more")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer of 1 or more (got {_got(text)})")
    return value


def natural(text: str) -> int:
    """An integer of 0 or more."""
    return _integer(text, "an integer of 0 or more")


def positive_seconds(text: str) -> float:
    """A finite number of seconds, more than 0 and at most ``MAX_SECONDS``."""
    expected = f"a finite number of seconds > 0 and <= {MAX_SECONDS:.0f}"
    if not _DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected {expected} (got {_got(text)})")
    value = float(text)
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"expected {expected} (got {_got(text)})")
    return value
