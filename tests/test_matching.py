"""Typed equality, argument diffs, idempotency-key rules and the optimal alignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest

from txcheck.scoring.matching import align, argument_similarity, diff_arguments, typed_equal

KEYS = {"create": "key", "charge": "key"}


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (1, "1", False),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, 0, False),
        (None, "", False),
        (None, False, False),
        ("a", "a", True),
        ([1, 2], [1.0, 2], True),
        ([1, 2], [2, 1], False),
        ([1], [1, 1], False),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ({"a": [True]}, {"a": [1]}, False),
        (0.1 + 0.2, 0.3, False),
        ([], {}, False),
    ],
)
def test_typed_equal(a: Any, b: Any, equal: bool) -> None:
    assert typed_equal(a, b) is equal
    assert typed_equal(b, a) is equal


def test_diff_names_each_differing_path_with_types() -> None:
    expected = {"items": [{"sku": "a", "quantity": 1}], "currency": "USD", "note": None}
    got = {"items": [{"sku": "a", "quantity": "1"}], "currency": "USD", "force": True}
    diffs = diff_arguments(expected, got, key_arg=None)
    assert [(d.path, d.kind) for d in diffs] == [
        ("$.force", "extra"),
        ("$.items[0].quantity", "value"),
        ("$.note", "missing"),
    ]
    assert diffs[1].describe() == ('$.items[0].quantity expected the number 1, got the string "1"')
    assert diffs[0].describe() == "$.force not expected, got true"
    assert diffs[2].describe() == "$.note expected null, got nothing"


def test_list_of_other_length_is_one_value_difference() -> None:
    diffs = diff_arguments({"items": [1, 2]}, {"items": [1]}, key_arg=None)
    assert [(d.path, d.kind) for d in diffs] == [("$.items", "value")]


def test_idempotency_key_matches_by_presence_not_value() -> None:
    expected = {"order_id": "o1", "key": "key-from-the-case"}
    assert diff_arguments(expected, {"order_id": "o1", "key": "model-chosen"}, key_arg="key") == ()
    missing = diff_arguments(expected, {"order_id": "o1"}, key_arg="key")
    assert [(d.path, d.kind) for d in missing] == [("$.key", "missing")]
    extra = diff_arguments({"order_id": "o1"}, {"order_id": "o1", "key": "k1"}, key_arg="key")
    assert [(d.path, d.kind) for d in extra] == [("$.key", "extra")]
    # Without the key rule the same value difference is a difference.
    assert diff_arguments(expected, {"order_id": "o1", "key": "x"}, key_arg=None) != ()


def test_similarity_counts_equal_names_over_the_union() -> None:
    assert argument_similarity({"a": 1, "b": 2}, {"a": 1, "c": 3}, key_arg=None) == Fraction(1, 3)
    assert argument_similarity({}, {}, key_arg=None) == 1
    assert argument_similarity({"a": 1}, None, key_arg=None) == 0
    assert argument_similarity({"k": "x"}, {"k": "y"}, key_arg="k") == 1


def _greedy(
    expected: Sequence[tuple[str, Mapping[str, Any]]],
    proposed: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[tuple[int, int]]:
    """Pick the most similar remaining pair first: what a naive aligner does."""
    candidates = sorted(
        (
            (-argument_similarity(e[1], p[1], key_arg=None), i, j)
            for i, e in enumerate(expected)
            for j, p in enumerate(proposed)
            if e[0] == p[0]
        ),
    )
    used_e: set[int] = set()
    used_p: set[int] = set()
    pairs = []
    for _, i, j in candidates:
        if i not in used_e and j not in used_p:
            pairs.append((i, j))
            used_e.add(i)
            used_p.add(j)
    return sorted(pairs)


def test_alignment_is_optimal_where_greedy_is_not() -> None:
    # similarity: e0-p0 3/4, e0-p1 2/4, e1-p0 2/4, e1-p1 0/4.
    expected = [
        ("t", {"a": 1, "b": 1, "c": 1, "d": 1}),
        ("t", {"a": 2, "b": 2, "c": 1, "d": 0}),
    ]
    proposed = [
        ("t", {"a": 1, "b": 1, "c": 1, "d": 0}),
        ("t", {"a": 1, "b": 1, "c": 0, "d": 5}),
    ]
    assert _greedy(expected, proposed) == [(0, 0), (1, 1)]  # total 3/4
    alignment = align(expected, proposed, key_args={})
    assert [(p.expected, p.proposed) for p in alignment.pairs] == [(0, 1), (1, 0)]  # total 1
    assert [d.path for d in alignment.pairs[0].diffs] == ["$.c", "$.d"]
    assert [d.path for d in alignment.pairs[1].diffs] == ["$.a", "$.b"]
    assert not alignment.exact


def test_alignment_pairs_only_same_tool_and_reports_the_rest() -> None:
    expected = [("get", {"id": "1"}), ("put", {"id": "1"})]
    proposed = [("put", {"id": "2"}), ("delete", {"id": "1"})]
    alignment = align(expected, proposed, key_args={})
    assert [(p.expected, p.proposed) for p in alignment.pairs] == [(1, 0)]
    assert alignment.missing == (0,)
    assert alignment.extra == (1,)


def test_unparsed_arguments_still_align_by_name() -> None:
    alignment = align([("get", {"id": "1"})], [("get", None)], key_args={})
    assert [(p.expected, p.proposed) for p in alignment.pairs] == [(0, 0)]
    assert [d.kind for d in alignment.pairs[0].diffs] == ["unparsed"]


def test_ties_keep_the_listed_order_and_swaps_are_out_of_order() -> None:
    same = [("get", {"id": "1"}), ("get", {"id": "1"})]
    alignment = align(same, same, key_args={})
    assert [(p.expected, p.proposed) for p in alignment.pairs] == [(0, 0), (1, 1)]
    assert alignment.out_of_order == ()
    assert alignment.exact

    swapped = align(
        [("a", {}), ("b", {}), ("c", {})], [("b", {}), ("a", {}), ("c", {})], key_args={}
    )
    assert [(p.expected, p.proposed) for p in swapped.pairs] == [(0, 1), (1, 0), (2, 2)]
    assert swapped.out_of_order == (0,)
    assert swapped.exact  # the calls match; only an ordered case fails on the order


def test_distinct_operations_need_distinct_keys() -> None:
    expected = [
        ("create", {"id": "o1", "key": "k-create"}),
        ("charge", {"id": "o1", "key": "k-charge"}),
    ]
    reused = [
        ("create", {"id": "o1", "key": "same-key"}),
        ("charge", {"id": "o1", "key": "same-key"}),
    ]
    alignment = align(expected, reused, key_args=KEYS)
    assert alignment.pairs[0].diffs == ()
    assert [(d.path, d.kind) for d in alignment.pairs[1].diffs] == [("$.key", "key_reused")]
    assert "distinct keys" in alignment.pairs[1].diffs[0].describe()

    distinct = [
        ("create", {"id": "o1", "key": "key-one"}),
        ("charge", {"id": "o1", "key": "key-two"}),
    ]
    assert align(expected, distinct, key_args=KEYS).exact


def test_one_expected_key_needs_one_proposed_key() -> None:
    expected = [("charge", {"id": "o1", "key": "k"}), ("charge", {"id": "o1", "key": "k"})]
    split = [("charge", {"id": "o1", "key": "first"}), ("charge", {"id": "o1", "key": "second"})]
    alignment = align(expected, split, key_args=KEYS)
    assert [[d.kind for d in p.diffs] for p in alignment.pairs] == [[], ["key_split"]]
    kept = [("charge", {"id": "o1", "key": "mine"}), ("charge", {"id": "o1", "key": "mine"})]
    assert align(expected, kept, key_args=KEYS).exact
