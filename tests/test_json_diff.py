"""The deterministic JSON diff the scenario results record."""

from __future__ import annotations

import json

from txcheck.traces.json_diff import json_diff, pointer


def test_added_removed_and_changed_paths_in_path_order() -> None:
    before = {"b": {"x": 1, "gone": [1]}, "a": [1, 2, 3], "same": "s"}
    after = {"a": [1, 5], "b": {"x": 2, "new": {"deep": True}}, "same": "s"}
    assert json_diff(before, after) == [
        {"op": "change", "path": "/a/1", "before": 2, "after": 5},
        {"op": "remove", "path": "/a/2", "before": 3},
        {"op": "remove", "path": "/b/gone", "before": [1]},
        {"op": "add", "path": "/b/new", "after": {"deep": True}},
        {"op": "change", "path": "/b/x", "before": 1, "after": 2},
    ]


def test_equal_values_have_no_diff_whatever_the_key_order() -> None:
    assert json_diff({"a": 1, "b": [{"c": None}]}, {"b": [{"c": None}], "a": 1}) == []


def test_a_boolean_is_not_a_number_and_a_type_change_is_a_change() -> None:
    assert json_diff({"v": 1}, {"v": True}) == [
        {"op": "change", "path": "/v", "before": 1, "after": True}
    ]
    assert json_diff({"v": [1]}, {"v": {"0": 1}}) == [
        {"op": "change", "path": "/v", "before": [1], "after": {"0": 1}}
    ]


def test_pointer_escapes_tilde_and_slash() -> None:
    assert pointer(["acme/key~1", 0]) == "/acme~1key~01/0"
    assert json_diff({}, {"a/b": 1})[0]["path"] == "/a~1b"


def test_the_diff_serialises_identically_for_insertion_orders() -> None:
    one = json_diff({"z": 1, "a": 1}, {"a": 2, "z": 2, "m": 0})
    two = json_diff({"a": 1, "z": 1}, {"m": 0, "z": 2, "a": 2})
    assert json.dumps(one) == json.dumps(two)
    assert [d["path"] for d in one] == ["/a", "/m", "/z"]
