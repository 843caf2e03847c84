"""Schema regular expressions, run in time linear in the text they are matched against.

``pattern`` and ``patternProperties`` are ECMA-262 regular expressions (JSON Schema says
so). Python's ``re``, which jsonschema uses, backtracks: ``^(a+)+$`` takes seconds on 26
letters and doubles with each one more, on text a model chose. txcheck runs every pattern
instead on jsonschema-rs's translation of ECMA-262 into Rust's ``regex`` crate with
``RegexOptions`` (an automaton: no backtracking, linear time), the same engine the fast
path uses (docs/decisions/010-linear-time-patterns.md). Its reading is ECMA-262's: ``\\d``
is ``[0-9]``, ``$`` is the end of the text (not before a final newline), ``[[:digit:]]``
is a class of ``[:digt`` then ``]``.

What that engine cannot run (look-around, backreferences, and the few ECMA-262 forms the
translation refuses) is refused when the contract loads (``pattern_problem``), never
half-run. A string holding a lone surrogate, which the engine cannot take, is matched
with each one replaced by U+FFFD (one character either way).

Without jsonschema-rs (an installation that lacks its wheel) patterns fall back to Python's
``re``, unbounded; the docs say so.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

from txcheck.models.plan.rust_engine import engine

__all__ = ["is_regex", "pattern_problem", "search"]

_Matcher = Callable[[str], bool]
_COMPILED: dict[str, _Matcher | None] = {}  # pattern -> its matcher, None when refused
_LIMIT = 4096
_LOOK_AROUND = re.compile(r"\(\?<?[=!]")
_BACKREFERENCE = re.compile(r"\\[1-9]|\\k<")


def _compile(pattern: str) -> _Matcher | None:
    """The linear-time matcher of ``pattern``; ``None`` when the engine refuses it."""
    if pattern in _COMPILED:
        return _COMPILED[pattern]
    rs = engine()
    matcher: _Matcher | None
    if rs is None:  # pragma: no cover - exercised where jsonschema-rs is absent
        matcher = _python(pattern)
    else:
        try:
            validator = rs.Draft202012Validator(
                {"pattern": pattern}, pattern_options=rs.RegexOptions()
            )
        except Exception:
            matcher = None
        else:
            matcher = validator.is_valid
    if len(_COMPILED) >= _LIMIT:
        _COMPILED.clear()
    _COMPILED[pattern] = matcher
    return matcher


def _python(pattern: str) -> _Matcher | None:  # pragma: no cover - without jsonschema-rs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            compiled = re.compile(pattern)
        except re.error:
            return None
    return lambda text: compiled.search(text) is not None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be run (one clause for an error message), or ``None``."""
    if _compile(pattern) is not None:
        return None
    if _LOOK_AROUND.search(pattern):
        what = (
            "uses look-around ('(?=', '(?!', '(?<=', '(?<!'), which txcheck's engine does not run"
        )
    elif _BACKREFERENCE.search(pattern):
        what = "uses a backreference ('\\1', '\\k<name>'), which txcheck's engine does not run"
    else:
        what = "is not a regular expression txcheck's engine accepts"
    return (
        f"pattern {pattern!r} {what}: patterns are ECMA-262 regular expressions, run in "
        "linear time, without look-around or backreferences (see docs/contract.md, 'Patterns')"
    )


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search`` semantics), in time
    linear in ``text``. ``pattern`` must have passed ``pattern_problem``."""
    matcher = _compile(pattern)
    if matcher is None:
        raise ValueError(f"pattern {pattern!r} cannot be run (refused when the contract loads)")
    try:
        return matcher(text)
    except UnicodeEncodeError:  # a lone surrogate: the engine takes UTF-8 only
        return matcher(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


_PARSED: dict[str, bool] = {}  # short texts already judged by ``is_regex``


def is_regex(text: object) -> bool:
    """``format: regex``: whether ``text`` is an ECMA-262 regular expression, as jsonschema-rs
    parses one (its default engine: look-around and backreferences included). Parsing
    matches nothing, so it is quick on any text; the model's text is never compiled with
    Python's ``re``. Non-strings pass, as the format says."""
    if not isinstance(text, str):
        return True
    known = _PARSED.get(text)
    if known is not None:
        return known
    rs = engine()
    if rs is None:  # pragma: no cover - exercised where jsonschema-rs is absent
        return _python(text) is not None
    try:
        rs.Draft202012Validator({"pattern": text})
    except Exception:  # not a regex, or a string the engine cannot take (lone surrogates)
        parsed = False
    else:
        parsed = True
    if len(text) <= 256:
        if len(_PARSED) >= _LIMIT:
            _PARSED.clear()
        _PARSED[text] = parsed
    return parsed
