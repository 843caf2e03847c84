"""IdentityMemo: computed once per tuple of the very same objects, never for equal copies."""

from __future__ import annotations

from txcheck.models.memo import IdentityMemo


def test_computes_once_per_identical_inputs_and_again_for_equal_copies() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    calls: list[str] = []
    first, copy = ["plan"], ["plan"]  # equal, not identical

    def compute(tag: str) -> int:
        calls.append(tag)
        return len(calls)

    assert memo((first,), lambda: compute("a")) == 1
    assert memo((first,), lambda: compute("b")) == 1
    assert memo((copy,), lambda: compute("c")) == 2
    assert memo((first, copy), lambda: compute("d")) == 3
    assert calls == ["a", "c", "d"]


def test_a_full_memo_starts_over_instead_of_growing() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=2)
    keep = [object() for _ in range(3)]
    for index, value in enumerate(keep):
        memo((value,), lambda index=index: index)
    assert len(memo._entries) == 1  # cleared at the limit, then the third entry
    assert memo((keep[2],), lambda: -1) == 2
    assert memo((keep[0],), lambda: -1) == -1
