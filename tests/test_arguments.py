"""Numbers on the command line: nan, inf, zero, negatives and odd spellings are refused
with a one-line usage error (exit 2) before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from txcheck.cli import main
from txcheck.cli.arguments import MAX_SECONDS, natural, positive_int, positive_seconds

NOT_NUMBERS = ["", "abc", "nan", "NaN", "inf", "-inf", "Infinity", "1_000", "\u0663", " 5", "0x10"]


@pytest.mark.parametrize("text", [*NOT_NUMBERS, "0", "-1", "1e400", "1e10", "-0.5", "0.0"])
def test_positive_seconds_refuses(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="finite number of seconds > 0"):
        positive_seconds(text)


@pytest.mark.parametrize(
    ("text", "value"), [("5", 5.0), ("0.25", 0.25), (".5", 0.5), ("1e3", 1000.0), ("+2", 2.0)]
)
def test_positive_seconds_accepts(text: str, value: float) -> None:
    assert positive_seconds(text) == value
    assert positive_seconds(f"{MAX_SECONDS:.0f}") == MAX_SECONDS


@pytest.mark.parametrize(
    ("parse", "bad"),
    [
        (positive_int, [*NOT_NUMBERS, "0", "-1", "1.5", "1e3", "-0"]),
        (natural, [*NOT_NUMBERS, "-1", "1.5", "1e3", "9" * 5000]),
    ],
)
def test_integers_refuse(parse: Callable[[str], int], bad: list[str]) -> None:
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="expected an integer"):
            parse(text)


def test_integers_accept() -> None:
    assert positive_int("1") == 1 and positive_int("+12") == 12
    assert natural("0") == 0 and natural("007") == 7


def test_the_message_shows_what_was_given_as_printable_ascii() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        positive_seconds("\x1b[2J" + "9" * 100)
    message = str(refused.value)
    assert "\x1b" not in message and "\\x1b[2J" in message and len(message) < 120


OPTIONS = [
    ("explore", "--max-examples", ["0", "-1", "nan", "inf", "1.5"]),
    ("explore", "--max-faults", ["-1", "nan", "inf", "1.5"]),
    ("explore", "--max-shrinks", ["-1", "nan", "inf"]),
    ("explore", "--max-states", ["0", "-1", "nan", "inf", "1e3"]),
    ("explore", "--workers", ["0", "-1", "nan", "inf"]),
    ("explore", "--seed", ["-1", "nan", "inf", "x"]),
    ("explore", "--time-budget", ["0", "-1", "nan", "inf", "1e400"]),
    ("explore", "--policy-timeout", ["0", "-1", "nan", "inf", "-inf"]),
    ("replay", "--policy-timeout", ["0", "-1", "nan", "inf", "-inf"]),
    ("conform", "--clients", ["1", "17", "0", "-1", "nan", "x"]),
]


@pytest.mark.parametrize(("command", "option", "values"), OPTIONS)
def test_every_numeric_option_refuses_bad_numbers(
    command: str, option: str, values: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["trace.json"] if command == "replay" else []
    for value in values:
        with pytest.raises(SystemExit) as stopped:
            main([command, *extra, f"{option}={value}"])
        assert stopped.value.code == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1
        assert captured.err.startswith(f"txcheck {command}: error: argument {option}: expected")
        assert repr(value) in captured.err
