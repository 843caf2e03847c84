"""The memos: computed once per tuple of the very same objects, never for equal copies,
and never handed to another object that was given a collected one's id."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest

from txcheck.models.memo import IdentityMemo, WeakIdentityMemo
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_index import contract_index
from txcheck.models.plan.proposal import Call
from txcheck.models.plan.schema_check import compile_contract


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


# -- an id is reused once its object is gone: a memo must never hand out a stale value --------


def _facts_of_short_lived_objects(facts: Callable[[list[int]], int], rounds: int = 200) -> set[int]:
    """Ask ``facts`` about ``rounds`` objects, each dropped before the next is made (so the
    next is often given the same id); every answer must be the object's own."""
    ids = set()
    for number in range(rounds):
        obj = [number]
        ids.add(id(obj))
        assert facts(obj) == number, f"object {number} was handed another object's value"
        del obj
    return ids


def test_a_bare_id_keyed_cache_hands_out_stale_values() -> None:
    """The positive control: the loop below does reuse ids, so a plain ``{id(obj): value}``
    cache returns one object's value for another."""
    cache: dict[int, int] = {}

    def naive(obj: list[int]) -> int:
        return cache.setdefault(id(obj), obj[0])

    with pytest.raises(AssertionError, match="another object's value"):
        _facts_of_short_lived_objects(naive)


@pytest.mark.parametrize("limit", [None, 1, 3, 1024])
def test_an_identity_memo_never_answers_for_an_object_that_reused_an_id(
    limit: int | None,
) -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=limit)
    _facts_of_short_lived_objects(lambda obj: memo.one(obj, lambda held: held[0]))
    detail: IdentityMemo[int] = IdentityMemo(limit=limit)
    _facts_of_short_lived_objects(lambda obj: detail.one(obj, lambda held: held[0], "x"))
    put: IdentityMemo[int] = IdentityMemo(limit=limit)

    def recorded(obj: list[int]) -> int:
        if put.get(obj) is None:
            put.put(obj, obj[0])
        return put.get(obj) or obj[0]

    _facts_of_short_lived_objects(recorded)


class _Box:
    """A weakly referable value, as contracts are."""

    def __init__(self, number: int) -> None:
        self.number = number


def test_a_weak_identity_memo_drops_an_entry_with_its_object() -> None:
    memo: WeakIdentityMemo[_Box, int] = WeakIdentityMemo()
    ids = set()
    for number in range(200):
        box = _Box(number)
        ids.add(id(box))
        assert memo.one(box, lambda held: held.number) == number
        assert box in memo and memo.one(box, lambda held: -1) == number
        del box
        # a young collection is enough (the box is in no cycle): a full one would traverse
        # everything the earlier tests of the session left alive, 200 times
        gc.collect(0)
        assert len(memo) == 0
    assert len(ids) < 200  # ids were reused, and no answer was stale


def test_contract_facts_are_never_another_contracts() -> None:
    """Contracts built and dropped one after another (ids reused): each one's index and
    compiled checks are its own."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    ids = set()
    for number in range(100):
        name = f"tool_{number}"
        contract = Contract(tools={name: Tool(name=name, parameters=schema)})
        ids.add(id(contract))
        assert set(contract_index(contract).roles) == {name}
        compiled = compile_contract(contract)
        assert (
            compiled.check(
                Call(id="c1", name=name, index=0, raw_arguments=None, arguments={"n": 1})
            )
            == []
        )
        del contract, compiled
    assert len(ids) < 100
