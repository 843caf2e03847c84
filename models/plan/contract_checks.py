"""Small checks shared by the contract loader's modules: shapes, known keys, hints."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from txcheck.models.errors import ContractError
from txcheck.models.json_path import PathPart, describe, format_path

__all__ = ["CONTRACT_DOC", "Path", "fail", "got", "hint", "known_keys", "need_list", "need_object"]

Path = tuple[PathPart, ...]
CONTRACT_DOC = "docs/contract.md"
"""Where the contract format is documented; error messages point there."""


def fail(path: Path, problem: str) -> ContractError:
    return ContractError(problem, path=format_path(path))


def need_object(value: Any, path: Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(path, f"{what} must be a JSON object (got {describe(value)})")
    return value


def need_list(value: Any, path: Path, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise fail(path, f"{what} must be a list (got {describe(value)})")
    return value


def known_keys(obj: Mapping[str, Any], known: Collection[str], path: Path, what: str) -> None:
    for key in obj:
        if key not in known:
            expected = ", ".join(repr(k) for k in sorted(known))
            raise fail(
                (*path, key),
                f"unknown key {key!r} in {what} (expected {expected}){hint(key, known)}",
            )


def hint(word: str, choices: Collection[str]) -> str:
    import difflib  # noqa: PLC0415  (only a mistake needs it: loading a contract starts lighter)

    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def got(obj: Mapping[str, Any], key: str) -> str:
    return describe(obj[key]) if key in obj else "nothing"
